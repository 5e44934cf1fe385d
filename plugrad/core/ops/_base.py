"""The operand resolver every elementwise op shares: type promotion, weak scalars, devices.

Ops are written as: resolve operands here, call one kernel, wrap the result, and -- when
``recording`` says so -- record a node (``plugrad.core.autograd.record``).
"""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core.errors import check_device
from plugrad.core.factories import tensor
from plugrad.core.grad_mode import _state
from plugrad.core.tensor import Tensor

_SCALARS = (bool, int, float)
_result_with_scalar = _dt.result_with_scalar
_result_type_of = _dt.result_type_of


def to_tensor_like(value, like: Tensor) -> Tensor:
    """A Python scalar or nested list as a tensor on ``like``'s device."""
    return tensor(value, device=like.device)


def tensors_only(op: str, a, b, names=("input", "other")) -> None:
    """PyTorch's ``(Tensor input, Tensor other)`` ops (atan2, hypot, logical_and ...): a
    Python number (or anything not a Tensor) is a TypeError there, not a weak scalar."""
    for name, v in zip(names, (a, b)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(v).__name__}")


def binary_operands(op: str, a, b):
    """Check and convert the operands of a binary elementwise op.

    Returns ``(k, device, dtype, a_data, b_data)`` with both operands in the result dtype;
    a Python scalar stays a scalar (the backends treat it as weak).
    """
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if a.device is not b.device:
                a, b = cpu_scalars_follow(op, a, b)
            if a.dtype is b.dtype:
                return a._k, a.device, a.dtype, a._data, b._data
            dtype = _result_type_of(((a.dtype, not a._data.shape), (b.dtype, not b._data.shape)))
            k = a._k
            ad = a._data if a.dtype is dtype else k.astype(a._data, dtype.name)
            bd = b._data if b.dtype is dtype else k.astype(b._data, dtype.name)
            return k, a.device, dtype, ad, bd
        cls = b.__class__
        if (cls is float or cls is int) and a.dtype.kind == "f":  # float tensor, number
            return a._k, a.device, a.dtype, a._data, b if cls is float else float(b)
        if type(b) in _SCALARS:
            dtype = _result_with_scalar(a.dtype, b)
            k = a._k
            ad = a._data if a.dtype is dtype else k.astype(a._data, dtype.name)
            return k, a.device, dtype, ad, _scalar_as(b, dtype)
        if isinstance(b, (list, tuple)) or hasattr(b, "__array__") or hasattr(b, "item"):
            return binary_operands(op, a, _coerce(b, a))
        raise TypeError(f"{op}: unsupported operand type {type(b).__name__} (expected a "
                        f"Tensor or a number)")
    if isinstance(b, Tensor):
        if type(a) in _SCALARS:
            dtype = _result_with_scalar(b.dtype, a)
            k = b._k
            bd = b._data if b.dtype is dtype else k.astype(b._data, dtype.name)
            return k, b.device, dtype, _scalar_as(a, dtype), bd
        return binary_operands(op, _coerce(a, b), b)
    raise TypeError(f"{op}: expected at least one Tensor, got {type(a).__name__} and "
                    f"{type(b).__name__}")


def cpu_scalars_follow(op: str, a: Tensor, b: Tensor):
    """PyTorch's exception to one device per op: a 0-d tensor on the host joins a tensor on
    another device (``x_cuda * torch.tensor(2.0)``), its value moved there. Here only a
    constant one: a host scalar that requires grad still raises (its gradient would have
    to travel back; move it with ``.to(device)``)."""
    if _host_constant(a) and b.device.type != "cpu":
        return a.to(b.device), b
    if _host_constant(b) and a.device.type != "cpu":
        return a, b.to(a.device)
    check_device(op, a, b)
    return a, b


def _host_constant(t: Tensor) -> bool:
    return not t._data.shape and t.device.type == "cpu" and not (t._rg and _state.enabled)


def _coerce(value, like: Tensor) -> Tensor:
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        return value.item()
    return to_tensor_like(value, like)


def _scalar_as(value, dtype):
    """A Python scalar in the form the result dtype wants (``True * 1.5`` is a float op)."""
    kind = dtype.kind
    if kind == "f":
        return value if type(value) is float else float(value)
    if kind in "iu":
        return _dt.wrap_int(int(value), dtype)
    return bool(value)

