"""The composite fallbacks of the optional kernels, written in the contract's primitives.

:class:`Composites` is mixed into :class:`plugrad.backends.contract.Backend`: a new backend
gets every optional kernel from here until it supplies a faster one. The *meaning* of each
kernel is its docstring in ``contract.py``; the docstrings here only say how it is computed.

A composite calls other kernels through ``self`` and nothing else (no array internals, no
NumPy on arrays), so that it runs on any object offering the kernels: a backend, or the core's
namespace of differentiable Tensor ops (which gives higher-order gradients through a fused
kernel's composite). Exceptions are marked: a few use the in-place ``assign``, and a few
(``arange``, ``flip``, ``nonzero``, ``argsort``) build index arrays on the host.
"""
from __future__ import annotations

import math

import numpy as np

from plugrad.backends._composites_math import MathComposites
from plugrad.backends._composites_nn import NNComposites, is_floating, is_scalar


class Composites(NNComposites, MathComposites):
    """Composite bodies of the elementwise, reduction and movement kernels (the nn kernels are
    in :class:`~plugrad.backends._composites_nn.NNComposites`, the math kernels in
    :class:`~plugrad.backends._composites_math.MathComposites`)."""

    def copy(self, x):
        """A cast to the same dtype (``astype`` always copies)."""
        return self.astype(x, self.dtype_of(x))

    def from_dlpack(self, obj, device):
        """A copy through host NumPy: ``np.from_dlpack`` reads host memory, and asks a
        producer on another device for a host copy."""
        try:
            host = np.from_dlpack(obj)
        except (BufferError, RuntimeError, ValueError):  # not host memory
            host = np.from_dlpack(obj, device="cpu", copy=True)
        if host.dtype.name not in self.dtypes:
            raise TypeError(f"dtype {host.dtype.name} is not one of backend {self.name!r}'s "
                            f"({', '.join(sorted(self.dtypes))})")
        return self.from_numpy(host, host.dtype.name, device)

    def arange(self, start, stop, step, dtype, device):
        """Built on the host, then transferred."""
        return self.from_numpy(np.arange(start, stop, step), dtype, device)

    def ceil(self, x):
        """``-floor(-x)``."""
        return self.neg(self.floor(self.neg(x)))

    def sign(self, x):
        """``(0 < x) - (x < 0)``, with NaN put back."""
        dtype = self.dtype_of(x)
        out = self.sub(self.astype(self.lt(0, x), dtype), self.astype(self.lt(x, 0), dtype))
        if is_floating(dtype):
            out = self.where(self.isnan(x), x, out)
        return out

    def zeros_like(self, x):
        """Zeros of ``x``'s shape and dtype (a helper for composites, not a kernel)."""
        return self.full(tuple(x.shape), 0, self.dtype_of(x), None)

    def isnan(self, x):
        """``not (x == x)``."""
        return self.logical_not(self.eq(x, x))

    def ne(self, a, b):
        """``not (a == b)``."""
        return self.logical_not(self.eq(a, b))

    def gt(self, a, b):
        """``b < a``."""
        return self.lt(b, a)

    def le(self, a, b):
        """``a < b or a == b``."""
        return self.logical_or(self.lt(a, b), self.eq(a, b))

    def ge(self, a, b):
        """``b <= a``."""
        return self.le(b, a)

    def logical_or(self, a, b):
        """De Morgan; a Python scalar side decides the result (``logical_not`` takes arrays
        only)."""
        if is_scalar(a):
            a, b = b, a
        if is_scalar(b):
            return self.eq(a, a) if b else self.copy(a)  # eq(a, a): all True, like a
        return self.logical_not(self.logical_and(self.logical_not(a), self.logical_not(b)))

    def logical_xor(self, a, b):
        """``a != b``."""
        return self.ne(a, b)

    def remainder(self, a, b):
        """``a - (a // b) * b``, except that a finite ``a`` over ``b = ±inf`` is ``a`` when
        ``a`` is zero or has ``b``'s sign and ``b`` otherwise (the formula gives NaN there).
        float16/float32 are computed in float64, where the product is exact (a scalar operand
        rounded to the dtype first). float64 is
        inexact once ``|a / b|`` exceeds ``2**53`` (``1e17 % 3.0`` gives 0.0, not 1.0): the
        rounding of ``(a // b) * b`` is lost. A backend with ``fmod`` overrides this."""
        like = b if is_scalar(a) else a
        dtype = self.dtype_of(like)
        if dtype in ("float16", "float32") and "float64" in self.dtypes:
            # (a Python scalar is rounded to the dtype first: the weak-scalar rule)
            wide = [self.astype(self._as_array(v, like), "float64") for v in (a, b)]
            return self.astype(self.remainder(*wide), dtype)
        out = self.sub(a, self.mul(self.floordiv(a, b), b))
        if not is_floating(dtype) or is_scalar(b) and math.isfinite(b):
            return out
        a, b = self._as_array(a, like), self._as_array(b, like)
        by_inf = self.logical_and(self.eq(self.abs(b), math.inf),
                                  self.lt(self.abs(a), math.inf))
        keep_a = self.logical_or(self.eq(self.lt(a, 0), self.lt(b, 0)), self.eq(a, 0))
        return self.where(by_inf, self.where(keep_a, a, b), out)

    def fmod(self, a, b):
        """``a`` where ``|a| < |b|``; otherwise from :meth:`remainder` ``r`` (sign of ``b``,
        exact there): ``r - b`` where ``r`` and ``a`` differ in sign (exact: the result is
        representable), and a zero with ``a``'s sign."""
        like = b if is_scalar(a) else a
        dtype = self.dtype_of(like)
        if dtype in ("float16", "float32") and "float64" in self.dtypes:
            # remainder is exact in float64 but rounded back: take r - b there too
            wide = [self.astype(self._as_array(v, like), "float64") for v in (a, b)]
            return self.astype(self.fmod(*wide), dtype)
        a, b = self._as_array(a, like), self._as_array(b, like)
        r = self.remainder(a, b)
        fix = self.logical_and(self.ne(r, 0), self.ne(self.lt(r, 0), self.lt(a, 0)))
        out = self.where(fix, self.sub(r, b), r)
        if not is_floating(self.dtype_of(like)):
            return out
        out = self.where(self.eq(out, 0), self.mul(a, 0), out)  # -0.0 for a negative a
        # |a| < |b| (b = ±inf included) is a itself; remainder's b + a may round there
        return self.where(self.lt(self.abs(a), self.abs(b)), a, out)

    def maximum(self, a, b):
        """``where(b < a or isnan(a), a, b)``."""
        if is_scalar(a):
            a, b = b, a
        pick_a = self.lt(b, a)
        if is_floating(self.dtype_of(a)):
            pick_a = self.logical_or(pick_a, self.isnan(a))
        return self.where(pick_a, a, b)

    def minimum(self, a, b):
        """``where(a < b or isnan(a), a, b)``."""
        if is_scalar(a):
            a, b = b, a
        pick_a = self.lt(a, b)
        if is_floating(self.dtype_of(a)):
            pick_a = self.logical_or(pick_a, self.isnan(a))
        return self.where(pick_a, a, b)

    def min(self, x, axes, keepdims):
        """The maximum of an order-reversing map: ``-x`` for floats, but for integers ``~x``
        (``-x`` wraps at the most negative value, ``~x`` never does)."""
        dtype = self.dtype_of(x)
        if dtype == "bool":
            return self.logical_not(self.max(self.logical_not(x), axes, keepdims))
        if is_floating(dtype):
            return self.neg(self.max(self.neg(x), axes, keepdims))
        return self._invert(self.max(self._invert(x), axes, keepdims))

    def argmin(self, x, axis, keepdims):
        """The first maximum of the same order-reversing map as :meth:`min` (NaN, the maximum
        of ``-x``, wins as it should)."""
        dtype = self.dtype_of(x)
        if dtype == "bool":
            return self.argmax(self.logical_not(x), axis, keepdims)
        if is_floating(dtype):
            return self.argmax(self.neg(x), axis, keepdims)
        return self.argmax(self._invert(x), axis, keepdims)

    def sigmoid(self, x):
        """``e = exp(-|x|)``: ``1 / (1 + e)`` for ``x >= 0``, ``e / (1 + e)`` below."""
        e = self.exp(self.neg(self.abs(x)))
        r = self.div(1.0, self.add(e, 1.0))
        return self.where(self.lt(x, 0), self.mul(e, r), r)

    def log1p(self, x):
        """``log(u) * (x / (u - 1))`` with ``u = 1 + x`` (Goldberg's trick corrects the
        rounding of ``1 + x``); the ratio is taken first so that a huge ``x`` cannot overflow;
        at ``x = inf`` it is inf/inf, so inf is put back."""
        u = self.add(x, 1.0)
        d = self.sub(u, 1.0)
        small = self.eq(d, 0.0)
        safe_d = self.where(small, 1.0, d)
        out = self.where(small, x, self.mul(self.log(u), self.div(x, safe_d)))
        return self.where(self.eq(x, math.inf), x, out)

    def expm1(self, x):
        """``(u - 1) * (x / log(u))`` with ``u = exp(x)`` (Goldberg's trick), the ratio first so
        that it cannot overflow. Where ``exp(x)`` rounds to 1, ``x`` itself is the answer;
        where it overflows, inf; where ``u - 1`` rounds to -1 (``x = -inf``, or ``exp``
        underflowed so that ``log(u)`` is -inf or inexact), -1."""
        u = self.exp(x)
        um1 = self.sub(u, 1.0)
        logu = self.log(u)
        safe = self.where(self.eq(logu, 0.0), 1.0, logu)
        out = self.where(self.eq(um1, 0.0), x, self.mul(um1, self.div(x, safe)))
        out = self.where(self.eq(um1, -1.0), -1.0, out)
        return self.where(self.eq(u, math.inf), u, out)

    def erf(self, x):
        """W. J. Cody's rational Chebyshev approximations ("Rational Chebyshev approximations
        for the error function", Math. Comp. 1969, the constants most libm implementations
        use): ``x P(x^2)/Q(x^2)`` for ``|x| < 0.5``, ``1 - exp(-x^2) R(|x|)`` up to 4, and the
        asymptotic ``erfc`` form beyond; accurate to about 1e-15 relative."""
        ax = self.abs(x)
        y = self.mul(ax, ax)
        small = self.div(self.mul(x, _horner(self, y, _ERF_A, _ERF_B, True)),
                         _horner(self, y, _ERF_A, _ERF_B, False))
        mid = self.div(_horner(self, ax, _ERF_C, _ERF_D, True),
                       _horner(self, ax, _ERF_C, _ERF_D, False))
        safe_ax = self.where(self.lt(ax, 0.5), 1.0, ax)
        z = self.div(1.0, self.mul(safe_ax, safe_ax))
        tail = self.div(self.mul(z, _horner(self, z, _ERF_P, _ERF_Q, True)),
                        _horner(self, z, _ERF_P, _ERF_Q, False))
        big = self.div(self.sub(_INV_SQRT_PI, tail), safe_ax)
        r = self.where(self.lt(ax, 4.0), mid, big)
        large = self.sub(1.0, self.mul(self.exp(self.neg(y)), r))
        signed = self.where(self.lt(x, 0), self.neg(large), large)
        out = self.where(self.lt(ax, 0.5), small, signed)
        return self.where(self.eq(x, x), out, x)

    def pad(self, x, widths, value):
        """``x`` assigned into a filled array (uses the in-place ``assign``)."""
        shape = tuple(n + b + a for n, (b, a) in zip(x.shape, widths))
        out = self.full(shape, value, self.dtype_of(x), None)
        key = tuple(slice(b, b + n, 1) for n, (b, _) in zip(x.shape, widths))
        return self.assign(out, key, x)

    def flip(self, x, axes):
        """A ``gather`` with reversed indices per axis (the indices are built on the host)."""
        for axis in axes:
            n = x.shape[axis]
            idx = self.from_numpy(np.arange(n - 1, -1, -1, dtype=np.int64).reshape(
                tuple(n if d == axis else 1 for d in range(len(x.shape)))), "int64", None)
            idx = self.broadcast_to(idx, tuple(x.shape))
            x = self.gather(x, axis, idx)
        return x

    def take(self, x, axis, index):
        """A ``gather`` with ``index`` broadcast along the other axes."""
        shape = tuple(x.shape)
        idx_shape = tuple(int(index.shape[0]) if d == axis else 1 for d, _ in enumerate(shape))
        idx = self.reshape(index, idx_shape)
        full = tuple(idx_shape[d] if d == axis else shape[d] for d in range(len(shape)))
        return self.gather(x, axis, self.broadcast_to(idx, full))

    def scatter(self, x, axis, index, src):
        """Two ``scatter_add``: a hit count, and the values added to ``-0.0``, the float additive
        identity (``0.0 + -0.0`` would lose the sign of a written ``-0.0``)."""
        dtype = self.dtype_of(x)
        hit = self.lt(0, self.scatter_add(self.full(tuple(x.shape), 0, "int64", None), axis,
                                          index, self.full(tuple(index.shape), 1, "int64", None)))
        if dtype == "bool":
            placed = self.scatter_add(self.full(tuple(x.shape), 0, "int64", None), axis, index,
                                      self.astype(src, "int64"))
            return self.where(hit, self.lt(0, placed), x)
        zero = -0.0 if is_floating(dtype) else 0
        placed = self.scatter_add(self.full(tuple(x.shape), zero, dtype, None), axis, index, src)
        return self.where(hit, placed, x)

    def nonzero(self, x):
        """On the host (the result's size depends on the values anyway)."""
        idx = np.argwhere(self.to_numpy(x))
        return self.from_numpy(idx.astype(np.int64), "int64", None)

    def argsort(self, x, axis, descending):
        """On the host; descending is the stable ascending sort of the reversed array,
        reversed (so ties keep their order)."""
        a = np.asarray(self.to_numpy(x))
        if descending:
            order = np.flip(np.argsort(np.flip(a, axis), axis=axis, kind="stable"), axis)
            order = a.shape[axis] - 1 - order
        else:
            order = np.argsort(a, axis=axis, kind="stable")
        return self.from_numpy(order.astype(np.int64), "int64", None)

    def update_(self, op, dst, value):
        """The out-of-place op, then the in-place ``assign`` of the whole array."""
        return self.assign(dst, (), getattr(self, op)(dst, value))

    def softmax(self, x, axis):
        """``e / sum(e)`` with ``e = exp(x - max(x))``."""
        e = self.exp(self.sub(x, self.max(x, (axis,), True)))
        return self.div(e, self.sum(e, (axis,), True))

    def log_softmax(self, x, axis):
        """``(x - m) - log(sum(exp(x - m)))`` with ``m`` the maximum (0 where it is
        ``-inf``), as PyTorch's kernel: ``x - logsumexp(x)`` rounds ``m + log 2`` to ``m``
        near the dtype's maximum. A slice holding ``+inf`` is NaN (``inf - inf``)."""
        m = self.max(x, (axis,), True)
        if is_floating(self.dtype_of(x)):
            m = self.where(self.eq(m, -math.inf), 0.0, m)
        d = self.sub(x, m)
        return self.sub(d, self.log(self.sum(self.exp(d), (axis,), True)))

    def logsumexp(self, x, axes, keepdims):
        """``log(sum(exp(x - m))) + m`` with ``m`` the maximum, or 0 where that is infinite."""
        m = self.max(x, axes, True)
        m = self.where(self.eq(self.abs(m), math.inf), 0.0, m)
        out = self.add(self.log(self.sum(self.exp(self.sub(x, m)), axes, True)), m)
        if keepdims:
            return out
        drop = range(len(x.shape)) if axes is None else axes
        return self.reshape(out, tuple(n for d, n in enumerate(x.shape) if d not in drop))

    # ------------------------------------------------------------------ helpers
    def _invert(self, x):
        """``~x`` for an integer array: an order-reversing bijection that never overflows."""
        dtype = self.dtype_of(x)
        top = int(np.iinfo(dtype).max) if dtype.startswith("uint") else -1
        return self.sub(top, x)  # -1 - x == ~x (signed); max - x == ~x (unsigned)

    def _as_array(self, v, like):
        """``v``, or a 0-d array of ``like``'s dtype holding the Python scalar ``v``."""
        return self.full((), v, self.dtype_of(like), None) if is_scalar(v) else v


def _horner(b, t, num, den, numerator: bool):
    """One of Cody's rational forms at ``t``, evaluated as he does: the numerator starts from
    its last coefficient times ``t`` and the denominator from ``t`` itself; each then adds a
    coefficient and multiplies by ``t``, and finally adds its last remaining coefficient."""
    coeffs = num if numerator else den
    acc = b.mul(t, num[-1]) if numerator else t
    for c in coeffs[:len(den) - 1]:
        acc = b.mul(b.add(acc, c), t)
    return b.add(acc, coeffs[len(den) - 1])


# Cody's coefficients: erf on |x| < 0.5 (A/B), erfc on [0.5, 4] (C/D), erfc beyond (P/Q).
_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERF_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
          2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
          2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03)
_ERF_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
          1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERF_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
          6.05183413124413191e-2, 2.33520497626869185e-3)
_INV_SQRT_PI = 5.6418958354775628695e-1
