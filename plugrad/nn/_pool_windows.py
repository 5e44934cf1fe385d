"""Max and mean over gathered windows, with PyTorch's CPU loop semantics spelled out.

PyTorch's max pools scan each window in row-major order and keep a tap when
``val > maxval or isnan(val)``: the first of equal maxima, the *last* NaN, and, for a
window of ``-inf`` only, its first tap inside the input. The volumetric and uneven
adaptive pools here gather every window's taps (a ``(P, K)`` table of flat positions
into the ``D*H*W`` plane, with a mask of the taps inside the input), choose the index by
those rules, and take the value with ``gather``: its gradient is PyTorch's (the output
gradient added at the chosen index) and the value is the input's own (no ``0 * inf``).
"""
from __future__ import annotations

import math

import numpy as np

import plugrad
from plugrad.core.autograd.constant_grads import records as _records
from plugrad.core.ops.window import out_size as _out_size
from plugrad.nn._dtypes import expect_dtype as _expect


def _combine(per_dim, sizes):
    """Per-dim ``(O_i, K_i)`` positions and masks -> ``(P, K)`` flat positions and mask."""
    flat, ok = None, None
    for (pos, valid), size in zip(per_dim, sizes):
        if flat is None:
            flat, ok = pos, valid
            continue
        flat = (flat[:, None, :, None] * size + pos[None, :, None, :])
        ok = ok[:, None, :, None] & valid[None, :, None, :]
        p0, p1, k0, k1 = flat.shape
        flat, ok = flat.reshape(p0 * p1, k0 * k1), ok.reshape(p0 * p1, k0 * k1)
    return np.where(ok, flat, 0), ok


def sliding_table(sizes, kernel, stride, pads, dilation, outs):
    """Windows of a (padded, dilated) pool: tap ``j`` of output ``o`` at ``o*s - p + j*d``."""
    per_dim = []
    for n, k, s, p, d, o in zip(sizes, kernel, stride, pads, dilation, outs):
        pos = np.arange(o)[:, None] * s - p + np.arange(k)[None, :] * d
        per_dim.append((np.clip(pos, 0, n - 1), (pos >= 0) & (pos < n)))
    return _combine(per_dim, sizes)


def adaptive_table(sizes, outs):
    """PyTorch's adaptive windows ``[floor(i*n/o), ceil((i+1)*n/o))`` per dim."""
    per_dim = []
    for n, o in zip(sizes, outs):
        lo = np.array([(i * n) // o for i in range(o)])
        hi = np.array([-(-((i + 1) * n) // o) for i in range(o)])
        j = np.arange(int((hi - lo).max()))[None, :]
        per_dim.append((np.minimum(lo[:, None] + j, hi[:, None] - 1), j < (hi - lo)[:, None]))
    return _combine(per_dim, sizes)


def _lowest(dtype):
    return -math.inf if dtype.is_floating_point else int(plugrad.iinfo(dtype).min)


def window_max(x, flat, ok, out_shape):
    """``(values, indices)`` of the max of each window of ``x`` ``(N, C, *sizes)``: ``flat``
    and ``ok`` from :func:`sliding_table` / :func:`adaptive_table`; ``out_shape`` the pooled
    sizes. Indices are flat positions into the input's spatial plane."""
    n, c = x.shape[0], x.shape[1]
    plane = x.reshape(n, c, -1)
    p, k = flat.shape
    dev = x.device
    flat_t = plugrad.tensor(flat, dtype=plugrad.int64, device=dev)
    ok_t = plugrad.tensor(ok, dtype=plugrad.bool, device=dev)
    taps = plane.detach().index_select(2, flat_t.reshape(-1)).reshape(n, c, p, k)
    low = _lowest(x.dtype)
    score = plugrad.where(ok_t, taps, low)
    arg = score.argmax(-1)  # the first maximum
    # a window of the lowest value only: its first tap inside the input (PyTorch's start)
    first = plugrad.tensor(ok.argmax(1), dtype=plugrad.int64, device=dev)
    arg = plugrad.where(score.amax(-1) == low, first, arg)
    if x.dtype.is_floating_point:
        nan = taps.isnan() & ok_t
        last = (k - 1) - nan.flip(-1).to(plugrad.int64).argmax(-1)
        arg = plugrad.where(nan.any(-1), last, arg)
    index = flat_t.expand(n, c, p, k).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    out = _records(plane.gather(2, index), x)
    shape = (n, c) + tuple(out_shape)
    return out.reshape(shape), index.reshape(shape)


def window_mean(x, flat, ok, out_shape):
    """The mean of each adaptive window's taps inside the input, as PyTorch's CPU loop:
    ``sum += v`` tap by tap in row-major order in the input's dtype, then ``sum / kT / kH /
    kW`` (a pairwise or float32 sum stays finite where its sum overflows to inf, or cancels
    huge values in another order); a NaN or inf elsewhere in the input never reaches a
    window that does not hold it. One pass per tap (windows are small: a global average is
    a mean)."""
    out = window_sum(x, flat, ok)
    for cnt in _adaptive_counts(tuple(x.shape[2:]), tuple(out_shape)):
        out = out / plugrad.tensor(cnt, dtype=x.dtype, device=x.device)
    return _records(out, x).reshape((x.shape[0], x.shape[1]) + tuple(out_shape))


def window_sum(x, flat, ok):
    """``(N, C, P)``: each window's taps inside the input added one by one in row-major
    order in ``x``'s dtype, from 0 (PyTorch's CPU pooling loops: a pairwise sum rounds,
    overflows and cancels huge values otherwise)."""
    n, c = x.shape[0], x.shape[1]
    p, k = flat.shape
    dev = x.device
    flat_t = plugrad.tensor(flat.reshape(-1), dtype=plugrad.int64, device=dev)
    ok_t = plugrad.tensor(ok, dtype=plugrad.bool, device=dev)
    taps = x.reshape(n, c, -1).index_select(2, flat_t).reshape(n, c, p, k)
    out = plugrad.where(ok_t[:, 0], taps[..., 0], 0) + 0
    for j in range(1, k):
        out = out + plugrad.where(ok_t[:, j], taps[..., j], 0)
    return out


def _adaptive_counts(sizes, outs):
    """Each output position's window length along each dim (row-major positions)."""
    per = [np.array([-(-((i + 1) * n) // o) - (i * n) // o for i in range(o)])
           for n, o in zip(sizes, outs)]
    return [g.reshape(-1) for g in np.meshgrid(*per, indexing="ij")]


def _tuple(name, v, what, nd):
    if isinstance(v, int):
        return (v,) * nd
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * nd
    if len(v) != nd:
        raise ValueError(f"{name}: {what} must be an int or a tuple of {nd} ints, got {v}")
    return v


def sliding_max(name, input, nd, kernel_size, stride, padding, dilation, ceil_mode):
    """``(values, indices)`` of an ``nd``-dim max pool by gathered windows (any real dtype:
    PyTorch's CPU max pools take integers)."""
    _expect(name, input, ints=True)
    if input.ndim not in (nd + 1, nd + 2):
        raise plugrad.ShapeError(f"{name}: Expected {nd + 1}D (unbatched) or {nd + 2}D "
                                 f"(batched) input, but got input of size: "
                                 f"{list(input.shape)}")
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    k = _tuple(name, kernel_size, "kernel_size", nd)
    s = k if stride is None or stride == () or stride == [] else \
        _tuple(name, stride, "stride", nd)
    p = _tuple(name, padding, "padding", nd)
    d = _tuple(name, dilation, "dilation", nd)
    if any(2 * pi > ki for pi, ki in zip(p, k)):
        raise plugrad.ArgumentError(f"{name}: pad should be at most half of effective kernel "
                                    f"size, but got pad={p} and kernel_size={k}")
    sizes = tuple(x.shape[2:])
    outs = tuple(_out_size(name, sizes[i], k[i], s[i], (p[i], p[i]), d[i], ceil_mode)
                 for i in range(nd))
    out, indices = window_max(x, *sliding_table(sizes, k, s, p, d, outs), outs)
    if unbatched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return out, indices


__all__ = ["sliding_table", "adaptive_table", "window_max", "window_mean", "sliding_max"]
