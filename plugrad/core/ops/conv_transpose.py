"""Transposed convolution: ``conv_transpose2d``/``conv_transpose1d``.

A transposed convolution is the adjoint of a convolution in its input, so its forward is
the ``conv2d_grad_input`` kernel and its gradients are the ``conv2d`` kernel (input) and
``conv2d_grad_weight`` with the roles of input and gradient exchanged (weight): no new
kernel, every backend's fast conv kernels serve it.
"""
from __future__ import annotations

from plugrad.core import autocast as _ac
from plugrad.core.autograd.node import Node, present_as
from plugrad.core.autograd.record import record, recording
from plugrad.core.errors import ArgumentError, ShapeError, shape_str
from plugrad.core.ops.conv import conv2d
from plugrad.core.ops.declare import op
from plugrad.core.ops.shape import squeeze, unsqueeze
from plugrad.core.ops.window import INT64, batched, pair, single, tensor_args
from plugrad.core.tensor import _wrap


def _trimmed(F, g, keep):
    """``g`` cut to ``keep`` rows/columns (the output padding past the last stride that no
    input reaches: a convolution over it would give more outputs than the input had)."""
    n, c, h, w = g.shape
    if (h, w) == tuple(keep):
        return g
    return F.slice(g, (slice(0, n, 1), slice(0, c, 1), slice(0, keep[0], 1),
                       slice(0, keep[1], 1)))


def _conv(F, g, w, stride, pads, dilation, groups):
    """``conv2d`` in either binding of a rule: the kernel, or the differentiable op."""
    if getattr(F, "tensors", False):
        return conv2d(g, w, None, stride, (pads[0][0], pads[1][0]), dilation, groups)
    return F.conv2d(g, w, stride, pads, dilation, groups)


class ConvTransposeBackward(Node):
    """Input gradient: the convolution of ``g``; weight gradient: ``conv2d_grad_weight``
    with ``x`` as the output gradient of the convolution of ``g``."""

    records_inputs = (0, 1)  # create_graph: its gradients record x and w (PyTorch's)

    def grad(self, F, g, x, w):
        stride, pads, dilation, groups, keep = self.geom
        gx = gw = gb = None
        if len(self.next) > 2 and self.next[2]:
            gb = F.sum(g, (0, 2, 3), False)
        g = _trimmed(F, g, keep)
        if self.next[0]:
            gx = _conv(F, g, w, stride, pads, dilation, groups)
        if self.next[1]:
            gw = F.conv2d_grad_weight(x, g, tuple(w.shape), stride, pads, dilation, groups)
        return gx, gw, gb


def _geometry(name, x, weight, bias, stride, padding, output_padding, groups, dilation):
    """Checks as PyTorch's, and the output size ``(H - 1) s - 2 p + d (k - 1) + op + 1``."""
    if isinstance(padding, str):
        raise TypeError(f"{name}: padding must be an int or a tuple of ints, got {padding!r} "
                        f"(transposed convolutions take no 'same'/'valid')")
    stride, padding = pair(stride, name, "stride"), pair(padding, name, "padding")
    output_padding, dilation = pair(output_padding, name, "output_padding"), pair(
        dilation, name, "dilation")
    if min(stride) < 1 or min(dilation) < 1:
        raise ArgumentError(f"{name}: stride and dilation must be positive, got {stride}, "
                         f"{dilation}")
    if min(padding) < 0 or min(output_padding) < 0:
        raise ArgumentError(f"{name}: negative padding is not supported, got {padding}, "
                         f"output_padding {output_padding}")
    for op_, s, d in zip(output_padding, stride, dilation):
        if op_ >= s and op_ >= d:
            raise ValueError(f"{name}: output padding must be smaller than either stride or "
                             f"dilation, but got output_padding {output_padding}, stride "
                             f"{stride}, dilation {dilation}")
    cin, cg, kh, kw = weight.shape
    if groups < 1 or cin % groups:
        raise ValueError(f"{name}: Given groups={groups}, expected weight to be divisible by "
                         f"{groups} at dimension 0, but got weight of size "
                         f"{shape_str(weight.shape)} instead")
    if x.shape[1] != cin:
        raise ShapeError(f"{name}: Given transposed=1, weight of size "
                         f"{shape_str(weight.shape)}, expected input{shape_str(x.shape)} to "
                         f"have {cin} channels, but got {x.shape[1]} channels instead")
    if bias is not None and tuple(bias.shape) != (cg * groups,):
        raise ShapeError(f"{name}: Given transposed=1, weight of size "
                         f"{shape_str(weight.shape)}, expected bias to be 1-dimensional with "
                         f"{cg * groups} elements, but got bias of size "
                         f"{shape_str(bias.shape)} instead")
    out = tuple((n - 1) * s - 2 * p + d * (k - 1) + o + 1 for n, s, p, d, k, o in
                zip(x.shape[2:], stride, padding, dilation, (kh, kw), output_padding))
    if min(out) < 1:
        raise ShapeError(f"{name}: Given input size per channel: {tuple(x.shape[2:])}. "
                         f"Calculated output size per channel: {out}. Output size is too small")
    # what a convolution over the output reads: all of it but output padding >= stride
    keep = tuple(n - max(0, o - s + 1) for n, o, s in zip(out, output_padding, stride))
    pads = tuple((p, p) for p in padding)
    return stride, pads, dilation, out, keep


@op(functional="conv_transpose2d")
def conv_transpose2d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-D transposed convolution (PyTorch's ``F.conv_transpose2d``; weight
    ``(in_channels, out_channels / groups, kH, kW)``)."""
    if _ac.active: x, weight, bias = _ac.autocast_args("conv_transpose2d", x, weight, bias)
    name = "conv_transpose2d"
    tensor_args(name, x, weight, bias, ints=INT64)
    if weight.ndim != 4:
        raise ShapeError(f"{name}: expected a 4-D weight (in_channels, out_channels/groups, "
                         f"kH, kW), got {shape_str(weight.shape)}")
    x, unbatched = batched(name, x)
    stride, pads, dilation, out_hw, keep = _geometry(name, x, weight, bias, stride, padding,
                                                     output_padding, groups, dilation)
    k = x._k
    xd, wd, bd = x._data, weight._data, None if bias is None else bias._data
    half = x.dtype.name in ("float16", "bfloat16")
    if half:  # PyTorch's opmath: the overlapping taps summed in float32, rounded once
        xd, wd = k.astype(xd, "float32"), k.astype(wd, "float32")
        bd = None if bd is None else k.astype(bd, "float32")
    out = k.conv2d_grad_input(xd, wd, out_hw, stride, pads, dilation, groups)
    if bd is not None:
        out = k.add(out, k.reshape(bd, (1, bias.shape[0], 1, 1)))
    if half:
        out = k.astype(out, x.dtype.name)
    r = _wrap(out, x.dtype, x.device, k)
    if recording(x, weight, bias):
        node = ConvTransposeBackward()
        node.geom = (stride, pads, dilation, groups, keep)
        record(r, node, (x, weight, bias) if bias is not None else (x, weight), (x, weight))
        present_as(r, "ConvolutionBackward0")
    return present_as(squeeze(r, 0), "SqueezeBackward1") if unbatched else r


@op(functional="conv_transpose1d")
def conv_transpose1d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-D transposed convolution as a 2-D one over a height of 1."""
    if _ac.active: x, weight, bias = _ac.autocast_args("conv_transpose1d", x, weight, bias)
    name = "conv_transpose1d"
    tensor_args(name, x, weight, bias, ints=INT64)
    if weight.ndim != 3:
        raise ShapeError(f"{name}: expected a 3-D weight (in_channels, out_channels/groups, "
                         f"kW), got {shape_str(weight.shape)}")
    x, unbatched = batched(name, x, 3)
    if x.shape[1] != weight.shape[0]:
        raise ShapeError(f"{name}: Given transposed=1, weight of size "
                         f"{shape_str(weight.shape)}, expected input{shape_str(x.shape)} to "
                         f"have {weight.shape[0]} channels, but got {x.shape[1]} channels "
                         f"instead")
    if isinstance(padding, str):
        raise TypeError(f"{name}: padding must be an int or a tuple of ints, got {padding!r}")
    out = conv_transpose2d(unsqueeze(x, 2), unsqueeze(weight, 2), bias, (1, single(stride)),
                           (0, single(padding)), (0, single(output_padding)), groups,
                           (1, single(dilation)))
    out = present_as(squeeze(out, 2), "ConvolutionBackward0")  # PyTorch's one node
    return present_as(squeeze(out, 0), "SqueezeBackward1") if unbatched else out
