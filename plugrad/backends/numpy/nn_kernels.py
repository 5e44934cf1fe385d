"""NumPy's fast paths for the contract's nn kernels (conv, pooling, layer norm, GELU).

im2col is one strided-slice copy per kernel tap (never a loop over pixels) and each
contraction is one batched ``matmul``/``einsum`` that BLAS runs. Importing this module installs
the kernels on :class:`NumPyBackend`; the registry picks them up when it builds the table.
"""
from __future__ import annotations

import math

import numpy as np

from plugrad.backends.numpy import NumPyBackend


def _taps(x, kernel, stride, padding, dilation, value=0, xp=np):
    """Contiguous im2col ``(N, C, kh*kw, OH, OW)`` of ``x`` padded by ``value``: one strided
    slice copy per kernel tap (faster than copying a 6-D sliding-window view). ``xp`` is the
    array namespace: the CuPy backend runs the same code."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    if any(p for pair in padding for p in pair):
        x = xp.pad(x, ((0, 0), (0, 0)) + tuple(padding), mode="constant", constant_values=value)
    n, c, hp, wp = x.shape
    oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    out = xp.empty((n, c, kh * kw, oh, ow), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * kw + j] = x[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                                      j * dw:j * dw + sw * (ow - 1) + 1:sw]
    return out


def unfold2d(self, x, kernel, stride, padding, dilation, value=0):
    cols = _taps(x, kernel, stride, padding, dilation, value)
    return cols.reshape(cols.shape[:2] + tuple(kernel) + cols.shape[3:])


def fold2d(self, cols, input_hw, kernel, stride, padding, dilation):
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    (pt, pb), (pl, pr) = padding
    n, c, _, _, oh, ow = cols.shape
    out = np.zeros((n, c, input_hw[0] + pt + pb, input_hw[1] + pl + pr), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                j * dw:j * dw + sw * (ow - 1) + 1:sw] += cols[:, :, i, j]
    return out[:, :, pt:pt + input_hw[0], pl:pl + input_hw[1]]


def _grouped_cols(x, weight_shape, stride, padding, dilation, groups):
    o, cg, kh, kw = weight_shape
    cols = _taps(x, (kh, kw), stride, padding, dilation)
    n, _, _, oh, ow = cols.shape
    return cols.reshape(n, groups, cg * kh * kw, oh * ow), oh, ow


def conv2d(self, x, w, stride, padding, dilation, groups):
    o = w.shape[0]
    cols, oh, ow = _grouped_cols(x, w.shape, stride, padding, dilation, groups)
    out = np.matmul(w.reshape(groups, o // groups, -1), cols)  # N, G, O/G, L
    return out.reshape(x.shape[0], o, oh, ow).astype(x.dtype, copy=False)  # bfloat16 stays


def conv2d_grad_input(self, g, w, input_hw, stride, padding, dilation, groups):
    o, cg, kh, kw = w.shape
    n, _, oh, ow = g.shape
    wt = w.reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
    cols = np.matmul(wt, g.reshape(n, groups, o // groups, oh * ow)).astype(g.dtype, copy=False)
    return fold2d(self, cols.reshape(n, groups * cg, kh, kw, oh, ow), input_hw, (kh, kw),
                  stride, padding, dilation)


def conv2d_grad_weight(self, g, x, weight_shape, stride, padding, dilation, groups):
    o = weight_shape[0]
    cols, oh, ow = _grouped_cols(x, weight_shape, stride, padding, dilation, groups)
    gm = g.reshape(g.shape[0], groups, o // groups, oh * ow)
    out = np.matmul(gm, cols.transpose(0, 1, 3, 2)).sum(axis=0).reshape(weight_shape)
    return out.astype(g.dtype, copy=False)  # NumPy's matmul gives float32 for bfloat16


def max_pool2d(self, x, kernel, stride, padding, dilation):
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    (pt, _), (pl, _) = padding
    cols = _taps(x, kernel, stride, padding, dilation, -np.inf)
    _, _, _, oh, ow = cols.shape
    tap = cols.argmax(axis=2)
    out = np.take_along_axis(cols, tap[:, :, None], axis=2)[:, :, 0]
    ki, kj = np.divmod(tap, kw)
    rows = (np.arange(oh) * sh - pt)[:, None] + ki * dh
    cols_ = (np.arange(ow) * sw - pl)[None, :] + kj * dw
    return out, (rows * x.shape[3] + cols_).astype(np.int64)


def layer_norm(self, x, weight, bias, n_axes, eps):
    axes = tuple(range(x.ndim - n_axes, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    d = x - mean
    rstd = 1.0 / np.sqrt((d * d).mean(axis=axes, keepdims=True) + eps)
    y = d * rstd
    if weight is not None:
        y *= weight
    if bias is not None:
        y += bias
    return y, mean.astype(x.dtype, copy=False), rstd.astype(x.dtype, copy=False)


def gelu(self, x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1.0 + self.erf(x * math.sqrt(0.5)))


KERNELS = {f.__name__: f for f in (unfold2d, fold2d, conv2d, conv2d_grad_input,
                                    conv2d_grad_weight, max_pool2d, layer_norm, gelu)}


def install(cls=NumPyBackend) -> None:
    """Make the kernels methods of ``cls`` (the registry resolves them when it builds tables)."""
    for name, fn in KERNELS.items():
        setattr(cls, name, fn)


install()
