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

from plugrad.backends._xp_linalg import XpLinalgKernels
from plugrad.backends._xp_recurrent import XpRecurrentKernels
from plugrad.backends._xp_windows import XpWindowKernels
from plugrad.backends.array_api import along_axis_key

_NULL = contextlib.nullcontext()
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class XpKernels(XpWindowKernels, XpLinalgKernels, XpRecurrentKernels):
    """The nn and activation kernels over ``self.xp`` (mixed into NumPy's and CuPy's backends;
    the window kernels are in :class:`~plugrad.backends._xp_windows.XpWindowKernels`, the
    linear-algebra ones in :class:`~plugrad.backends._xp_linalg.XpLinalgKernels`, the LSTM
    layer in :class:`~plugrad.backends._xp_recurrent.XpRecurrentKernels`)."""

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
        # 1 / (1 + exp(-x)) as PyTorch's CPU kernel: exp(-x) overflows to inf below about
        # -88 (float32), giving 0 as PyTorch does; three passes and no branch per element
        # (a where on the sign costs ~10x a multiply on a random mask)
        with self._quiet():
            e = xp.exp(-x)
            if not e.ndim:
                return 1.0 / (1.0 + e)
            e += 1.0
            return xp.divide(1.0, e, out=e)

    def _sub_exp(self, x, m):
        """``exp(x - m)`` in one pass where fused."""
        out = self._fused("sub_exp", x, m)
        if out is not None:
            return out
        d = x - m  # (a NumPy scalar for 0-d input: no ``out=`` then)
        return self.xp.exp(d, out=d) if d.ndim else self.xp.exp(d)  # ufunc ``out=``

    def _shift(self, x, axes, keep_pos_inf=False):
        """What softmax-like kernels subtract before ``exp``: the maximum over ``axes`` (kept),
        with infinities replaced by 0 (so an all ``-inf`` slice never computes
        ``-inf - -inf``, and ``logsumexp`` of a slice holding ``+inf`` is ``inf``); with
        ``keep_pos_inf`` a ``+inf`` maximum stays (softmax is then NaN there, as in PyTorch).
        Also whether the maximum was finite everywhere, in which case nothing after it can
        meet an IEEE edge case and the error state need not be set. This version never looks
        at the values on the host (that would sync a GPU), so it says False; NumPy's checks."""
        xp = self.xp
        m = xp.max(x, axis=axes, keepdims=True)
        return xp.where((m == -math.inf) if keep_pos_inf else xp.isinf(m), 0.0, m), False

    def _sum_kept(self, x, axes):
        """``sum(x, axes)`` with the reduced dims kept (a hook: NumPy calls the ufunc method,
        which is a few microseconds cheaper than ``np.sum``)."""
        return self.xp.sum(x, axis=axes, keepdims=True)

    def _along_axis_key(self, index, axis: int) -> tuple:
        """:func:`~plugrad.backends.array_api.along_axis_key` on ``self.xp`` (a hook: NumPy
        keeps the aranges)."""
        return along_axis_key(index, axis, self.xp)

    def _quiet_if(self, finite: bool):
        return _NULL if finite else self._quiet()

    def _log_sum_exp(self, x, m, axes):
        out = self.xp.log(self._sum_kept(self._sub_exp(x, m), axes))
        out += m
        return out

    def softmax(self, x, axis):
        m, finite = self._shift(x, (axis,), keep_pos_inf=True)
        with self._quiet_if(finite):  # an all -inf row is NaN, quietly (as in PyTorch)
            e = self._sub_exp(x, m)
            e /= self._sum_kept(e, (axis,))
        return e

    def log_softmax(self, x, axis):
        return self._log_softmax_parts(x, axis)[0]

    def _log_softmax_parts(self, x, axis):
        """``log_softmax(x, axis)``, with what :meth:`softmax` of the same ``x`` would divide
        (``exp(x - m)`` and its sum, the same bits) and whether the shift was finite: a
        replay keeps them for the cross-entropy's backward (``numpy/_replay.py``)."""
        # a +inf maximum stays: the slice is NaN, as in PyTorch (logsumexp alone is inf)
        m, finite = self._shift(x, (axis,), keep_pos_inf=True)
        with self._quiet_if(finite):
            # ``(x - m) - log(sum(exp(x - m)))`` as PyTorch's kernel: ``x - (m + log(sum))``
            # rounds ``m + log 2`` to ``m`` near the dtype's maximum (giving 0 for -log 2)
            d = x - m
            e = self.xp.exp(d)
            s = self._sum_kept(e, (axis,))
            d -= self.xp.log(s)
            return d, e, s, finite

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
        y *= 0.5  # PyTorch's (x / 2) (1 + t): halving first, x = 1.7e308 does not overflow
        y *= x
        return y

    def silu(self, x):
        out = self._fused("silu", x)
        if out is None:
            out = self.sigmoid(x)  # a new array: scaled in place
            out *= x
        return out

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

    # ------------------------------------------------------------------ backward kernels
    def silu_backward(self, g, x):
        out = self._fused("silu_backward", g, x)
        if out is not None:
            return out
        s = self.sigmoid(x)
        out = 1.0 - s  # then x (1 - s) + 1, times s and g, in place
        out *= x
        out += 1.0
        out *= s
        out *= g
        return out

    def gelu_backward(self, g, x, approximate):
        out = self._fused("gelu_tanh_backward" if approximate == "tanh" else
                          "gelu_erf_backward", g, x)
        if out is not None:
            return out
        xp = self.xp
        if approximate == "tanh":
            x2 = x * x
            t = x2 * x
            t *= 0.044715
            t += x
            t *= _SQRT_2_OVER_PI
            t = xp.tanh(t)
            right = t * t  # right = x/2 (1 - t²) √(2/π) (1 + 3·0.044715 x²)
            right -= 1.0
            right *= -0.5
            right *= x
            x2 *= 3 * 0.044715
            x2 += 1.0
            x2 *= _SQRT_2_OVER_PI
            right *= x2
            t += 1.0  # left = (1 + t) / 2
            t *= 0.5
            t += right
        else:
            t = self.erf(x * _SQRT_HALF)  # cdf = (1 + erf(x/√2)) / 2
            t += 1.0
            t *= 0.5
            pdf = x * x
            pdf *= -0.5
            pdf = xp.exp(pdf)
            pdf *= _INV_SQRT_2PI
            pdf *= x
            t += pdf
        t *= g
        return t

    def softmax_backward(self, g, y, axis):
        gy = g * y
        s = self._sum_kept(gy, (axis,))
        out = self._fused("softmax_backward", g, y, s)
        if out is not None:
            return out
        gy = self.xp.subtract(g, s, out=gy)  # y * (g - s), in the product's temporary
        gy *= y
        return gy

    def log_softmax_backward(self, g, y, axis):
        s = self._sum_kept(g, (axis,))
        out = self._fused("log_softmax_backward", g, y, s)
        if out is not None:
            return out
        e = self.xp.exp(y)
        e *= s
        return self.xp.subtract(g, e, out=e)

    def layer_norm_backward(self, g, x, weight, mean, rstd, n_axes, output_mask):
        xp = self.xp
        axes, lead = tuple(range(x.ndim - n_axes, x.ndim)), tuple(range(x.ndim - n_axes))
        xhat = self._fused("standardize", x, mean, rstd)
        if xhat is None:
            xhat = x - mean
            xhat *= rstd
        gx = gw = gb = None
        if output_mask[0]:
            gh = g if weight is None else g * weight
            a = xp.mean(gh, axis=axes, keepdims=True)
            b = xp.mean(gh * xhat, axis=axes, keepdims=True)
            gx = self._fused("layer_norm_grad_input", gh, xhat, a, b, rstd)
            if gx is None:  # rstd * (gh - a - xhat * b)
                gx = gh - a
                b = xhat * b
                gx -= b
                gx *= rstd
        if output_mask[1] and weight is not None:
            gw = self.sum(g * xhat, lead, False)
        if output_mask[2]:
            gb = self.sum(g, lead, False)
        return gx, gw, gb

    def cross_entropy_backward(self, g, x, target, valid, scale):
        # a fresh array: the one-hot is subtracted in place
        return self._cross_entropy_grad(self.softmax(x, 1), g, target, valid, scale)

    def _cross_entropy_grad(self, p, g, target, valid, scale):
        """:meth:`cross_entropy_backward` from ``p = softmax(x, 1)`` (written into)."""
        with_class = tuple(target.shape[:1]) + (1,) + tuple(target.shape[1:])
        p[self._along_axis_key(target.reshape(with_class), 1)] -= 1.0
        p *= g * scale
        if valid is not None:  # an ignored row is exactly +0 (PyTorch), not (p - 1) * 0
            p = self.xp.where(valid.reshape(with_class), p, 0.0)
        return p

    # ------------------------------------------------------------------ attention
    def scaled_dot_product_attention(self, q, k, v, mask, scale):
        xp = self.xp
        s = self._mm(q * scale, xp.matrix_transpose(k))  # a transposed view: no copy
        if mask is not None:
            s = s + mask if _grows(s.shape, mask.shape) else _iadd(s, mask)
        if not s.shape[-1]:  # no keys: no weights, and an output of zeros
            return self._mm(s, v), s
        with self._quiet():  # only a +inf score can meet an edge case (inf - inf)
            m = xp.max(s, axis=-1, keepdims=True)
            s -= xp.where(m == -math.inf, 0.0, m)  # an all-masked row keeps its -inf
            s = xp.exp(s, out=s)
            den = xp.sum(s, axis=-1, keepdims=True)
            s /= xp.where(den == 0.0, 1.0, den)  # ... and gets weights 0
        return self._mm(s, v), s

    def scaled_dot_product_attention_backward(self, g, q, k, v, attn, scale):
        xp = self.xp
        gv = self._mm(xp.matrix_transpose(attn), g)
        gs = self.softmax_backward(self._mm(g, xp.matrix_transpose(v)), attn, attn.ndim - 1)
        gq = self._mm(gs, k)
        gq *= scale
        gk = self._mm(xp.matrix_transpose(gs), q)
        gk *= scale
        return self._sum_to(gq, q.shape), self._sum_to(gk, k.shape), self._sum_to(gv, v.shape)


def _grows(shape, other) -> bool:
    """Whether broadcasting ``other`` against ``shape`` gives more than ``shape``."""
    if len(other) > len(shape):
        return True
    return any(o != 1 and o != n for n, o in zip(shape[::-1], other[::-1]))


def _iadd(a, b):
    a += b
    return a
