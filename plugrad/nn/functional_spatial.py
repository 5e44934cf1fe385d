"""Spatial rearrangements of ``nn.functional``: ``pad`` (constant, reflect, replicate,
circular), ``pixel_shuffle``/``pixel_unshuffle``, ``unfold``/``fold``; and, re-exported from
their own modules, resampling (``functional_interp``) and the extra pools
(``functional_pooling``).

The non-constant paddings are one ``index_select`` per padded dimension with the source
position of every output position (exact, any dtype; the gradient sums the copies back);
pixel shuffles are a reshape, a permute and a reshape, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

import plugrad
from plugrad.core.autograd.constant_grads import records as _records
from plugrad.core.autograd.node import present_as as _named
from plugrad.core.ops.conv import fold2d as _fold2d
from plugrad.core.ops.conv import unfold2d as _unfold2d
from plugrad.core.ops.movement import pad as _constant_pad
from plugrad.core.ops.window import window_geometry as _window_geometry
from plugrad.nn._dtypes import expect_dtype as _expect

from plugrad.nn.functional_interp import *  # noqa: F401,F403 - interpolate, upsample*
from plugrad.nn.functional_interp import __all__ as _interp_all
from plugrad.nn.functional_pooling import *  # noqa: F401,F403 - 1-d, Lp and adaptive pools
from plugrad.nn.functional_pooling import __all__ as _pooling_all

__all__ = ["pad", "pixel_shuffle", "pixel_unshuffle", "unfold", "fold"] + _interp_all + \
    _pooling_all

_MODES = ("constant", "reflect", "replicate", "circular")
_NODE = {"reflect": "ReflectionPad{}DBackward0", "replicate": "ReplicationPad{}DBackward0"}


def _source_positions(mode, n, before, after):
    """Where each of the ``n + before + after`` outputs along a dimension reads from."""
    p = np.arange(-before, n + after)
    if mode == "reflect":
        p = np.abs(p)
        return np.where(p > n - 1, 2 * (n - 1) - p, p)
    if mode == "replicate":
        return np.clip(p, 0, n - 1)
    # circular: a negative side crops first, and the padding wraps around what is left
    lo, hi = max(-before, 0), n - max(-after, 0)
    return lo + (np.arange(-max(before, 0), hi - lo + max(after, 0)) % (hi - lo))


def _check_widths(mode, x, dim, before, after):
    n = x.shape[dim]
    if mode == "reflect" and (before >= n or after >= n):
        raise plugrad.ShapeError(f"pad: Argument #4: Padding size should be less than the "
                                 f"corresponding input dimension, but got: padding "
                                 f"({before}, {after}) at dimension {dim} of input "
                                 f"{list(x.shape)}")
    if mode == "circular":
        if before > n or after > n:
            raise plugrad.ShapeError("pad: Padding value causes wrapping around more than "
                                     f"once (padding ({before}, {after}) at dimension {dim} "
                                     f"of input {list(x.shape)})")
    if n == 0 and (before > 0 or after > 0):
        raise plugrad.ShapeError(f"pad: mode {mode!r} cannot pad the empty dimension {dim} "
                                 f"of input {list(x.shape)}")
    if n + before + after < 1:
        raise plugrad.ShapeError(f"pad: input (size {n} at dimension {dim}) is too small for "
                                 f"padding ({before}, {after}): the output would be empty")


def pad(input, pad, mode: str = "constant", value=None):  # noqa: A002 - PyTorch's names
    """``torch.nn.functional.pad``: pairs for the last dimension first; negative crops."""
    if mode == "constant":
        return _constant_pad(input, pad, mode, value)
    if mode not in _MODES:
        raise NotImplementedError(f"pad: Unrecognised padding mode {mode!r} (expected one of "
                                  f"{', '.join(_MODES)})")
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise plugrad.ShapeError("pad: Padding length must be divisible by 2")
    if len(pad) > 2 * input.ndim:
        raise plugrad.ShapeError(f"pad: Padding length should be less than or equal to two "
                                 f"times the input dimension but got padding length "
                                 f"{len(pad)} and input of dimension {input.ndim}")
    if value is not None and value != 0:
        raise plugrad.ShapeError(f'pad: Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"pad: Only 2D, 3D, 4D, 5D padding with non-constant "
                                  f"padding are supported for now (got a {input.ndim}-D input "
                                  f"and {len(pad)} padding values, mode {mode!r})")
    if mode != "circular" and input.dtype == plugrad.bool:
        raise NotImplementedError(f"pad: mode {mode!r} is not implemented for bool tensors")
    out = input
    for i in range(k):
        dim, before, after = input.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]
        if before == 0 and after == 0:
            continue
        _check_widths(mode, input, dim, before, after)
        idx = _source_positions(mode, input.shape[dim], before, after)
        out = out.index_select(dim, plugrad.tensor(idx, dtype=plugrad.int64,
                                                   device=input.device))
    if mode != "circular":  # PyTorch's reflect/replicate backward is one op of the input
        out = _records(out, input)
    return _named(out, _NODE[mode].format(k)) if mode in _NODE and out is not input else out


# ---------------------------------------------------------------------- pixel shuffle
def _shuffle_checks(name, x, r, factor_name):
    if x.ndim < 3:
        raise plugrad.ShapeError(f"{name} expects input to have at least 3 dimensions, but "
                                 f"got input with {x.ndim} dimension(s)")
    if not isinstance(r, int) or r <= 0:
        raise plugrad.ShapeError(f"{name} expects a positive {factor_name}, but got {r}")


def pixel_shuffle(input, upscale_factor: int):  # noqa: A002
    """``(*, C r^2, H, W) -> (*, C, H r, W r)``."""
    r = upscale_factor
    _shuffle_checks("pixel_shuffle", input, r, "upscale_factor")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise plugrad.ShapeError(f"pixel_shuffle expects its input's 'channel' dimension to "
                                 f"be divisible by the square of upscale_factor, but "
                                 f"input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor: int):  # noqa: A002
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``: the inverse of :func:`pixel_shuffle`."""
    r = downscale_factor
    _shuffle_checks("pixel_unshuffle", input, r, "downscale_factor")
    *lead, c, h, w = input.shape
    for what, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise plugrad.ShapeError(f"pixel_unshuffle expects {what} to be divisible by "
                                     f"downscale_factor, but input.size({d})={size} is not "
                                     f"divisible by {r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# ---------------------------------------------------------------------- unfold / fold
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """im2col: ``(N, C * kh * kw, L)`` blocks of ``(N, C, H, W)`` (or of an unbatched
    ``(C, H, W)``: ``(C * kh * kw, L)``)."""
    _expect("unfold", input, bool_=True)
    if input.ndim not in (3, 4):
        raise plugrad.ShapeError(f"unfold: Expected 3D or 4D (batch mode) tensor with "
                                 f"optional 0 size batch dimension for input, but got: "
                                 f"{list(input.shape)}")
    x = input.unsqueeze(0) if input.ndim == 3 else input
    kernel, stride, pads, dilation = _window_geometry("unfold", kernel_size, stride, padding,
                                                      dilation)
    cols = _unfold2d(x, kernel, stride, pads, dilation)
    n, c, kh, kw, oh, ow = cols.shape
    out = cols.reshape(n, c * kh * kw, oh * ow)
    return out.squeeze(0) if input.ndim == 3 else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """col2im, the adjoint of :func:`unfold`: sums blocks back into ``(N, C, *output_size)``
    (an unbatched ``(C * kh * kw, L)`` gives ``(C, *output_size)``)."""
    _expect("fold", input, bool_=True)
    if input.ndim not in (2, 3):
        raise plugrad.ShapeError(f"fold: Expected 2D or 3D (batch mode) tensor for input with "
                                 f"possibly 0 batch size and non-zero dimensions for input, "
                                 f"but got: {list(input.shape)}")
    x = input.unsqueeze(0) if input.ndim == 2 else input
    if x.dtype == plugrad.bool:  # overlapping blocks add as bools do in PyTorch: "or"
        out = _fold(x.long(), output_size, kernel_size, dilation, padding, stride) > 0
    else:
        out = _fold(x, output_size, kernel_size, dilation, padding, stride)
    return out.squeeze(0) if input.ndim == 2 else out


def _fold(x, output_size, kernel_size, dilation, padding, stride):
    kernel, stride, pads, dilation = _window_geometry("fold", kernel_size, stride, padding,
                                                      dilation)
    hw = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    oh = (hw[0] + sum(pads[0]) - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    ow = (hw[1] + sum(pads[1]) - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    n, ck, l_ = x.shape
    c = ck // (kernel[0] * kernel[1])
    if c * kernel[0] * kernel[1] != ck or oh * ow != l_ or oh < 1 or ow < 1:
        raise plugrad.ShapeError(f"fold: input of shape {list(x.shape)} does not match "
                                 f"kernel_size {kernel} and output_size {hw} ({oh} x {ow} "
                                 f"blocks)")
    return _fold2d(x.reshape(n, c, kernel[0], kernel[1], oh, ow), hw, kernel, stride, pads,
                   dilation)
