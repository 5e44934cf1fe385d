"""Dtype casts and device moves (differentiable: the gradient goes back the same way), and
the Tensor methods that make them: ``to``, ``cpu``, ``cuda``, ``type``, ``float``, ...
"""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core import naming
from plugrad.core import memory_format as _formats
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record, recording
from plugrad.core.device import Device
from plugrad.core.errors import check_dtype_supported
from plugrad.core.factories import with_index
from plugrad.core.ops.shape import clone
from plugrad.core.tensor import Tensor, _wrap, table_for


class ToCopyBackward0(Node):
    """The gradient is moved back to the input's device and cast to its dtype."""

    def grad(self, F, g):
        if getattr(F, "tensors", False):
            return (to_dtype(to_device(g, self.src_device), self.src_dtype),)
        if self.src_k is not self.k or self.src_device is not self.device:
            g = transfer(self.k, self.src_k, g, self.k.dtype_of(g), self.src_device.index)
        if self.src_k.dtype_of(g) != self.src_dtype.name:
            g = self.src_k.astype(g, self.src_dtype.name)
        return (g,)


def _record(x, r):
    if r.dtype.is_floating_point and recording(x):
        node = ToCopyBackward0()
        node.src_dtype, node.src_device, node.src_k = x.dtype, x.device, x._k
        record(r, node, (x,))
    return r


def to_dtype(x, dtype):
    if dtype is x.dtype:
        return x
    k = x._k
    check_dtype_supported("to", k, dtype)
    return _record(x, _wrap(k.astype(x._data, dtype.name), dtype, x.device, k))


def to_device(x, device):
    if device is x.device:
        return x
    dst = table_for(device)
    check_dtype_supported("to", dst, x.dtype)
    data = transfer(x._k, dst, x._data, x.dtype.name, device.index)
    return _record(x, _wrap(data, x.dtype, device, dst))


def transfer(src, dst, data, dtype: str, index):
    """Move an array between backends through host NumPy (``cuda:0`` to ``cuda:1`` too)."""
    return dst.from_numpy(src.to_numpy(data), dtype, index)


# ---------------------------------------------------------------------- Tensor methods
def _looks_like_dtype(spec) -> bool:
    if isinstance(spec, str):
        try:
            _dt.get_dtype(spec)
            return True
        except TypeError:
            return False
    return False


def to(self, *args, **kwargs):
    """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other)``; ``copy=`` and
    ``non_blocking=`` are accepted."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    _formats.check("to", self.ndim, kwargs.pop("memory_format", None))
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (Device, str)) and not _looks_like_dtype(a):
            device = a
        elif a is not None:
            dtype = a
    out = self
    if dtype is not None:
        out = to_dtype(out, _dt.get_dtype(dtype))
    if device is not None:
        out = to_device(out, with_index(Device(device)))
    if copy and out is self:
        out = clone(self)
    return out


def cpu(self):
    return to(self, "cpu")


def cuda(self, device=None, non_blocking: bool = False):
    if device is None:
        return to(self, "cuda")
    if isinstance(device, int):
        return to(self, Device("cuda", device))
    return to(self, device)


def type_(self, dtype=None, non_blocking: bool = False, **kwargs):
    """No argument: PyTorch's legacy type name (``'torch.FloatTensor'`` under the torch
    alias, ``'plugrad.FloatTensor'`` otherwise). With a dtype, a legacy type
    (``torch.cuda.LongTensor``) or its name: this tensor converted to it."""
    if dtype is None:
        cuda = "cuda." if self.device.type == "cuda" else ""
        return f"{naming.prefix}.{cuda}{_dt.LEGACY_NAMES[self.dtype]}"
    legacy = getattr(dtype, "_legacy", None)
    if legacy is None and isinstance(dtype, str):
        legacy = _dt.parse_legacy_name(dtype)
    if legacy is None:
        try:
            target = _dt.get_dtype(dtype)
        except TypeError:
            if isinstance(dtype, str):  # PyTorch's error for a name that is no type
                raise ValueError(f"invalid type: {dtype!r}") from None
            raise
        return to(self, target)
    target, cuda = legacy
    if cuda != (self.device.type == "cuda"):
        return to(self, target).to("cuda" if cuda else "cpu")
    return to(self, target)

def _cast_method(name, dtype):
    def method(self):
        return to(self, dtype)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"This tensor as {dtype.name} (``self.to({dtype.name})``)."
    return method


#: ``x.float()``, ``x.long()``, ...: the method name and the dtype it converts to.
CAST_METHODS = {name: _cast_method(name, dtype) for name, dtype in (
    ("float", _dt.float32), ("double", _dt.float64), ("half", _dt.float16),
    ("bfloat16", _dt.bfloat16), ("long", _dt.int64), ("int", _dt.int32),
    ("short", _dt.int16), ("char", _dt.int8), ("bool", _dt.bool_), ("byte", _dt.uint8))}
