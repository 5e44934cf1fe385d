"""Dtype casts and device moves (differentiable: the gradient goes back the same way)."""
from __future__ import annotations

from plugrad.core.autograd.node import Node, note_special_node
from plugrad.core.ops._base import _state, _wrap, attach, check_dtype_supported
from plugrad.core.tensor import table_for


class ToCopyBackward0(Node):

    def backward(self, g):
        if g.device is not self.device:
            g = to_device(g, self.device)
        if g.dtype is not self.dtype:
            g = to_dtype(g, self.dtype)
        return (g,)


def _record(x, r):
    if x._rg and _state.enabled and r.dtype.is_floating_point:
        node = ToCopyBackward0()
        node.dtype, node.device = x.dtype, x.device
        if r.device is not x.device:
            node.crosses_devices = True
            note_special_node()
        attach(r, node, (x,))
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
