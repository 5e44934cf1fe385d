"""Differentiable fused ops behind ``plugrad.nn.functional``: one graph node per layer call.

Each forward calls one backend kernel (native, or the contract's composite). Each backward
calls the matching backward kernels when no graph of the backward is wanted, and otherwise
(``create_graph=True``) is written in Tensor ops, so higher-order gradients still work.
"""
from __future__ import annotations

import math

from plugrad.core import dtypes as _dt
from plugrad.core import autocast as _ac
from plugrad.core.autograd.node import Node
from plugrad.core.ops import indexing as I
from plugrad.core.ops import linalg as L
from plugrad.core.ops import movement as M
from plugrad.core.ops import shape as S
from plugrad.core.ops._base import (DTypeError, ShapeError, Tensor, _state, _wrap, attach,
                                    check_device, save, shape_str)


# ====================================================================== argument checks
def _tensor_args(op, x, *others):
    """Check that ``x`` and the non-None ``others`` are tensors on one device with one dtype."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected input to be a Tensor, got {type(x).__name__}")
    for t in others:
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected a Tensor, got {type(t).__name__}")
        if t.device is not x.device:
            check_device(op, x, t)
        if t.dtype is not x.dtype:
            raise DTypeError(f"{op}: expected input ({x.dtype.name}) and parameters "
                             f"({t.dtype.name}) to have the same dtype")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: expected a floating point input, got {x.dtype.name}")


def _pair(v, op, name):
    if isinstance(v, int):
        return (v, v)
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return (v[0], v[0])
    if len(v) != 2:
        raise ValueError(f"{op}: {name} must be an int or a pair of ints, got {v}")
    return v


def window_geometry(op, kernel, stride, padding, dilation):
    """``(kernel, stride, ((pt, pb), (pl, pr)), dilation)`` from PyTorch-style arguments;
    ``padding`` may be ``'valid'`` or ``'same'`` (stride 1 only; any odd pad goes right)."""
    kernel = _pair(kernel, op, "kernel_size")
    stride = kernel if stride is None or stride == () or stride == [] else _pair(stride, op,
                                                                                 "stride")
    dilation = _pair(dilation, op, "dilation")
    if min(stride) < 1 or min(dilation) < 1 or min(kernel) < 1:
        raise ValueError(f"{op}: kernel_size, stride and dilation must be positive, got "
                         f"{kernel}, {stride}, {dilation}")
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0), (0, 0))
        elif padding == "same":
            if stride != (1, 1):
                raise ValueError(f"{op}: padding='same' is not supported for strided "
                                 f"convolutions (stride={stride})")
            totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
            pads = tuple((t // 2, t - t // 2) for t in totals)
        else:
            raise ValueError(f"{op}: invalid padding string {padding!r}, should be one of "
                             f"'valid', 'same'")
    else:
        ph, pw = _pair(padding, op, "padding")
        if ph < 0 or pw < 0:
            raise ValueError(f"{op}: negative padding is not supported, got {(ph, pw)}")
        pads = ((ph, ph), (pw, pw))
    return kernel, stride, pads, dilation


def _out_size(op, size, k, s, pads, d, ceil_mode=False):
    span = size + pads[0] + pads[1] - d * (k - 1) - 1
    if span < 0:
        raise ShapeError(f"{op}: Calculated output size is too small (input size {size}, "
                         f"padding {pads}, dilation {d}, kernel size {k}): the kernel does "
                         f"not fit in the padded input")
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + pads[0]:
        out -= 1  # the last window must start inside the input or the left padding
    return out


def _batched(op, x, weight_ndim=4):
    """``x`` as a batch (adds the batch dim of an unbatched input) and whether it was added."""
    if x.ndim == weight_ndim:
        return x, False
    if x.ndim == weight_ndim - 1:
        return S.unsqueeze(x, 0), True
    raise ShapeError(f"{op}: Expected {weight_ndim - 1}D (unbatched) or {weight_ndim}D "
                     f"(batched) input, but got input of size: {shape_str(x.shape)}")


# ====================================================================== linear
class LinearBackward0(Node):

    def backward(self, g):
        x, w = self.saved
        gx = None
        if self.next[0]:
            gx = L.matmul(g, w) if g.ndim <= 2 else S.reshape(
                L.matmul(S.reshape(g, (-1, g.shape[-1])), w), tuple(x.shape))
        gw = gb = None
        if self.next[1] or (len(self.next) > 2 and self.next[2]):
            g2 = S.reshape(g, (-1, g.shape[-1])) if g.ndim != 2 else g
            if self.next[1]:
                x2 = S.reshape(x, (-1, x.shape[-1])) if x.ndim != 2 else x
                gw = L.matmul(S.t(g2), x2)
            if len(self.next) > 2 and self.next[2]:
                gb = g2.sum(0)
        return gx, gw, gb

    def backward_arrays(self, k, g):
        x, w = self.saved
        xd = x._data
        lead = g.shape[:-1]
        g2 = g if len(lead) == 1 else k.reshape(g, (math.prod(lead), g.shape[-1]))
        gx = gw = gb = None
        if self.next[0]:
            gx = k.matmul(g2, w._data)
            if len(lead) != 1:
                gx = k.reshape(gx, xd.shape)
        if self.next[1]:
            x2 = xd if len(xd.shape) == 2 else k.reshape(
                xd, (math.prod(xd.shape[:-1]), xd.shape[-1]))
            gw = k.matmul(k.permute(g2, (1, 0)), x2)
        if len(self.next) > 2 and self.next[2]:
            gb = k.sum(g2, (0,), False)
        return gx, gw, gb


def linear(x, weight, bias=None):
    """``x @ weight.T + bias`` as one node (backward: ``g @ w``, ``g.T @ x``, ``g.sum(0)``)."""
    if _ac.active: x, weight, bias = _ac.autocast_args("linear", x, weight, bias)
    _tensor_args("linear", x, weight, bias)
    xs, ws = x._data.shape, weight._data.shape
    if not xs or len(ws) != 2 or xs[-1] != ws[1]:
        sx = "x".join(str(s) for s in (x.shape if x.ndim != 1 else (1, x.shape[0])))
        sw = "x".join(str(s) for s in reversed(weight.shape))
        raise ShapeError(f"linear: mat1 and mat2 shapes cannot be multiplied ({sx} and {sw}): "
                         f"input {shape_str(x.shape)}, weight {shape_str(weight.shape)} "
                         f"(expected input[..., {weight.shape[-1]}])")
    if bias is not None and bias._data.shape not in ((ws[0],), ()):
        raise ShapeError(f"linear: bias of shape {shape_str(bias.shape)} does not match "
                         f"out_features {ws[0]}")
    k = x._k
    wt = k.permute(weight._data, (1, 0))
    if len(xs) == 2:
        out = k.matmul(x._data, wt)
    elif len(xs) > 2:  # one 2-D product: batched matmul against a shared matrix skips BLAS
        lead = tuple(xs[:-1])
        out = k.reshape(k.matmul(k.reshape(x._data, (math.prod(lead), xs[-1])), wt),
                        lead + (ws[0],))
    else:
        out = k.reshape(k.matmul(k.reshape(x._data, (1, xs[0])), wt), (ws[0],))
    if bias is not None:
        out = k.add(out, bias._data)
    r = _wrap(out, x.dtype, x.device, k)
    if _state.enabled and (x._rg or weight._rg or (bias is not None and bias._rg)):
        node = LinearBackward0()
        save(node, x, weight)
        attach(r, node, (x, weight, bias) if bias is not None else (x, weight))
    return r


# ====================================================================== unfold / fold
class Unfold2dBackward0(Node):

    def backward(self, g):
        return (fold2d(g, self.hw, *self.geom),)


class Fold2dBackward0(Node):

    def backward(self, g):
        return (unfold2d(g, *self.geom),)


def unfold2d(x, kernel, stride, padding, dilation):
    """Windows of ``x`` ``(N, C, H, W)``: ``(N, C, kh, kw, OH, OW)`` (adjoint: :func:`fold2d`)."""
    k = x._k
    r = _wrap(k.unfold2d(x._data, kernel, stride, padding, dilation), x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = Unfold2dBackward0()
        node.hw, node.geom = tuple(x.shape[2:]), (kernel, stride, padding, dilation)
        attach(r, node, (x,))
    return r


def fold2d(cols, hw, kernel, stride, padding, dilation):
    """Sum windows ``(N, C, kh, kw, OH, OW)`` back into ``(N, C, *hw)`` (col2im)."""
    k = cols._k
    r = _wrap(k.fold2d(cols._data, tuple(hw), kernel, stride, padding, dilation), cols.dtype,
              cols.device, k)
    if cols._rg and _state.enabled:
        node = Fold2dBackward0()
        node.geom = (kernel, stride, padding, dilation)
        attach(r, node, (cols,))
    return r


# ====================================================================== convolution
class ConvolutionBackward0(Node):

    def backward(self, g):
        x, w = self.saved
        stride, padding, dilation, groups = self.geom
        gx = gw = gb = None
        if _state.enabled:  # create_graph: differentiable composites
            if self.next[0]:
                gx = _conv_grad_input(g, w, tuple(x.shape[2:]), stride, padding, dilation,
                                      groups)
            if self.next[1]:
                gw = _conv_grad_weight(g, x, tuple(w.shape), stride, padding, dilation, groups)
        else:
            k = g._k
            if self.next[0]:
                gx = _wrap(k.conv2d_grad_input(g._data, w._data, tuple(x.shape[2:]), stride,
                                               padding, dilation, groups), g.dtype, g.device, k)
            if self.next[1]:
                gw = _wrap(k.conv2d_grad_weight(g._data, x._data, tuple(w.shape), stride,
                                                padding, dilation, groups), g.dtype, g.device, k)
        if len(self.next) > 2 and self.next[2]:
            gb = g.sum((0, 2, 3))
        return gx, gw, gb

    def backward_arrays(self, k, g):
        x, w = self.saved
        stride, padding, dilation, groups = self.geom
        gx = gw = gb = None
        if self.next[0]:
            gx = k.conv2d_grad_input(g, w._data, tuple(x._data.shape[2:]), stride, padding,
                                     dilation, groups)
        if self.next[1]:
            gw = k.conv2d_grad_weight(g, x._data, tuple(w._data.shape), stride, padding,
                                      dilation, groups)
        if len(self.next) > 2 and self.next[2]:
            gb = k.sum(g, (0, 2, 3), False)
        return gx, gw, gb


def _conv_grad_input(g, w, hw, stride, padding, dilation, groups):
    o, cg, kh, kw = w.shape
    n, _, oh, ow = g.shape
    gm = S.reshape(g, (n, groups, o // groups, oh * ow))
    wt = S.transpose(S.reshape(w, (1, groups, o // groups, cg * kh * kw)), -1, -2)
    cols = S.reshape(L.matmul(wt, gm), (n, groups * cg, kh, kw, oh, ow))
    return fold2d(cols, hw, (kh, kw), stride, padding, dilation)


def _conv_grad_weight(g, x, wshape, stride, padding, dilation, groups):
    o, cg, kh, kw = wshape
    cols = unfold2d(x, (kh, kw), stride, padding, dilation)
    n, _, _, _, oh, ow = cols.shape
    cols = S.transpose(S.reshape(cols, (n, groups, cg * kh * kw, oh * ow)), -1, -2)
    gm = S.reshape(g, (n, groups, o // groups, oh * ow))
    return S.reshape(L.matmul(gm, cols).sum(0), wshape)


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation, PyTorch's ``F.conv2d`` (``padding`` may be 'same'/'valid')."""
    if _ac.active: x, weight, bias = _ac.autocast_args("conv2d", x, weight, bias)
    op = "conv2d"
    _tensor_args(op, x, weight, bias)
    if weight.ndim != 4:
        raise ShapeError(f"{op}: expected a 4-D weight (out_channels, in_channels/groups, kH, "
                         f"kW), got {shape_str(weight.shape)}")
    x, unbatched = _batched(op, x)
    o, cg, kh, kw = weight.shape
    if groups < 1 or o % groups:
        raise ValueError(f"{op}: out_channels ({o}) must be divisible by groups ({groups})")
    if x.shape[1] != cg * groups:
        raise ShapeError(f"{op}: Given groups={groups}, weight of size "
                         f"{shape_str(weight.shape)}, expected input{shape_str(x.shape)} to "
                         f"have {cg * groups} channels, but got {x.shape[1]} channels instead")
    if bias is not None and tuple(bias.shape) != (o,):
        raise ShapeError(f"{op}: bias of shape {shape_str(bias.shape)} does not match "
                         f"out_channels {o}")
    kernel, stride, pads, dilation = window_geometry(op, (kh, kw), stride, padding, dilation)
    for i in range(2):
        _out_size(op, x.shape[2 + i], kernel[i], stride[i], pads[i], dilation[i])
    k = x._k
    out = k.conv2d(x._data, weight._data, stride, pads, dilation, groups)
    if bias is not None:
        out = k.add(out, k.reshape(bias._data, (1, o, 1, 1)))
    r = _wrap(out, x.dtype, x.device, k)
    if _state.enabled and (x._rg or weight._rg or (bias is not None and bias._rg)):
        node = ConvolutionBackward0()
        node.geom = (stride, pads, dilation, groups)
        save(node, x, weight)
        attach(r, node, (x, weight, bias) if bias is not None else (x, weight))
    return S.squeeze(r, 0) if unbatched else r


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation as a 2-D one over a height of 1."""
    if _ac.active: x, weight, bias = _ac.autocast_args("conv1d", x, weight, bias)
    op = "conv1d"
    _tensor_args(op, x, weight, bias)
    if weight.ndim != 3:
        raise ShapeError(f"{op}: expected a 3-D weight (out_channels, in_channels/groups, kW), "
                         f"got {shape_str(weight.shape)}")
    x, unbatched = _batched(op, x, 3)
    if x.shape[1] != weight.shape[1] * groups:
        raise ShapeError(f"{op}: Given groups={groups}, weight of size "
                         f"{shape_str(weight.shape)}, expected input{shape_str(x.shape)} to "
                         f"have {weight.shape[1] * groups} channels, but got {x.shape[1]} "
                         f"channels instead")
    pad = padding if isinstance(padding, str) else (0, _single(padding))
    out = conv2d(S.unsqueeze(x, 2), S.unsqueeze(weight, 2), bias, (1, _single(stride)),
                 pad, (1, _single(dilation)), groups)
    out = S.squeeze(out, 2)
    return S.squeeze(out, 0) if unbatched else out


def _single(v):
    return v if isinstance(v, int) else int(tuple(v)[0])


# ====================================================================== pooling
class MaxPool2dBackward0(Node):

    def backward(self, g):
        (idx,) = self.saved
        n, c, h, w = self.shape
        flat = S.reshape(g, (n, c, -1))
        zeros = _wrap(g._k.full((n, c, h * w), 0, g.dtype.name, g.device.index), g.dtype,
                      g.device, g._k)
        return (S.reshape(I.scatter_add(zeros, 2, S.reshape(idx, (n, c, -1)), flat), self.shape),)


def _pool_geometry(op, x, kernel_size, stride, padding, dilation, ceil_mode):
    kernel, stride, pads, dilation = window_geometry(op, kernel_size, stride, padding, dilation)
    for (p, _), k in zip(pads, kernel):
        if p > k // 2:
            raise ValueError(f"{op}: pad should be at most half of effective kernel size, but "
                             f"got pad={p}, kernel_size={k}")
    sizes = [_out_size(op, x.shape[2 + i], kernel[i], stride[i], pads[i], dilation[i],
                       ceil_mode) for i in range(2)]
    # ceil_mode: pad bottom/right just enough for the last (partial) window
    pads = tuple((p0, max((o - 1) * s + d * (k - 1) + 1 - n - p0, 0))
                 for (p0, _), o, s, d, k, n in zip(pads, sizes, stride, dilation, kernel,
                                                   x.shape[2:]))
    return kernel, stride, pads, dilation


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    op = "max_pool2d"
    _tensor_args(op, x)
    x, unbatched = _batched(op, x)
    kernel, stride, pads, dilation = _pool_geometry(op, x, kernel_size, stride, padding,
                                                    dilation, ceil_mode)
    k = x._k
    out, idx = k.max_pool2d(x._data, kernel, stride, pads, dilation)
    r = _wrap(out, x.dtype, x.device, k)
    indices = _wrap(idx, _dt.int64, x.device, k)
    if x._rg and _state.enabled:
        node = MaxPool2dBackward0()
        node.shape = tuple(x.shape)
        save(node, indices)
        attach(r, node, (x,))
    if unbatched:
        r, indices = S.squeeze(r, 0), S.squeeze(indices, 0)
    return (r, indices) if return_indices else r


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    op = "avg_pool2d"
    _tensor_args(op, x)
    x, unbatched = _batched(op, x)
    kernel, stride, pads, dilation = _pool_geometry(op, x, kernel_size, stride, padding, 1,
                                                    ceil_mode)
    sums = unfold2d(x, kernel, stride, pads, dilation).sum((2, 3))
    if divisor_override:
        out = sums / divisor_override
    else:
        out = sums / _pool_counts(x, kernel, stride, pads, padding, count_include_pad)
    return S.squeeze(out, 0) if unbatched else out


def _pool_counts(x, kernel, stride, pads, padding, count_include_pad):
    """How many elements each window averages (PyTorch: padding counts, ceil overhang not)."""
    from plugrad.core.factories import ones
    plane = ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype, device=x.device)
    user = tuple((p0, p0) for (p0, _) in pads)
    plane = M.pad_dims(plane, ((0, 0), (0, 0)) + user, 1.0 if count_include_pad else 0.0)
    extra = tuple((0, max(p1 - p0, 0)) for (p0, p1) in pads)  # ceil_mode overhang: not counted
    return unfold2d(plane, kernel, stride, extra, (1, 1)).sum((2, 3))


def _adaptive_matrix(n_in, n_out, like):
    """The ``(n_out, n_in)`` averaging matrix of adaptive pooling along one axis."""
    import numpy as np
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        lo, hi = (i * n_in) // n_out, -(-((i + 1) * n_in) // n_out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    k = like._k
    return _wrap(k.from_numpy(m, like.dtype.name, like.device.index), like.dtype, like.device, k)


def adaptive_avg_pool2d(x, output_size):
    """Mean over PyTorch's adaptive windows; separable, so two small matmuls."""
    op = "adaptive_avg_pool2d"
    _tensor_args(op, x)
    x, unbatched = _batched(op, x)
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size, output_size)
    oh, ow = (x.shape[2 + i] if s is None else int(s) for i, s in enumerate(output_size))
    if oh <= 0 or ow <= 0:
        raise ValueError(f"{op}: output_size must be positive, got {output_size}")
    h, w = x.shape[2:]
    if h % oh == 0 and w % ow == 0:
        out = avg_pool2d(x, (h // oh, w // ow))
    else:
        out = L.matmul(L.matmul(_adaptive_matrix(h, oh, x), x),
                       S.t(_adaptive_matrix(w, ow, x)))
    return S.squeeze(out, 0) if unbatched else out


# ====================================================================== layer norm
class NativeLayerNormBackward0(Node):

    def backward(self, g):
        x, w, mean, rstd = self.saved
        axes = tuple(range(x.ndim - self.n_axes, x.ndim))
        if _state.enabled:  # create_graph: statistics as functions of x
            mean = x.mean(axes, keepdim=True)
            rstd = ((x - mean).square().mean(axes, keepdim=True) + self.eps).rsqrt()
        xhat = (x - mean) * rstd
        gx = gw = gb = None
        lead = tuple(range(x.ndim - self.n_axes))
        if self.next[0]:
            gh = g * w if w is not None else g
            gx = rstd * (gh - gh.mean(axes, keepdim=True)
                         - xhat * (gh * xhat).mean(axes, keepdim=True))
        if w is not None and self.next[1]:
            gw = (g * xhat).sum(lead) if lead else g * xhat
        if len(self.next) > 2 and self.next[2]:
            gb = g.sum(lead) if lead else g
        return gx, gw, gb


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    op = "layer_norm"
    _tensor_args(op, x, weight, bias)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    n = len(shape)
    if tuple(x.shape[x.ndim - n:]) != shape or x.ndim < n:
        raise ShapeError(f"{op}: Given normalized_shape={list(shape)}, expected input with "
                         f"shape [*, {', '.join(map(str, shape))}], but got input of size"
                         f"{shape_str(x.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise ShapeError(f"{op}: {name} of shape {shape_str(t.shape)} does not match "
                             f"normalized_shape {list(shape)}")
    k = x._k
    y, mean, rstd = k.layer_norm(x._data, None if weight is None else weight._data,
                                 None if bias is None else bias._data, n, float(eps))
    r = _wrap(y, x.dtype, x.device, k)
    if _state.enabled and any(t is not None and t._rg for t in (x, weight, bias)):
        node = NativeLayerNormBackward0()
        node.n_axes, node.eps = n, float(eps)
        save(node, x, weight, _wrap(mean, x.dtype, x.device, k), _wrap(rstd, x.dtype, x.device, k))
        attach(r, node, (x, weight, bias))
    return r
