"""The window kernels of :class:`~plugrad.backends.xp_kernels.XpKernels` (im2col, fold,
conv2d and its gradients, max pooling), written once on ``self.xp`` for NumPy and CuPy.

im2col is one strided-slice copy per kernel tap (never a loop over pixels), and each
contraction one batched ``matmul`` that BLAS (or cuBLAS) runs.
"""
from __future__ import annotations

import math


def _window(i, d, s, out_n):
    """The slice of padded rows (or columns) that kernel tap ``i`` reads for ``out_n`` outputs."""
    return slice(i * d, i * d + s * (out_n - 1) + 1, s)


class XpWindowKernels:
    """The 2-D window kernels over ``self.xp``."""

    def _mm(self, a, b):
        """``matmul`` in ``a``'s dtype (NumPy multiplies bfloat16 into float32), quietly."""
        with self._quiet():  # inf * 0 inside: NaN
            out = self.xp.matmul(a, b)
        return out if out.dtype == a.dtype else self.xp.astype(out, a.dtype)

    def _taps(self, x, kernel, stride, padding, dilation, value=0):
        """Contiguous im2col ``(N, C, kh*kw, OH, OW)`` of ``x`` padded by ``value``: one
        strided slice copy per kernel tap (faster than copying a 6-D sliding-window view)."""
        xp = self.xp
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        if any(p for pair in padding for p in pair):
            x = xp.pad(x, ((0, 0), (0, 0)) + tuple(padding), mode="constant",
                       constant_values=value)
        n, c, hp, wp = x.shape
        oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
        out = xp.empty((n, c, kh * kw, oh, ow), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                out[:, :, i * kw + j] = x[:, :, _window(i, dh, sh, oh), _window(j, dw, sw, ow)]
        return out

    def _grouped_cols(self, x, weight_shape, stride, padding, dilation, groups):
        o, cg, kh, kw = weight_shape
        cols = self._taps(x, (kh, kw), stride, padding, dilation)
        n, _, _, oh, ow = cols.shape
        return cols.reshape(n, groups, cg * kh * kw, oh * ow), oh, ow

    def unfold2d(self, x, kernel, stride, padding, dilation, value=0):
        cols = self._taps(x, kernel, stride, padding, dilation, value)
        return cols.reshape(cols.shape[:2] + tuple(kernel) + cols.shape[3:])

    def fold2d(self, cols, input_hw, kernel, stride, padding, dilation):
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        (pt, pb), (pl, pr) = padding
        n, c, _, _, oh, ow = cols.shape
        out = self.xp.zeros((n, c, input_hw[0] + pt + pb, input_hw[1] + pl + pr),
                            dtype=cols.dtype)
        for i in range(kh):
            for j in range(kw):
                out[:, :, _window(i, dh, sh, oh), _window(j, dw, sw, ow)] += cols[:, :, i, j]
        return out[:, :, pt:pt + input_hw[0], pl:pl + input_hw[1]]

    def conv2d(self, x, w, stride, padding, dilation, groups):
        o = w.shape[0]
        cols, oh, ow = self._grouped_cols(x, w.shape, stride, padding, dilation, groups)
        out = self._mm(w.reshape(groups, o // groups, -1), cols)  # N, G, O/G, L
        return out.reshape(x.shape[0], o, oh, ow)

    def conv2d_grad_input(self, g, w, input_hw, stride, padding, dilation, groups):
        o, cg, kh, kw = w.shape
        n, _, oh, ow = g.shape
        wt = self.xp.matrix_transpose(w.reshape(groups, o // groups, cg * kh * kw))
        cols = self._mm(wt, g.reshape(n, groups, o // groups, oh * ow))
        return self.fold2d(cols.reshape(n, groups * cg, kh, kw, oh, ow), input_hw, (kh, kw),
                           stride, padding, dilation)

    def conv2d_grad_weight(self, g, x, weight_shape, stride, padding, dilation, groups):
        xp = self.xp
        o = weight_shape[0]
        cols, oh, ow = self._grouped_cols(x, weight_shape, stride, padding, dilation, groups)
        gm = g.reshape(g.shape[0], groups, o // groups, oh * ow)
        return xp.sum(self._mm(gm, xp.matrix_transpose(cols)), axis=0).reshape(weight_shape)

    def max_pool2d(self, x, kernel, stride, padding, dilation):
        xp = self.xp
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        (pt, _), (pl, _) = padding
        cols = self._taps(x, kernel, stride, padding, dilation, -math.inf)
        _, _, _, oh, ow = cols.shape
        tap = xp.argmax(cols, axis=2)
        out = xp.take_along_axis(cols, tap[:, :, None], axis=2)[:, :, 0]
        tap = xp.astype(tap, xp.int64, copy=False)
        ki, kj = tap // kw, tap % kw
        rows = (xp.arange(oh, dtype=xp.int64) * sh - pt)[:, None] + ki * dh
        cols_ = (xp.arange(ow, dtype=xp.int64) * sw - pl)[None, :] + kj * dw
        rows *= x.shape[3]
        rows += cols_
        return out, rows

    def max_pool2d_backward(self, g, indices, input_shape):
        n, c, h, w = input_shape
        flat = (n, c, g.shape[2] * g.shape[3])
        zeros = self.xp.zeros((n, c, h * w), dtype=g.dtype)
        out = self.scatter_add(zeros, 2, indices.reshape(flat), g.reshape(flat))
        return out.reshape(tuple(input_shape))
