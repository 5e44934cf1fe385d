"""Dtype casts and device moves (differentiable: the gradient goes back the same way)."""
from __future__ import annotations

from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record, recording
from plugrad.core.errors import check_dtype_supported
from plugrad.core.tensor import _wrap, table_for


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
