"""Softmax-family ops: one node each, forward by the backend's (fused or composite) kernel."""
from __future__ import annotations

from plugrad.core import autocast as _ac
from plugrad.core import dtypes as _dt
from plugrad.core.ops._base import _state, _wrap, attach
from plugrad.core.ops.pointwise import _UnaryNode
from plugrad.core.tensor import _wrap_dim


class SoftmaxBackward0(_UnaryNode):

    def backward(self, g):
        y = self.output_tensor()
        return (y * (g - (g * y).sum(self.axis, keepdim=True)),)

    def backward_arrays(self, k, g):
        y = self.output_array()
        axes = (self.axis,) if y.shape else None
        return (k.mul(y, k.sub(g, k.sum(k.mul(g, y), axes, True))),)


class LogSoftmaxBackward0(_UnaryNode):

    def backward(self, g):
        y = self.output_tensor()
        return (g - y.exp() * g.sum(self.axis, keepdim=True),)

    def backward_arrays(self, k, g):
        y = self.output_array()
        axes = (self.axis,) if y.shape else None
        return (k.sub(g, k.mul(k.exp(y), k.sum(g, axes, True))),)


def _softmax_like(op, kernel, node_cls, x, dim, dtype):
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1  # PyTorch's legacy implicit choice
    if dtype is not None:
        x = x.to(_dt.get_dtype(dtype))
    elif not x.dtype.is_floating_point:
        x = x.to(_dt.get_default_dtype())
    axis = _wrap_dim(dim, x.ndim, op)
    k = x._k
    if x.ndim == 0:
        data = k.full((), 1.0 if op == "softmax" else 0.0, x.dtype.name, x.device.index)
    elif x.numel() == 0:  # nothing to normalise (kernels need a non-empty axis for max)
        data = k.copy(x._data)
    else:
        data = getattr(k, kernel)(x._data, axis)
    r = _wrap(data, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = node_cls()
        node.axis = axis
        node.keep_output(r)
        attach(r, node, (x,))
    return r


def softmax(x, dim=None, dtype=None):
    if _ac.active: x, = _ac.autocast_args("softmax", x, out_dtype=dtype)
    return _softmax_like("softmax", "softmax", SoftmaxBackward0, x, dim, dtype)


def log_softmax(x, dim=None, dtype=None):
    if _ac.active: x, = _ac.autocast_args("log_softmax", x, out_dtype=dtype)
    return _softmax_like("log_softmax", "log_softmax", LogSoftmaxBackward0, x, dim, dtype)
