"""Layer normalisation: one node whose rule calls the ``layer_norm_backward`` kernel."""
from __future__ import annotations

from plugrad.core.autograd import engine
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record, recording
from plugrad.core.errors import ShapeError, shape_str
from plugrad.core.ops.declare import op
from plugrad.core.ops.window import tensor_args
from plugrad.core.tensor import _wrap


class NativeLayerNormBackward0(Node):
    """The kernel's gradients from the saved statistics. The Tensor binding re-derives the
    statistics from ``x`` with the forward kernel itself (same values, and now functions
    of ``x``), so second-order gradients see how they depend on it."""

    def grad(self, F, g, x, w, mean, rstd):
        mask = (bool(self.next[0]), w is not None and bool(self.next[1]),
                len(self.next) > 2 and bool(self.next[2]))
        return F.layer_norm_backward(g, x, w, mean, rstd, self.n_axes, mask)

    def saved_tensors(self):
        x, w = self.saved
        _, mean, rstd = engine.tensor_ops_for(self.k).layer_norm(x, w, None, self.n_axes,
                                                                 self.eps)
        return x, w, mean, rstd


@op(functional="layer_norm")
def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    name = "layer_norm"
    tensor_args(name, x, weight, bias)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    n = len(shape)
    if tuple(x.shape[x.ndim - n:]) != shape or x.ndim < n:
        raise ShapeError(f"{name}: Given normalized_shape={list(shape)}, expected input with "
                         f"shape [*, {', '.join(map(str, shape))}], but got input of size"
                         f"{shape_str(x.shape)}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise ShapeError(f"{name}: {what} of shape {shape_str(t.shape)} does not match "
                             f"normalized_shape {list(shape)}")
    k = x._k
    wd = None if weight is None else weight._data
    y, mean, rstd = k.layer_norm(x._data, wd, None if bias is None else bias._data, n,
                                 float(eps))
    r = _wrap(y, x.dtype, x.device, k)
    if recording(x, weight, bias):
        node = NativeLayerNormBackward0()
        node.n_axes, node.eps = n, float(eps)
        record(r, node, (x, weight, bias), (x, weight), (x._data, wd, mean, rstd))
    return r
