"""The volumetric layers of ``nn.functional``: ``conv3d``, ``conv_transpose3d``,
``max_pool3d``, ``avg_pool3d``, ``lp_pool3d``, ``adaptive_avg_pool3d``,
``adaptive_max_pool3d``; and ``max_unpool1d/2d/3d``, ``channel_shuffle``, the
``*_with_indices`` spellings.

No backend kernel: the convolutions and the average pool are the core's 2-D ops over
``(H, W)`` combined along the depth, so the fast 2-D kernels do the work and the gradients
are those of the ops composed. A 3-D convolution is the sum over the kernel's depth taps of
2-D convolutions of the strided depth slices (all output depths batched into one call per
tap); the transposed one adds each tap's 2-D transposed convolution into its output depths;
the average pool sums the 2-D pools' sums over depth windows. The max pools and the adaptive
mean gather whole windows (:mod:`plugrad.nn._pool_windows`): PyTorch's choice of index
among NaN, equal and ``-inf`` values is a rule on the window's scan order.
"""
from __future__ import annotations

import math

import numpy as np

import plugrad
from plugrad.core.autograd.constant_grads import records as _records
from plugrad.core.autograd.node import present_as as _named
from plugrad.core.ops.conv import conv2d as _conv2d
from plugrad.core.ops.conv_transpose import conv_transpose2d as _conv_transpose2d
from plugrad.core.ops.pooling import max_pool2d as _max_pool2d
from plugrad.core.ops.window import out_size as _out_size
from plugrad.core.ops.window import dilated_ints as _dilated_ints
from plugrad.nn._dtypes import expect_dtype as _expect
from plugrad.nn._pool_windows import adaptive_table as _adaptive_table
from plugrad.nn._pool_windows import sliding_max as _sliding_max
from plugrad.nn._pool_windows import window_max as _window_max
from plugrad.nn._pool_windows import sliding_table as _sliding_table
from plugrad.nn._pool_windows import window_mean as _window_mean
from plugrad.nn._pool_windows import window_sum as _window_sum
from plugrad.nn.functional_pooling import (_adaptive_sizes, _lp_finish, adaptive_max_pool1d,
                                           adaptive_max_pool2d, max_pool1d)

__all__ = ["conv3d", "conv_transpose3d", "max_pool3d", "avg_pool3d", "lp_pool3d",
           "adaptive_avg_pool3d", "adaptive_max_pool3d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d", "channel_shuffle", "native_channel_shuffle",
           "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices"]


def _triple(name, v, what):
    if isinstance(v, int):
        return (v, v, v)
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * 3
    if len(v) != 3:
        raise ValueError(f"{name}: {what} must be an int or a tuple of three ints, got {v}")
    return v


def _batched(name, x, spatial=3):
    if x.ndim == spatial + 2:
        return x, False
    if x.ndim == spatial + 1:
        return x.unsqueeze(0), True
    raise plugrad.ShapeError(f"{name}: Expected {spatial + 1}D (unbatched) or {spatial + 2}D "
                             f"(batched) input, but got input of size: {list(x.shape)}")


def _depth_taps(x, start, count, step):
    """``x[:, :, start::step]`` (``count`` depths) folded into the batch: ``(N*count, C, H, W)``."""
    n, c = x.shape[0], x.shape[1]
    sl = x[:, :, start:start + (count - 1) * step + 1:step]
    return sl.transpose(1, 2).reshape(n * count, c, x.shape[3], x.shape[4])


# ---------------------------------------------------------------------- convolution
def _opmath(y):
    """Half tensors computed in float32 and rounded once at the end (PyTorch's opmath: a
    float16 sum of the taps' rounded 2-D results overflows where its one accumulation does
    not)."""
    return y.float() if y is not None and y.dtype in (plugrad.float16, plugrad.bfloat16) \
        else y


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    name = "conv3d"
    _expect(name, input, ints=True)  # PyTorch's CPU convolutions compute integer GEMMs
    if weight.ndim != 5:
        raise plugrad.ShapeError(f"{name}: expected a 5-D weight (out_channels, in_channels/"
                                 f"groups, kD, kH, kW), got {list(weight.shape)}")
    x, unbatched = _batched(name, input)
    if x.shape[1] != weight.shape[1] * groups:
        raise plugrad.ShapeError(f"{name}: Given groups={groups}, weight of size "
                                 f"{list(weight.shape)}, expected input{list(x.shape)} to have "
                                 f"{weight.shape[1] * groups} channels, but got {x.shape[1]} "
                                 f"channels instead")
    x, wt = _opmath(x), _opmath(weight)
    sd, sh, sw = _triple(name, stride, "stride")
    dd, dh, dw = _triple(name, dilation, "dilation")
    _dilated_ints(name, x, (dd, dh, dw))
    kd = weight.shape[2]
    if isinstance(padding, str):
        if padding == "same" and (sd, sh, sw) != (1, 1, 1):
            raise ValueError(f"{name}: padding='same' is not supported for strided "
                             f"convolutions")
        total = dd * (kd - 1) if padding == "same" else 0
        pads_d, pad_hw = (total // 2, total - total // 2), padding
    else:
        pd, ph, pw = _triple(name, padding, "padding")
        pads_d, pad_hw = (pd, pd), (ph, pw)
    if pads_d != (0, 0):
        x = plugrad.nn.functional.pad(x, (0, 0, 0, 0) + pads_d)
    n, depth = x.shape[0], x.shape[2]
    out_d = (depth - dd * (kd - 1) - 1) // sd + 1
    if out_d < 1:
        raise plugrad.ShapeError(f"{name}: Calculated output size is too small: the kernel's "
                                 f"depth {kd} (dilation {dd}) does not fit in the padded input "
                                 f"depth {depth}")
    out = None
    for t in range(kd):
        y = _conv2d(_depth_taps(x, t * dd, out_d, sd), wt[:, :, t], None, (sh, sw), pad_hw,
                    (dh, dw), groups)
        out = y if out is None else out + y
    out = out.reshape(n, out_d, *out.shape[1:]).transpose(1, 2)
    if bias is not None:
        out = _records(out + _opmath(bias).reshape(1, -1, 1, 1, 1), input, weight)
    out = out.to(input.dtype)
    out = _named(out, "ConvolutionBackward0")
    return out.squeeze(0) if unbatched else out


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """3-D transposed convolution over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; ``weight`` is
    ``(C_in, C_out / groups, kD, kH, kW)``."""
    name = "conv_transpose3d"
    if input.dtype != plugrad.int64:  # PyTorch's one integer transposed kernel
        _expect(name, input)
    if weight.ndim != 5:
        raise plugrad.ShapeError(f"{name}: expected a 5-D weight (in_channels, out_channels/"
                                 f"groups, kD, kH, kW), got {list(weight.shape)}")
    x, unbatched = _batched(name, input)
    if x.shape[1] != weight.shape[0]:
        raise plugrad.ShapeError(f"{name}: Given transposed=1, weight of size "
                                 f"{list(weight.shape)}, expected input{list(x.shape)} to have "
                                 f"{weight.shape[0]} channels, but got {x.shape[1]} channels "
                                 f"instead")
    x, wt = _opmath(x), _opmath(weight)
    sd, sh, sw = _triple(name, stride, "stride")
    pd, ph, pw = _triple(name, padding, "padding")
    od, oh, ow = _triple(name, output_padding, "output_padding")
    dd, dh, dw = _triple(name, dilation, "dilation")
    if od >= max(sd, dd) or oh >= max(sh, dh) or ow >= max(sw, dw):
        raise ValueError(f"{name}: output padding must be smaller than either stride or "
                         f"dilation, got output_padding={(od, oh, ow)}")
    n, depth = x.shape[0], x.shape[2]
    kd = weight.shape[2]
    full = (depth - 1) * sd + dd * (kd - 1) + 1
    out_d = (depth - 1) * sd - 2 * pd + dd * (kd - 1) + od + 1
    planes = _depth_taps(x, 0, depth, 1)
    acc = None
    for t in range(kd):
        y = _conv_transpose2d(planes, wt[:, :, t], None, (sh, sw), (ph, pw), (oh, ow),
                              groups, (dh, dw))
        y = y.reshape(n, depth, *y.shape[1:])
        if acc is None:
            acc = plugrad.zeros((n, full + od) + tuple(y.shape[2:]), dtype=y.dtype,
                                device=y.device)
        where = plugrad.arange(depth, device=y.device) * sd + t * dd
        acc = acc.index_add(1, where, y)
    acc = acc[:, pd:pd + out_d]
    out = acc.transpose(1, 2)
    if bias is not None:
        out = _records(out + _opmath(bias).reshape(1, -1, 1, 1, 1), input, weight)
    out = out.to(input.dtype)
    out = _named(out, "ConvolutionBackward0")
    return out.squeeze(0) if unbatched else out


# ---------------------------------------------------------------------- pooling
def _depth_geometry(name, depth, k, s, p, d, ceil_mode):
    out = _out_size(name, depth, k, s, (p, p), d, ceil_mode)
    right = max(0, (out - 1) * s + d * (k - 1) + 1 - depth - p)
    return out, right


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)``; indices into ``D*H*W``
    (PyTorch's choice among NaN and equal maxima: :mod:`plugrad.nn._pool_windows`)."""
    out, indices = _sliding_max("max_pool3d", input, 3, kernel_size, stride, padding,
                                dilation, ceil_mode)
    out = _named(out, "MaxPool3DWithIndicesBackward0")
    return (out, indices) if return_indices else out


def _counts(size, k, s, p, out, include_pad):
    """How many elements each output position's window averages over, along one dim."""
    vals = []
    for o in range(out):
        start = o * s - p
        end = min(start + k, size + p)
        n = end - start
        if not include_pad:
            n = min(end, size) - max(start, 0)
        vals.append(n)
    return np.array(vals, dtype=np.float64)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mean over windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    name = "avg_pool3d"
    if input.dtype != plugrad.int64:  # PyTorch's kernels: floating and int64
        _expect(name, input)
    x, unbatched = _batched(name, input)
    k = _triple(name, kernel_size, "kernel_size")
    s = k if stride is None or stride == () or stride == [] else _triple(name, stride, "stride")
    p = _triple(name, padding, "padding")
    if any(2 * pi > ki for pi, ki in zip(p, k)):
        raise plugrad.ArgumentError(f"{name}: pad should be at most half of effective kernel "
                                    f"size, but got pad={p} and kernel_size={k}")
    n, c, depth, h, w = x.shape
    # PyTorch's loop: each window's taps added in turn in the input's dtype, then divided
    outs = [_depth_geometry(name, size, ki, si, pi, 1, ceil_mode)[0]
            for size, ki, si, pi in zip((depth, h, w), k, s, p)]
    out_d, ho, wo = outs
    total = _window_sum(x, *_sliding_table((depth, h, w), k, s, p, (1, 1, 1), outs))
    total = total.reshape(n, c, out_d, ho, wo)
    if divisor_override:
        count = divisor_override
    else:
        cd = _counts(depth, k[0], s[0], p[0], out_d, count_include_pad)
        ch = _counts(h, k[1], s[1], p[1], ho, count_include_pad)
        cw = _counts(w, k[2], s[2], p[2], wo, count_include_pad)
        count = cd[:, None, None] * ch[None, :, None] * cw[None, None, :]
        count = plugrad.tensor(count, dtype=total.dtype, device=total.device)
    # int64: PyTorch's kernel divides the sum in C++ integer arithmetic
    out = total / count if total.dtype.is_floating_point else \
        total.div(count, rounding_mode="trunc")
    out = _named(_records(out, x), "AvgPool3DBackward0")  # its gradient records x (PyTorch's)
    return out.squeeze(0) if unbatched else out


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling: ``(sum over the window of x^p) ** (1/p)``."""
    k = _triple("lp_pool3d", kernel_size, "kernel_size")
    out = avg_pool3d(input.pow(norm_type), k, stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, k[0] * k[1] * k[2])


def adaptive_avg_pool3d(input, output_size):
    """Mean over PyTorch's adaptive windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    name = "adaptive_avg_pool3d"
    _expect(name, input)
    x, unbatched = _batched(name, input)
    sizes = _adaptive_sizes(name, x, output_size, 3)
    if tuple(sizes) == (1, 1, 1):  # PyTorch's global average: a mean (MeanBackward1)
        out = x.mean((-3, -2, -1), keepdim=True)
    else:
        out = _window_mean(x, *_adaptive_table(tuple(x.shape[2:]), sizes), sizes)
        out = _named(out, "AdaptiveAvgPool3DBackward0")
    return out.squeeze(0) if unbatched else out


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max over PyTorch's adaptive windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    name = "adaptive_max_pool3d"
    _expect(name, input)
    x, unbatched = _batched(name, input)
    sizes = _adaptive_sizes(name, x, output_size, 3)
    out, indices = _window_max(x, *_adaptive_table(tuple(x.shape[2:]), sizes), sizes)
    out = _named(out, "AdaptiveMaxPool3DBackward0")
    if unbatched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


# ---------------------------------------------------------------------- unpooling
def _max_unpool(name, spatial, input, indices, kernel_size, stride, padding, output_size):
    _expect(name, input)
    x, unbatched = _batched(name, input, spatial)
    idx = indices.unsqueeze(0) if unbatched else indices
    if tuple(idx.shape) != tuple(x.shape):
        raise plugrad.ShapeError(f"{name}: Expected shape of indices to be same as that of the "
                                 f"input tensor ({list(x.shape)}) but got indices tensor with "
                                 f"shape: {list(indices.shape)}")

    def tup(v, what):
        if isinstance(v, int):
            return (v,) * spatial
        v = tuple(int(i) for i in v)
        return v * spatial if len(v) == 1 else v
    k = tup(kernel_size, "kernel_size")
    s = k if stride is None else tup(stride, "stride")
    p = tup(padding, "padding")
    default = tuple((x.shape[2 + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(spatial))
    if output_size is None:
        size = default
    else:
        size = tuple(output_size)[-spatial:]
        for i, (got, want) in enumerate(zip(size, default)):
            if not want - s[i] < got < want + s[i]:
                raise ValueError(f"{name}: invalid output_size {tuple(output_size)} (dim {i} "
                                 f"must be between {want - s[i]} and {want + s[i]})")
    n, c = x.shape[0], x.shape[1]
    numel = math.prod(size)
    flat_idx = idx.reshape(n, c, -1)
    if flat_idx.numel() and bool(((flat_idx < 0) | (flat_idx >= numel)).any()):
        raise RuntimeError(f"{name}: Found an invalid max index (the output has {numel} "
                           f"elements per channel)")
    out = plugrad.zeros((n, c, numel), dtype=x.dtype, device=x.device).scatter(
        2, flat_idx, x.reshape(n, c, -1))
    out = out.reshape(n, c, *size)
    return out.squeeze(0) if unbatched else out


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of ``max_pool1d``: each value put back at its index, zeros elsewhere."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding,
                       output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of ``max_pool2d``: each value put back at its index, zeros elsewhere."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding,
                       output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of ``max_pool3d``: each value put back at its index, zeros elsewhere."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding,
                       output_size)


# ---------------------------------------------------------------------- channels, aliases
def channel_shuffle(input, groups):
    """Channels regrouped: ``(N, g, C/g, *) -> (N, C/g, g, *)`` (ShuffleNet)."""
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    rest = tuple(input.shape[2:])
    out = input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)
    return out


native_channel_shuffle = channel_shuffle


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """``max_pool1d`` with its indices; unlike ``max_pool1d`` it takes integers (PyTorch's
    ``max_pool1d`` has no integer kernel, this spelling reaches the 2-D one that does)."""
    if not input.dtype.is_floating_point:
        return _sliding_max("max_pool1d", input, 1, kernel_size, stride, padding, dilation,
                            ceil_mode)
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """``max_pool2d`` with its indices (integers by gathered windows: the backends' kernel
    is for floating inputs)."""
    if not input.dtype.is_floating_point:
        return _sliding_max("max_pool2d", input, 2, kernel_size, stride, padding, dilation,
                            ceil_mode)
    return _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool3d(input, output_size, True)
