"""Pooling: max (one node, gradient by the ``max_pool2d_backward`` kernel), average and
adaptive average (composites of the window ops)."""
from __future__ import annotations

from plugrad.core.errors import ArgumentError

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.constant_grads import records
from plugrad.core.autograd.node import Node, present_as
from plugrad.core.autograd.record import record
from plugrad.core.factories import ones
from plugrad.core.grad_mode import _state
from plugrad.core.ops.conv import unfold2d
from plugrad.core.ops.declare import op
from plugrad.core.ops.indexing import index_select
from plugrad.core.ops.movement import pad_dims
from plugrad.core.ops.select import where
from plugrad.core.ops.shape import reshape, squeeze
from plugrad.core.ops.window import INT64, INTS, batched, out_size, tensor_args, window_geometry
from plugrad.core.tensor import _wrap
from plugrad.core.tracing import host_read


def _pool_geometry(name, x, kernel_size, stride, padding, dilation, ceil_mode):
    kernel, stride, pads, dilation = window_geometry(name, kernel_size, stride, padding,
                                                     dilation)
    for (p, _), k in zip(pads, kernel):
        if p > k // 2:
            raise ArgumentError(f"{name}: pad should be at most half of effective kernel size, "
                             f"but got pad={p}, kernel_size={k}")
    sizes = [out_size(name, x.shape[2 + i], kernel[i], stride[i], pads[i], dilation[i],
                      ceil_mode) for i in range(2)]
    # ceil_mode: pad bottom/right just enough for the last (partial) window
    pads = tuple((p0, max((o - 1) * s + d * (k - 1) + 1 - n - p0, 0))
                 for (p0, _), o, s, d, k, n in zip(pads, sizes, stride, dilation, kernel,
                                                   x.shape[2:]))
    return kernel, stride, pads, dilation


class MaxPool2DWithIndicesBackward0(Node):
    """Each output's gradient added at the input position its maximum came from."""

    records_inputs = True  # create_graph: its gradient records x (PyTorch's)

    def grad(self, F, g, idx):
        return (F.max_pool2d_backward(g, idx, self.shape),)


def _torch_index(k, x, out, idx, kernel, stride, pads, dilation):
    """PyTorch's loop keeps a tap when ``val > maxval or isnan(val)``, from ``maxval =
    -inf`` at the window's first tap inside the input: a window's NaN is its maximum and
    the *last* NaN (row-major) gives the index, and a window of ``-inf`` only gives its
    first tap inside the input. The kernel returns the first NaN, and may return a padded
    tap for ``-inf``: there, max pools of the flat positions (of the NaNs, ``-inf``
    elsewhere; of all of them, negated) give PyTorch's. Integers start from the dtype's
    minimum (the padding of :func:`_integer_max_pool`), which plays ``-inf``'s part."""
    if not x.dtype.is_floating_point:
        if not any(p for pair in pads for p in pair):
            return idx
        nan, low = None, k.eq(out, int(np.iinfo(x.dtype.name).min))
        has_nan, has_low = False, host_read(lambda b: bool(b.any()), k, low)
    else:
        nan, low = k.isnan(out), k.eq(out, -np.inf)
        # a host decision (re-checked on each replay of a captured step; an ONNX export
        # takes the example's): the common window without NaN or -inf costs no extra pool
        has_nan, has_low = host_read(lambda a, b: (bool(a.any()), bool(b.any())), k, nan,
                                     low)
    if not (has_nan or has_low):
        return idx
    n, c, h, w = x.shape
    dev = x.device.index
    pos = k.reshape(k.arange(0, h * w, 1, "float64", dev), (1, 1, h, w))
    if has_nan:
        key = k.where(k.isnan(x._data), pos, k.full((), -np.inf, "float64", dev))
        last, _ = k.max_pool2d(key, kernel, stride, pads, dilation)
        idx = k.where(nan, k.astype(last, "int64"), idx)
    if has_low:
        key = k.broadcast_to(k.neg(pos), tuple(x.shape))
        first, _ = k.max_pool2d(key, kernel, stride, pads, dilation)
        idx = k.where(low, k.astype(k.neg(first), "int64"), idx)
    return idx


def _integer_max_pool(k, x, kernel, stride, pads, dilation):
    """An integer tensor has no ``-inf`` to pad with: padded here with its dtype's minimum
    (PyTorch's initial maximum for integers), the kernel's flat indices into the padded
    plane mapped back to the input's."""
    (pt, pb), (pl, pr) = pads
    lo = int(np.iinfo(x.dtype.name).min)
    xp = k.pad(x._data, ((0, 0), (0, 0), (pt, pb), (pl, pr)), lo)
    out, idx = k.max_pool2d(xp, kernel, stride, ((0, 0), (0, 0)), dilation)
    wp, w = x.shape[3] + pl + pr, x.shape[3]
    rows = k.sub(k.floordiv(idx, wp), pt)
    cols = k.sub(k.sub(idx, k.mul(k.floordiv(idx, wp), wp)), pl)
    return out, k.add(k.mul(rows, w), cols)


@op(functional="max_pool2d")
def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    name = "max_pool2d"
    tensor_args(name, x, ints=INTS)
    x, unbatched = batched(name, x)
    kernel, stride, pads, dilation = _pool_geometry(name, x, kernel_size, stride, padding,
                                                    dilation, ceil_mode)
    k = x._k
    if x.dtype.is_floating_point or not any(p for pair in pads for p in pair):
        out, idx = k.max_pool2d(x._data, kernel, stride, pads, dilation)
    else:
        out, idx = _integer_max_pool(k, x, kernel, stride, pads, dilation)
    idx = _torch_index(k, x, out, idx, kernel, stride, pads, dilation)
    r = _wrap(out, x.dtype, x.device, k)
    indices = _wrap(idx, _dt.int64, x.device, k)
    if x._rg and _state.enabled:
        node = MaxPool2DWithIndicesBackward0()
        node.shape = tuple(x.shape)
        record(r, node, (x,), (indices,))
    if unbatched:
        r = present_as(squeeze(r, 0), "MaxPool2DWithIndicesBackward0")
        indices = squeeze(indices, 0)
    return (r, indices) if return_indices else r


@op(functional="avg_pool2d")
def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    name = "avg_pool2d"
    tensor_args(name, x, ints=INT64)
    x, unbatched = batched(name, x)
    kernel, stride, pads, dilation = _pool_geometry(name, x, kernel_size, stride, padding, 1,
                                                    ceil_mode)
    sums = unfold2d(x, kernel, stride, pads, dilation).sum((2, 3))
    divisor = divisor_override or _pool_counts(x, kernel, stride, pads, count_include_pad)
    if x.dtype.is_floating_point:
        out = sums / divisor
    else:  # PyTorch's int64 kernel: the sum divided in C++ integer arithmetic
        out = sums.div(divisor, rounding_mode="trunc")
    out = records(out, x)
    return present_as(squeeze(out, 0) if unbatched else out, "AvgPool2DBackward0")


def _pool_counts(x, kernel, stride, pads, count_include_pad):
    """How many elements each window averages (PyTorch: padding counts, ceil overhang not)."""
    plane = ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype, device=x.device)
    user = tuple((p0, p0) for (p0, _) in pads)
    plane = pad_dims(plane, ((0, 0), (0, 0)) + user, 1.0 if count_include_pad else 0.0)
    extra = tuple((0, max(p1 - p0, 0)) for (p0, p1) in pads)  # ceil overhang: not counted
    return unfold2d(plane, kernel, stride, extra, (1, 1)).sum((2, 3))


def _adaptive_taps(n_in, n_out):
    """``(n_out, K)`` positions of each adaptive window along one axis (the last position
    repeated to the widest window's ``K``) and which of them are the window's own."""
    lo = [(i * n_in) // n_out for i in range(n_out)]
    hi = [-(-((i + 1) * n_in) // n_out) for i in range(n_out)]
    width = max(b - a for a, b in zip(lo, hi))
    pos = np.array([[min(a + j, b - 1) for j in range(width)] for a, b in zip(lo, hi)])
    return pos, np.arange(width)[None, :] < (np.array(hi) - np.array(lo))[:, None]


def _adaptive_mean(x, oh, ow):
    """Each uneven adaptive window's sum over its own elements divided by its size: the
    windows gathered, the repeated positions masked out with ``where`` (an averaging matrix
    would multiply a NaN or inf elsewhere in the row by 0, and PyTorch's windows never see
    it)."""
    n, c, h, w = x.shape
    (rows, rok), (cols, cok) = _adaptive_taps(h, oh), _adaptive_taps(w, ow)
    flat = (rows[:, None, :, None] * w + cols[None, :, None, :]).reshape(oh, ow, -1)
    ok = (rok[:, None, :, None] & cok[None, :, None, :]).reshape(oh, ow, -1)
    k = x._k
    idx = _wrap(k.from_numpy(flat.reshape(-1), "int64", x.device.index), _dt.int64,
                x.device, k)
    mask = _wrap(k.from_numpy(ok, "bool", x.device.index), _dt.bool_, x.device, k)
    count = _wrap(k.from_numpy(ok.sum(-1), x.dtype.name, x.device.index), x.dtype,
                  x.device, k)
    half = x.dtype in (_dt.float16, _dt.bfloat16)  # summed in float32 (PyTorch's opmath)
    src = x.float() if half else x
    count = count.float() if half else count
    taps = reshape(index_select(reshape(src, (n, c, h * w)), 2, idx), (n, c, oh, ow, -1))
    out = where(mask, taps, 0.0).sum(-1) / count
    return out.to(x.dtype) if half else out


@op(functional="adaptive_avg_pool2d")
def adaptive_avg_pool2d(x, output_size):
    """Mean over PyTorch's adaptive windows (an average pool where they tile evenly)."""
    name = "adaptive_avg_pool2d"
    tensor_args(name, x)
    x, unbatched = batched(name, x)
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size, output_size)
    oh, ow = (x.shape[2 + i] if s is None else int(s) for i, s in enumerate(output_size))
    if oh <= 0 or ow <= 0:
        raise ValueError(f"{name}: output_size must be positive, got {output_size}")
    h, w = x.shape[2:]
    if (oh, ow) == (1, 1):  # PyTorch's mean: its gradient records nothing
        out = x.mean((2, 3), keepdim=True)
    elif h % oh == 0 and w % ow == 0:
        out = avg_pool2d(x, (h // oh, w // ow))
    else:
        out = records(_adaptive_mean(x, oh, ow), x)
    # PyTorch: a global average is a mean over the plane
    return present_as(squeeze(out, 0) if unbatched else out,
                      "MeanBackward1" if (oh, ow) == (1, 1) else "AdaptiveAvgPool2DBackward0")
