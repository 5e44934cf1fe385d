"""``nn.functional.interpolate`` (and ``upsample*``): nearest, nearest-exact, linear,
bilinear, bicubic, trilinear and area resampling, PyTorch's values.

Every mode but ``area`` is separable: along each resized dimension, each output is a
weighted sum of a few input positions (1 for nearest, 2 for linear, 4 for cubic). So a
mode is, per dimension from the last to the first, one ``index_select`` per tap times its
weight, summed in tap order: the same products and sums, in the same order, as PyTorch's
CPU kernel (its source positions and weights are computed here as it computes them, in
float32 for float32/half inputs and float64 for float64). The gradient is that of
``index_select`` (the copies summed back), to any order. ``area`` is adaptive average
pooling, as in PyTorch.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import plugrad

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}
_A = -0.75  # PyTorch's bicubic convolution constant


def _fma(a, b, c, t):
    """``a * b + c`` rounded once to dtype ``t``: PyTorch's CPU kernels are compiled with
    fused multiply-adds, and its source positions and weights are computed so."""
    a, b, c = (np.broadcast_to(np.asarray(v, dtype=t), np.broadcast(a, b, c).shape)
               for v in (a, b, c))
    if t is np.float32:  # the float64 product of two float32 values is exact
        return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(t)
    out = [float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
           for x, y, z in zip(a.ravel(), b.ravel(), c.ravel())]
    return np.array(out, dtype=t).reshape(a.shape)


def _scale(t, n_in, n_out, align_corners, scale):
    """``area_pixel_compute_scale``: input steps per output step, in dtype ``t``."""
    if align_corners:
        return t(n_in - 1) / t(n_out - 1) if n_out > 1 else t(0)
    if scale is not None and scale > 0:
        return t(1.0 / scale)
    return t(n_in) / t(n_out)


def _source(t, scale, n_out, align_corners, cubic=False):
    """``area_pixel_compute_source_index`` of every output position."""
    d = np.arange(n_out).astype(t)
    if align_corners:
        return scale * d
    src = _fma(scale, d + t(0.5), t(-0.5), t)
    return src if cubic else np.maximum(src, t(0))


def _floor_index(src, n_in):
    """``guard_index_and_lambda``: PyTorch floors in float32 (``floorf``) for every dtype."""
    i = np.floor(src.astype(np.float32)).astype(np.int64)
    i = np.minimum(i, n_in - 1)
    lam = np.minimum(np.maximum(src - i.astype(src.dtype), src.dtype.type(0)),
                     src.dtype.type(1))
    return i, lam


def _taps(mode, n_in, n_out, align_corners, scale, t):
    """``[(source indices, weights or None), ...]`` along one dimension (None: identity)."""
    if mode in ("nearest", "nearest-exact"):
        s = _scale(t, n_in, n_out, False, scale)
        if mode == "nearest":
            src = s * np.arange(n_out).astype(t)
        else:
            src = (_source(t, s, n_out, False).astype(np.float64) + 0.5)
        i = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
        return None if n_out == n_in and (i == np.arange(n_in)).all() else [(i, None)]
    s = _scale(t, n_in, n_out, align_corners, scale)
    if mode == "bicubic":
        src = _source(t, s, n_out, align_corners, cubic=True)
        i = np.floor(src.astype(np.float32)).astype(np.int64)  # floorf, unclamped, as PyTorch's
        lam = (src - i.astype(t)).astype(t)
        a, one = t(_A), t(1.0)

        def near(x):  # ((A + 2) x - (A + 3)) x x + 1, for |x| <= 1 (as PyTorch rounds it)
            return _fma(a + t(2), x, -(a + t(3)), t) * x * x + one

        def far(x):  # ((A x - 5 A) x + 8 A) x - 4 A, for 1 < |x| < 2
            return _fma(_fma(a, x, -(t(5) * a), t), x, t(8) * a, t) * x - t(4) * a
        x2 = (one - lam).astype(t)
        weights = (far((lam + 1.0).astype(t)), near(lam), near(x2), far((x2 + 1.0).astype(t)))
        return [(np.clip(i + j - 1, 0, n_in - 1), w) for j, w in enumerate(weights)]
    if n_out == n_in:
        return None  # PyTorch copies (weights 1 and 0)
    i0, lam1 = _floor_index(_source(t, s, n_out, align_corners), n_in)
    i1 = i0 + (i0 < n_in - 1)
    return [(i0, t(1.0) - lam1), (i1, lam1)]


def _resample(x, dim, taps):
    """``sum_j x[..., idx_j, ...] * w_j`` along ``dim``, in tap order."""
    out = None
    for idx, w in taps:
        v = x.index_select(dim, plugrad.tensor(idx, dtype=plugrad.int64, device=x.device))
        if w is not None:
            shape = [1] * x.ndim
            shape[dim] = len(w)
            v = v * plugrad.tensor(w.reshape(shape), dtype=x.dtype, device=x.device)
        out = v if out is None else out + v
    return out


def _output_size(x, size, scale_factor, recompute_scale_factor, mode):
    dim = x.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * dim
        if len(sizes) != dim:
            raise ValueError(f"Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(x.shape[2:])} and output size of {size}. Please provide "
                             f"input tensor in (N, C, d1, d2, ...,dK) format and output size "
                             f"in (o1, o2, ...,oK) format.")
        if not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool)
                   for s in sizes):
            raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, int] "
                            f"or Tuple[int, int, int], but got size with types "
                            f"{[type(s) for s in sizes]}")
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return [int(s) for s in sizes], [None] * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    scales = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else \
        [scale_factor] * dim
    if len(scales) != dim:
        raise ValueError(f"Input and scale_factor must have the same number of spatial "
                         f"dimensions, but got input with spatial dimensions of "
                         f"{list(x.shape[2:])} and scale_factor of shape {scale_factor}. "
                         f"Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                         f"scale_factor in (s1, s2, ...,sK) format.")
    sizes = [math.floor(float(n) * float(s)) for n, s in zip(x.shape[2:], scales)]
    if recompute_scale_factor or mode == "area":
        return sizes, [None] * dim
    return sizes, [float(s) for s in scales]


def _check_rank(x, mode):
    want = _LINEAR.get(mode)
    if x.ndim not in (3, 4, 5) or (mode == "bicubic" and x.ndim != 4):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {x.ndim}D) for the modes: nearest | linear | bilinear "
                                  f"| bicubic | trilinear | area | nearest-exact (got {mode})")
    if want is not None and x.ndim != want + 2:
        raise NotImplementedError(f"Got {x.ndim}D input, but {mode} mode needs "
                                  f"{want + 2}D input")


def interpolate(input, size=None, scale_factor=None, mode="nearest",  # noqa: A002
                align_corners=None, recompute_scale_factor=None, antialias=False):
    """Resample the spatial dimensions of ``(N, C, *spatial)`` to ``size`` or by
    ``scale_factor`` (PyTorch's ``F.interpolate``)."""
    x = input
    if not isinstance(x, plugrad.Tensor):
        raise TypeError(f"interpolate: expected input to be a Tensor, got {type(x).__name__}")
    if mode not in _MODES:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {x.ndim}D) for the modes: nearest | linear | bilinear "
                                  f"| bicubic | trilinear | area | nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if x.ndim < 3:
        _check_rank(x, mode)
    sizes, scales = _output_size(x, size, scale_factor, recompute_scale_factor, mode)
    if antialias:
        if not (mode in ("bilinear", "bicubic") and x.ndim == 4):
            raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes "
                             "and requires a 4-D tensor as input")
        raise NotImplementedError("interpolate: antialias=True is not implemented")
    _check_rank(x, mode)
    floating = x.dtype.is_floating_point
    if not floating and not (mode in ("nearest", "nearest-exact") and x.dtype == plugrad.uint8):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not implemented for "
                                  f"{x.dtype} tensors")
    if min(sizes) < 1 or min(x.shape[2:]) < 1:
        raise plugrad.ShapeError(f"interpolate: Input and output sizes should be greater than "
                                 f"0, but got input {list(x.shape[2:])} output {sizes}")
    if mode == "area":
        pool = {1: plugrad.nn.functional.adaptive_avg_pool1d,
                2: plugrad.nn.functional.adaptive_avg_pool2d}.get(x.ndim - 2)
        if pool is None:
            raise NotImplementedError("interpolate: mode 'area' is implemented for 3-D and "
                                      "4-D inputs (adaptive_avg_pool3d is not available)")
        return pool(x, sizes)
    t = np.float64 if x.dtype == plugrad.float64 else np.float32
    half = x.dtype in (plugrad.float16, plugrad.bfloat16) and mode not in (
        "nearest", "nearest-exact")  # weighted in float32, rounded once (PyTorch's opmath)
    out = x.float() if half else x
    for d in reversed(range(x.ndim - 2)):  # the last dimension first, as PyTorch nests
        taps = _taps(mode, x.shape[2 + d], sizes[d], align_corners, scales[d], t)
        if taps is not None:
            out = _resample(out, 2 + d, taps)
    if half:
        return out.to(x.dtype)
    return out if out is not x else x.clone()


def upsample(input, size=None, scale_factor=None, mode="nearest",  # noqa: A002
             align_corners=None):
    """Deprecated spelling of :func:`interpolate`."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):  # noqa: A002
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):  # noqa: A002
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
