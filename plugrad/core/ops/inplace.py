"""In-place ops (``x.add_(y)``, ``x += y``, ``x[i] = v``, ``zero_``, ``copy_``).

Outside the graph they write into the tensor's own array, so aliases (``.data``,
``detach()``, NumPy views) see the change. When the graph is being recorded, the op is
computed out of place on a snapshot of the tensor, which then takes the result and its
history; the version counter makes any stale saved use of the old values an error.
"""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core.ops._base import DTypeError, ShapeError, Tensor, _state, _wrap, shape_str


def _check_leaf(op, x):
    if x.grad_fn is None and x._rg and _state.enabled:
        raise RuntimeError(f"{op}: a leaf Variable that requires grad is being used in an "
                           f"in-place operation.")


def _snapshot(x):
    """``x`` as it is now, in the graph where ``x`` is, with its own version counter."""
    s = _wrap(x._data, x.dtype, x.device, x._k)
    s.grad_fn = x.grad_fn
    s._output_nr = x._output_nr
    s._rg = x._rg
    if x.grad_fn is None and x._rg:
        s._accum = x._accum
    return s


def _castable(src, dst) -> bool:
    return src.category <= dst.category


def apply_inplace(op, x, compute):
    """Run ``compute(x_like)`` and make ``x`` hold its result."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor")
    _check_leaf(op, x)
    recording = _state.enabled
    src = _snapshot(x) if recording and x._rg else x
    result = compute(src)
    if tuple(result._data.shape) != tuple(x._data.shape):
        raise ShapeError(f"{op}: output with shape {shape_str(x.shape)} doesn't match the "
                         f"broadcast shape {shape_str(result.shape)}")
    if result.dtype is not x.dtype:
        if not _castable(result.dtype, x.dtype):
            raise DTypeError(f"{op}: result type {result.dtype.name} can't be cast to the "
                             f"desired output type {x.dtype.name}")
        result = result.to(x.dtype)
    if result.device is not x.device:
        raise RuntimeError(f"{op}: result is on {result.device}, the tensor on {x.device}")
    if recording and result._rg:
        x._data = result._data
        x.grad_fn = result.grad_fn
        x._output_nr = result._output_nr
        x._rg = True
    else:
        x._data = x._k.assign(x._data, (), result._data)
    x._vc[0] += 1
    return x


def _binary_inplace(name, fn):
    def method(self, other, *args, **kwargs):
        return apply_inplace(name, self, lambda s: fn(s, other, *args, **kwargs))
    method.__name__ = name
    return method


def _unary_inplace(name, fn):
    def method(self, *args, **kwargs):
        return apply_inplace(name, self, lambda s: fn(s, *args, **kwargs))
    method.__name__ = name
    return method


def zero_(x):
    _check_leaf("zero_", x)
    x._data = x._k.assign(x._data, (), 0 if x.dtype.kind != "b" else False)
    x._vc[0] += 1
    if _state.enabled and x.grad_fn is not None:
        x.grad_fn = None
        x._rg = False
    return x


def fill_(x, value):
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ShapeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                             f"with {value.ndim} dimensions.")
        if value._rg and _state.enabled:
            return apply_inplace("fill_", x, lambda s: s * 0 + value.reshape(()))
        value = value.item()
    _check_leaf("fill_", x)
    kind = x.dtype.kind
    v = float(value) if kind == "f" else (bool(value) if kind == "b" else int(value))
    x._data = x._k.assign(x._data, (), v)
    x._vc[0] += 1
    if _state.enabled and x.grad_fn is not None:
        x.grad_fn = None
        x._rg = False
    return x


def copy_(x, src, non_blocking=False):
    """Copy ``src``'s values (broadcast, cast and moved as needed) into ``x``."""
    if not isinstance(src, Tensor):
        from plugrad.core.factories import tensor
        src = tensor(src)
    if src.device is not x.device:
        src = src.to(x.device)
    if src.dtype is not x.dtype:
        src = src.to(x.dtype)

    def compute(s):
        out = src.expand(s.shape) if tuple(src.shape) != tuple(s.shape) else src
        return _passthrough(out)

    if not (_state.enabled and src._rg):
        _check_leaf("copy_", x)
        out = src.expand(x.shape) if tuple(src.shape) != tuple(x.shape) else src
        x._data = x._k.assign(x._data, (), out._data)
        x._vc[0] += 1
        if _state.enabled and x.grad_fn is not None:
            x.grad_fn = None
            x._rg = False
        return x
    return apply_inplace("copy_", x, compute)


def _passthrough(t):
    from plugrad.core.ops.shape import clone
    return clone(t)


def requires_float(op, x):
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: expected a floating tensor, got {x.dtype}")


__all__ = ["apply_inplace", "zero_", "fill_", "copy_", "_binary_inplace", "_unary_inplace",
           "_dt"]
