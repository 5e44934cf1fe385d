"""Convolution: im2col windows (``unfold2d``/``fold2d``) and ``conv2d``/``conv1d``, one node
per call whose rule calls the two gradient kernels (fused where a backend has them)."""
from __future__ import annotations

from plugrad.core import autocast as _ac
from plugrad.core.autograd.node import Node, present_as
from plugrad.core.autograd.record import record, recording
from plugrad.core.errors import ShapeError, shape_str
from plugrad.core.grad_mode import _state
from plugrad.core.ops.declare import op
from plugrad.core.ops.shape import squeeze, unsqueeze
from plugrad.core.ops.window import INTS, batched, dilated_ints, out_size, single, tensor_args, window_geometry
from plugrad.core.tensor import _wrap


# ====================================================================== unfold / fold
class Unfold2dBackward0(Node):

    def grad(self, F, g):
        return (F.fold2d(g, self.hw, *self.geom),)


class Fold2dBackward0(Node):

    def grad(self, F, g):
        return (F.unfold2d(g, *self.geom),)


def unfold2d(x, kernel, stride, padding, dilation, value=0):
    """Windows of ``x`` ``(N, C, H, W)``: ``(N, C, kh, kw, OH, OW)`` (adjoint: :func:`fold2d`)."""
    k = x._k
    r = _wrap(k.unfold2d(x._data, kernel, stride, padding, dilation, value), x.dtype,
              x.device, k)
    if x._rg and _state.enabled:
        node = Unfold2dBackward0()
        node.hw, node.geom = tuple(x.shape[2:]), (kernel, stride, padding, dilation)
        record(r, node, (x,))
    return r


def fold2d(cols, hw, kernel, stride, padding, dilation):
    """Sum windows ``(N, C, kh, kw, OH, OW)`` back into ``(N, C, *hw)`` (col2im)."""
    k = cols._k
    r = _wrap(k.fold2d(cols._data, tuple(hw), kernel, stride, padding, dilation), cols.dtype,
              cols.device, k)
    if cols._rg and _state.enabled:
        node = Fold2dBackward0()
        node.geom = (kernel, stride, padding, dilation)
        record(r, node, (cols,))
    return r


# ====================================================================== conv2d
class ConvolutionBackward0(Node):

    records_inputs = (0, 1)  # create_graph: its gradients record x and w (PyTorch's)

    def grad(self, F, g, x, w):
        stride, padding, dilation, groups = self.geom
        gx = gw = gb = None
        if self.next[0]:
            gx = F.conv2d_grad_input(g, w, tuple(x.shape[2:]), stride, padding, dilation,
                                     groups)
        if self.next[1]:
            gw = F.conv2d_grad_weight(g, x, tuple(w.shape), stride, padding, dilation, groups)
        if len(self.next) > 2 and self.next[2]:
            gb = F.sum(g, (0, 2, 3), False)
        return gx, gw, gb


@op(functional="conv2d")
def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation, PyTorch's ``F.conv2d`` (``padding`` may be 'same'/'valid')."""
    if _ac.active: x, weight, bias = _ac.autocast_args("conv2d", x, weight, bias)
    name = "conv2d"
    tensor_args(name, x, weight, bias, ints=INTS)
    if weight.ndim != 4:
        raise ShapeError(f"{name}: expected a 4-D weight (out_channels, in_channels/groups, kH, "
                         f"kW), got {shape_str(weight.shape)}")
    x, unbatched = batched(name, x)
    o, cg, kh, kw = weight.shape
    if groups < 1 or o % groups:
        raise ValueError(f"{name}: out_channels ({o}) must be divisible by groups ({groups})")
    if x.shape[1] != cg * groups:
        raise ShapeError(f"{name}: Given groups={groups}, weight of size "
                         f"{shape_str(weight.shape)}, expected input{shape_str(x.shape)} to "
                         f"have {cg * groups} channels, but got {x.shape[1]} channels instead")
    if bias is not None and tuple(bias.shape) != (o,):
        raise ShapeError(f"{name}: bias of shape {shape_str(bias.shape)} does not match "
                         f"out_channels {o}")
    kernel, stride, pads, dilation = window_geometry(name, (kh, kw), stride, padding, dilation)
    dilated_ints(name, x, dilation)
    for i in range(2):
        out_size(name, x.shape[2 + i], kernel[i], stride[i], pads[i], dilation[i])
    k = x._k
    out = k.conv2d(x._data, weight._data, stride, pads, dilation, groups)
    if bias is not None:
        out = k.update_("add", out, k.reshape(bias._data, (1, o, 1, 1)))  # into the result
    r = _wrap(out, x.dtype, x.device, k)
    if recording(x, weight, bias):
        node = ConvolutionBackward0()
        node.geom = (stride, pads, dilation, groups)
        record(r, node, (x, weight, bias) if bias is not None else (x, weight), (x, weight))
    return present_as(squeeze(r, 0), "SqueezeBackward1") if unbatched else r


@op(functional="conv1d")
def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation as a 2-D one over a height of 1."""
    if _ac.active: x, weight, bias = _ac.autocast_args("conv1d", x, weight, bias)
    name = "conv1d"
    tensor_args(name, x, weight, bias, ints=INTS)
    if weight.ndim != 3:
        raise ShapeError(f"{name}: expected a 3-D weight (out_channels, in_channels/groups, kW), "
                         f"got {shape_str(weight.shape)}")
    x, unbatched = batched(name, x, 3)
    if x.shape[1] != weight.shape[1] * groups:
        raise ShapeError(f"{name}: Given groups={groups}, weight of size "
                         f"{shape_str(weight.shape)}, expected input{shape_str(x.shape)} to "
                         f"have {weight.shape[1] * groups} channels, but got {x.shape[1]} "
                         f"channels instead")
    pad = padding if isinstance(padding, str) else (0, single(padding))
    out = conv2d(unsqueeze(x, 2), unsqueeze(weight, 2), bias, (1, single(stride)),
                 pad, (1, single(dilation)), groups)
    out = present_as(squeeze(out, 2), "ConvolutionBackward0")  # PyTorch's one node
    return present_as(squeeze(out, 0), "SqueezeBackward1") if unbatched else out
