"""Fast forms of the optional kernels, written once on ``self.xp`` for NumPy and CuPy.

:class:`XpKernels` is a mixin named in the bases of ``NumPyBackend`` and ``CuPyBackend``
(``class NumPyBackend(XpKernels, ArrayAPIBackend)``). Where the composites in
``composites.py`` are written in primitives, these use the namespace directly: im2col as one
strided-slice copy per kernel tap (never a loop over pixels), each contraction one batched
``matmul`` that BLAS runs, fused expressions with in-place temporaries, no needless
``broadcast_to``/transpose copies. They use only what NumPy and CuPy both have (in-place
operators, ``pad``, ``take_along_axis``, slice assignment), so array-api-strict keeps the
composites.

An elementwise stage that a backend can compile into one kernel goes through
:meth:`XpKernels._fused`: it returns None here (the ``xp`` expression runs), and CuPy's
override launches the :class:`~plugrad.backends.cupy.kernels.KernelSpec` of that name.
"""
from __future__ import annotations

import contextlib
import math

_NULL = contextlib.nullcontext()
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_SQRT_HALF = math.sqrt(0.5)


def _window(i, d, s, out_n):
    """The slice of padded rows (or columns) that kernel tap ``i`` reads for ``out_n`` outputs."""
    return slice(i * d, i * d + s * (out_n - 1) + 1, s)


class XpKernels:
    """The nn and activation kernels over ``self.xp`` (mixed into NumPy's and CuPy's backends)."""

    def _fused(self, name: str, *arrays):
        """The result of the fused elementwise kernel ``name`` on ``arrays``, or None where
        this backend has none (then the caller computes the same expression with ``xp``)."""
        return None

    # ------------------------------------------------------------------ activations
    def sigmoid(self, x):
        out = self._fused("sigmoid", x)
        if out is not None:
            return out
        xp = self.xp
        e = xp.exp(-xp.abs(x))  # <= 1: no overflow on either side
        r = 1.0 / (1.0 + e)
        return xp.where(x < 0, e * r, r)

    def _sub_exp(self, x, m):
        """``exp(x - m)`` in one pass where fused."""
        out = self._fused("sub_exp", x, m)
        if out is not None:
            return out
        d = x - m  # (a NumPy scalar for 0-d input: no ``out=`` then)
        return self.xp.exp(d, out=d) if d.ndim else self.xp.exp(d)  # ufunc ``out=``

    def _shift(self, x, axes):
        """What softmax-like kernels subtract before ``exp``: the maximum over ``axes`` (kept),
        with infinities replaced by 0 (so an all ``-inf`` slice never computes
        ``-inf - -inf``); and whether the maximum was finite everywhere, in which case nothing
        after it can meet an IEEE edge case and the error state need not be set. This version
        never looks at the values on the host (that would sync a GPU), so it says False;
        NumPy's checks."""
        xp = self.xp
        m = self.max(x, axes, True)
        return xp.where(xp.isinf(m), 0.0, m), False

    def _quiet_if(self, finite: bool):
        return _NULL if finite else self._quiet()

    def _log_sum_exp(self, x, m, axes):
        out = self.xp.log(self.sum(self._sub_exp(x, m), axes, True))
        out += m
        return out

    def softmax(self, x, axis):
        m, finite = self._shift(x, (axis,))
        with self._quiet_if(finite):  # an all -inf row is NaN, quietly (as in PyTorch)
            e = self._sub_exp(x, m)
            e /= self.sum(e, (axis,), True)
        return e

    def log_softmax(self, x, axis):
        m, finite = self._shift(x, (axis,))
        with self._quiet_if(finite):
            return x - self._log_sum_exp(x, m, (axis,))

    def logsumexp(self, x, axes, keepdims):
        m, finite = self._shift(x, axes)
        with self._quiet_if(finite):
            out = self._log_sum_exp(x, m, axes)
        if keepdims:
            return out
        drop = range(x.ndim) if axes is None else axes
        return self.xp.reshape(out, tuple(n for d, n in enumerate(x.shape) if d not in drop))

    def gelu(self, x, approximate):
        out = self._fused("gelu_tanh" if approximate == "tanh" else "gelu_erf", x)
        if out is not None:
            return out
        if approximate == "tanh":
            u = x * x
            u *= x
            u *= 0.044715
            u += x
            u *= _SQRT_2_OVER_PI
            y = self.xp.tanh(u)
        else:
            y = self.erf(x * _SQRT_HALF)
        y += 1.0
        y *= x
        y *= 0.5
        return y

    # ------------------------------------------------------------------ normalization
    def layer_norm(self, x, weight, bias, n_axes, eps):
        xp = self.xp
        axes = tuple(range(x.ndim - n_axes, x.ndim))
        mean = xp.mean(x, axis=axes, keepdims=True)
        d = x - mean
        rstd = 1.0 / xp.sqrt(xp.mean(d * d, axis=axes, keepdims=True) + eps)
        mean, rstd = xp.astype(mean, x.dtype, copy=False), xp.astype(rstd, x.dtype, copy=False)
        if weight is not None and bias is not None:
            y = self._fused("normalize_affine", d, rstd, weight, bias)
            if y is not None:
                return y, mean, rstd
        y = (self._fused("normalize", d, rstd) if weight is None
             else self._fused("normalize_scale", d, rstd, weight))
        if y is None:
            y = d  # a temporary of ours: scaled in place
            y *= rstd
            if weight is not None:
                y *= weight
        if bias is not None:
            y += bias
        return y, mean, rstd

    # ------------------------------------------------------------------ windows
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
        out = self.xp.matmul(w.reshape(groups, o // groups, -1), cols)  # N, G, O/G, L
        return out.reshape(x.shape[0], o, oh, ow)

    def conv2d_grad_input(self, g, w, input_hw, stride, padding, dilation, groups):
        o, cg, kh, kw = w.shape
        n, _, oh, ow = g.shape
        wt = self.xp.matrix_transpose(w.reshape(groups, o // groups, cg * kh * kw))
        cols = self.xp.matmul(wt, g.reshape(n, groups, o // groups, oh * ow))
        return self.fold2d(cols.reshape(n, groups * cg, kh, kw, oh, ow), input_hw, (kh, kw),
                           stride, padding, dilation)

    def conv2d_grad_weight(self, g, x, weight_shape, stride, padding, dilation, groups):
        xp = self.xp
        o = weight_shape[0]
        cols, oh, ow = self._grouped_cols(x, weight_shape, stride, padding, dilation, groups)
        gm = g.reshape(g.shape[0], groups, o // groups, oh * ow)
        return xp.sum(xp.matmul(gm, xp.matrix_transpose(cols)), axis=0).reshape(weight_shape)

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
