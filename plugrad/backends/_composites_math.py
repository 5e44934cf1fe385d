"""The composite fallbacks of the math kernels (``contract_math.py``), in the contract's
primitives.

Each floating composite reduces its argument to a range where a short series or a fitted
polynomial is accurate to a few units in the last place of float64, and puts the IEEE edge
values (zeros with their signs, infinities, poles) back with ``where``. float16 and bfloat16
are computed in float32 and rounded once. The bit operations are exact integer arithmetic:
``&``, ``|``, ``^`` take the operands apart bit by bit with ``remainder``/``floordiv`` by 2
(floor division is an arithmetic shift, so negatives are two's complement for free), shifts
multiply or floor-divide by powers of two.
"""
from __future__ import annotations

import functools
import math


_BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}
_PI, _LN2 = math.pi, math.log(2.0)
_SQRT3, _TAN_PI_12 = math.sqrt(3.0), 2.0 - math.sqrt(3.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_EULER = 0.57721566490153286061
#: atan(t) / t = sum (-1)^n t^(2n) / (2n + 1), |t| <= tan(pi/12): 14 terms reach 5e-17
_ATAN = tuple((-1.0) ** n / (2 * n + 1) for n in range(14))
#: lgamma(2 + p) / p on [-0.5, 0.5], a least-squares fit at Chebyshev nodes (computed to 40
#: digits with mpmath; max relative error 2.2e-16 evaluated in float64)
_LGAMMA_G = (0.42278433509846713, 0.32246703342411326, -0.06735230105319814,
             0.020580808427780335, -0.007385551028668096, 0.002890510331036772,
             -0.0011927539120033873, 0.0005096695153484373, -0.00022315475069647703,
             9.945767440096764e-05, -4.492635166770342e-05, 2.0505584372896933e-05,
             -9.438454884054723e-06, 4.3847319318293745e-06, -2.044935323180052e-06,
             9.199898075671394e-07, -4.303234692956732e-07, 2.7880013392491846e-07,
             -1.341570273460026e-07)
#: Stirling's series for lgamma: B_2k / (2k (2k - 1)), k = 1..7, in powers of 1 / x^2
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
#: the asymptotic series of digamma: B_2k / (2k), k = 1..7 (subtracted, in powers of 1 / x^2)
_DIGAMMA = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
#: M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2010), single precision
_ERFINV_CENTRAL = (1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087,
                   -4.39150654e-06, -3.5233877e-06, 3.43273939e-07, 2.81022636e-08)
_ERFINV_TAIL = (2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773,
                -0.00367342844, 0.00134934322, 0.000100950558, -0.000200214257)


def is_scalar(v) -> bool:
    """A Python number (NumPy's 0-d results, ``np.float64`` included, are arrays here)."""
    return type(v) in (bool, int, float)


def horner(k, t, coeffs):
    """``sum(coeffs[i] * t**i)`` (ascending coefficients) in kernels of ``k``."""
    p = k.add(k.mul(t, coeffs[-1]), coeffs[-2])
    for c in reversed(coeffs[:-2]):
        p = k.add(k.mul(p, t), c)
    return p


def _float32_for_narrow(fn):
    """Compute float16/bfloat16 in float32 and round once (the series need the precision)."""
    @functools.wraps(fn)
    def wrapped(self, *args):
        dt = next(self.dtype_of(a) for a in args if not is_scalar(a))
        if dt in ("float16", "bfloat16"):
            wide = [a if is_scalar(a) else self.astype(a, "float32") for a in args]
            return self.astype(fn(self, *wide), dt)
        return fn(self, *args)
    return wrapped


class MathComposites:
    """Composite bodies of the math kernels (mixed into ``Composites``)."""

    # ------------------------------------------------------------------ helpers
    def _signbit(self, x):
        """True where ``x`` is negative or ``-0.0`` (NaN: False)."""
        return self.logical_or(self.lt(x, 0), self.logical_and(self.eq(x, 0),
                                                               self.lt(self.div(1.0, x), 0)))

    def _odd(self, x, r):
        """``r`` computed on ``|x|`` given the sign of ``x``; zeros keep theirs."""
        out = self.where(self.lt(x, 0), self.neg(r), r)
        return self.where(self.eq(x, 0), x, out)

    def _arrays(self, a, b):
        """Both operands as arrays (a weak scalar takes the other's dtype)."""
        if is_scalar(a):
            a = self.full((), a, self.dtype_of(b), None)
        if is_scalar(b):
            b = self.full((), b, self.dtype_of(a), None)
        return a, b

    # ------------------------------------------------------------------ inverse trigonometric
    @_float32_for_narrow
    def atan(self, x):
        """``pi/2 - atan(1/|x|)`` above 1, then ``pi/6 + atan((t sqrt3 - 1)/(t + sqrt3))`` above
        ``tan(pi/12)``, then the Taylor series."""
        u = self.abs(x)
        big = self.gt(u, 1.0)
        v = self.where(big, self.div(1.0, self.where(big, u, 1.0)), u)
        shifted = self.gt(v, _TAN_PI_12)
        w = self.where(shifted, self.div(self.sub(self.mul(v, _SQRT3), 1.0),
                                         self.add(v, _SQRT3)), v)
        s = self.mul(w, horner(self, self.mul(w, w), _ATAN))
        s = self.where(shifted, self.add(s, _PI / 6), s)
        s = self.where(big, self.sub(_PI / 2, s), s)
        return self._odd(x, s)

    @_float32_for_narrow
    def atan2(self, a, b):
        """``atan(|a| / |b|)`` moved to its quadrant by the sign bits; ``0/0`` and
        ``inf/inf`` are given the ratios 0 and 1."""
        a, b = self._arrays(a, b)
        ay, ax = self.abs(a), self.abs(b)
        both_inf = self.logical_and(self.eq(ay, math.inf), self.eq(ax, math.inf))
        both_zero = self.logical_and(self.eq(ay, 0), self.eq(ax, 0))
        ratio = self.div(ay, self.where(both_zero, 1.0, ax))
        t = self.atan(self.where(both_inf, 1.0, ratio))
        t = self.where(self._signbit(b), self.sub(_PI, t), t)
        return self.where(self._signbit(a), self.neg(t), t)

    @_float32_for_narrow
    def asin(self, x):
        """``atan2(x, sqrt((1 - x)(1 + x)))``."""
        return self.atan2(x, self.sqrt(self.mul(self.sub(1.0, x), self.add(x, 1.0))))

    @_float32_for_narrow
    def acos(self, x):
        """``2 atan2(sqrt(1 - x), sqrt(1 + x))``."""
        return self.mul(self.atan2(self.sqrt(self.sub(1.0, x)), self.sqrt(self.add(x, 1.0))),
                        2.0)

    # ------------------------------------------------------------------ hyperbolic
    @_float32_for_narrow
    def sinh(self, x):
        """``(e + e/(e + 1)) / 2`` with ``e = expm1(|x|)`` below 22, ``exp(|x| - log 2)``
        above (no overflow before sinh itself overflows)."""
        u = self.abs(x)
        low = self.lt(u, 22.0)
        e = self.expm1(self.where(low, u, 0.0))
        small = self.mul(self.add(e, self.div(e, self.add(e, 1.0))), 0.5)
        r = self.where(low, small, self.exp(self.sub(u, _LN2)))
        return self._odd(x, r)

    @_float32_for_narrow
    def cosh(self, x):
        """``(e + 1/e) / 2`` with ``e = exp(|x|)`` below 22, ``exp(|x| - log 2)`` above."""
        u = self.abs(x)
        low = self.lt(u, 22.0)
        e = self.exp(self.where(low, u, 0.0))
        small = self.mul(self.add(e, self.div(1.0, e)), 0.5)
        return self.where(low, small, self.exp(self.sub(u, _LN2)))

    @_float32_for_narrow
    def asinh(self, x):
        """``log1p(u + u^2 / (1 + sqrt(1 + u^2)))`` for ``u = |x|``, ``log(u) + log 2`` from
        ``2**28`` on (where ``u^2`` could overflow and 1 no longer counts)."""
        u = self.abs(x)
        huge = self.gt(u, 2.0 ** 28)
        v = self.where(huge, 1.0, u)
        v2 = self.mul(v, v)
        small = self.log1p(self.add(v, self.div(v2, self.add(self.sqrt(self.add(v2, 1.0)),
                                                             1.0))))
        r = self.where(huge, self.add(self.log(u), _LN2), small)
        return self._odd(x, r)

    @_float32_for_narrow
    def acosh(self, x):
        """``log1p(t + sqrt(2t + t^2))`` with ``t = x - 1`` below 2, ``log(2x - 1/(x +
        sqrt(x^2 - 1)))`` up to ``2**28``, ``log(x) + log 2`` beyond; NaN below 1."""
        t = self.sub(x, 1.0)
        near = self.log1p(self.add(t, self.sqrt(self.add(self.mul(t, 2.0), self.mul(t, t)))))
        m = self.where(self.lt(x, 2.0 ** 28), x, 2.0)
        mid = self.log(self.sub(self.mul(m, 2.0), self.div(1.0, self.add(
            m, self.sqrt(self.sub(self.mul(m, m), 1.0))))))
        big = self.add(self.log(x), _LN2)
        r = self.where(self.lt(x, 2.0), near, self.where(self.lt(x, 2.0 ** 28), mid, big))
        return self.where(self.lt(x, 1.0), math.nan, r)

    @_float32_for_narrow
    def atanh(self, x):
        """``log1p(2u / (1 - u)) / 2`` for ``u = |x|``."""
        u = self.abs(x)
        r = self.mul(self.log1p(self.div(self.mul(u, 2.0), self.sub(1.0, u))), 0.5)
        return self._odd(x, r)

    # ------------------------------------------------------------------ error and gamma
    def _erfc_abs(self, ax):
        """``erfc(|x|)`` for ``|x| >= 0.5``: ``exp(-x^2) R(|x|)`` with Cody's ``R`` (the
        rational functions of the ``erf`` composite)."""
        from plugrad.backends.composites import (_ERF_C, _ERF_D, _ERF_P, _ERF_Q,
                                                 _INV_SQRT_PI, _horner)
        safe = self.where(self.lt(ax, 0.5), 1.0, ax)
        mid = self.div(_horner(self, safe, _ERF_C, _ERF_D, True),
                       _horner(self, safe, _ERF_C, _ERF_D, False))
        z = self.div(1.0, self.mul(safe, safe))
        tail = self.div(self.mul(z, _horner(self, z, _ERF_P, _ERF_Q, True)),
                        _horner(self, z, _ERF_P, _ERF_Q, False))
        big = self.div(self.sub(_INV_SQRT_PI, tail), safe)
        r = self.where(self.lt(safe, 4.0), mid, big)
        return self.mul(self.exp(self.neg(self.mul(safe, safe))), r)

    @_float32_for_narrow
    def erfc(self, x):
        """``1 - erf(x)`` below 0.5 in magnitude; beyond, ``erfc(|x|)`` directly (``2 -`` it
        for negative ``x``), so tiny values keep their relative accuracy."""
        ax = self.abs(x)
        e = self._erfc_abs(ax)
        far = self.where(self.lt(x, 0), self.sub(2.0, e), e)
        return self.where(self.lt(ax, 0.5), self.sub(1.0, self.erf(x)), far)

    @_float32_for_narrow
    def erfinv(self, x):
        """Giles' single-precision approximation, then four Halley steps on ``erf`` (above
        0.5, Newton steps on ``log(erfc(r)) = log(1 - |x|)``, ``1 - |x|`` being exact there,
        so the tail keeps its accuracy)."""
        ax = self.abs(x)
        inside = self.lt(ax, 1.0)
        a = self.where(inside, ax, 0.0)
        one_minus = self.sub(1.0, a)
        w = self.neg(self.log(self.mul(one_minus, self.add(a, 1.0))))
        central = horner(self, self.sub(w, 2.5), _ERFINV_CENTRAL)
        tail = horner(self, self.sub(self.sqrt(w), 3.0), _ERFINV_TAIL)
        r = self.mul(self.where(self.lt(w, 5.0), central, tail), a)
        far = self.gt(a, 0.5)
        log_t = self.log(one_minus)
        for _ in range(4):
            d = self.mul(self.exp(self.neg(self.mul(r, r))), _TWO_OVER_SQRT_PI)
            e = self.erfc(r)  # far: Newton on log(erfc(r)) = log(1 - |x|), nearly quadratic
            step_far = self.mul(self.sub(self.log(e), log_t), self.div(e, d))
            q = self.div(self.sub(self.erf(r), a), d)  # central: Halley on erf(r) = |x|
            step_mid = self.neg(self.div(q, self.add(self.mul(r, q), 1.0)))
            r = self.add(r, self.where(far, step_far, step_mid))
        r = self.where(self.eq(ax, 1.0), math.inf, self.where(inside, r, math.nan))
        r = self.where(self.eq(ax, ax), r, ax)  # NaN stays NaN
        return self._odd(x, r)

    def _lgamma_pos(self, u):
        """``lgamma(u)`` for ``u > 0``: ``p G(p)`` (``G`` the fit of ``lgamma(2 + p) / p``)
        with an exact ``p`` in ``[-0.5, 0.5)``: ``u`` below 0.5, ``u - 1`` up to 1.5 (then
        ``- log u``), ``u`` shifted down into ``[1.5, 2.5)`` minus 2 (then ``+ log`` of the
        shifts' product) up to 8; Stirling's series from 8 on. No cancellation near the
        zeros at 1 and 2, where ``p`` is tiny and exact."""
        low, mid = self.lt(u, 0.5), self.lt(u, 1.5)
        shift = self.logical_and(self.logical_not(mid), self.lt(u, 8.0))
        v = self.where(shift, u, 2.0)
        z = self.full((), 1.0, self.dtype_of(u), None)
        for _ in range(6):
            m = self.ge(v, 2.5)
            v = self.where(m, self.sub(v, 1.0), v)
            z = self.where(m, self.mul(z, v), z)
        small = self.where(mid, u, 1.0)
        p = self.where(low, small, self.where(mid, self.sub(small, 1.0), self.sub(v, 2.0)))
        poly = self.mul(p, horner(self, p, _LGAMMA_G))
        corr = self.where(low, self.neg(self.add(self.log(small), self.log1p(small))),
                          self.where(mid, self.neg(self.log(small)), self.log(z)))
        big = self.where(self.ge(u, 8.0), u, 8.0)
        iz = self.div(1.0, big)
        series = self.mul(iz, horner(self, self.mul(iz, iz), _STIRLING))
        stirling = self.add(self.sub(self.mul(self.sub(big, 0.5), self.log(big)), big),
                            self.add(series, 0.5 * math.log(2 * math.pi)))
        return self.where(self.ge(u, 8.0), stirling, self.add(poly, corr))

    @_float32_for_narrow
    def lgamma(self, x):
        """``_lgamma_pos`` for ``x > 0``; ``log(pi / |sin(pi r)|) - lgamma(1 - x)`` below 0
        (``r = x - round(x)``, exact); ``-log|x| - gamma x`` for ``|x| < 1e-8``."""
        neg = self.lt(x, 0.0)
        u = self.where(neg, self.sub(1.0, x), x)
        u = self.where(self.logical_and(self.lt(u, math.inf), self.gt(u, 0.0)), u, 1.0)
        pos = self._lgamma_pos(u)
        r = self.sub(x, self.round(x))
        s = self.abs(self.sin(self.mul(r, _PI)))
        refl = self.sub(self.log(self.div(_PI, self.where(self.eq(s, 0.0), 1.0, s))), pos)
        out = self.where(neg, self.where(self.eq(s, 0.0), math.inf, refl), pos)
        ax = self.abs(x)
        tiny = self.neg(self.add(self.log(ax), self.mul(x, _EULER)))
        out = self.where(self.lt(ax, 1e-8), tiny, out)
        out = self.where(self.eq(ax, math.inf), math.inf, out)
        return self.where(self.eq(x, x), out, x)

    @_float32_for_narrow
    def digamma(self, x):
        """Reflection ``psi(1 - x) - pi cot(pi x)`` below 0, the recurrence ``psi(u) =
        psi(u + 1) - 1/u`` up to 10, then the asymptotic series (PyTorch's algorithm)."""
        neg = self.lt(x, 0.0)
        u = self.where(neg, self.sub(1.0, x), x)
        u = self.where(self.gt(u, 0.0), u, 1.0)  # zeros and NaN: put back below
        acc = None
        for _ in range(10):
            m = self.lt(u, 10.0)
            step = self.where(m, self.div(1.0, u), 0.0)
            acc = step if acc is None else self.add(acc, step)
            u = self.where(m, self.add(u, 1.0), u)
        iz = self.div(1.0, u)
        z = self.mul(iz, iz)
        asym = self.sub(self.sub(self.log(u), self.mul(iz, 0.5)),
                        self.mul(z, horner(self, z, _DIGAMMA)))
        pos = self.sub(asym, acc)
        r = self.sub(x, self.round(x))
        pr = self.mul(r, _PI)
        s = self.sin(pr)
        cot = self.div(self.cos(pr), self.where(self.eq(s, 0.0), 1.0, s))
        out = self.where(neg, self.sub(pos, self.mul(cot, _PI)), pos)
        out = self.where(self.logical_and(neg, self.eq(s, 0.0)), math.nan, out)
        out = self.where(self.eq(x, -math.inf), math.nan, out)
        out = self.where(self.eq(x, 0.0), self.div(-1.0, x), out)  # -inf at +0, inf at -0
        return self.where(self.eq(x, x), out, x)

    # ------------------------------------------------------------------ two floating operands
    @_float32_for_narrow
    def hypot(self, a, b):
        """``m sqrt(1 + (s/m)^2)`` with ``m``, ``s`` the larger and smaller magnitude."""
        a, b = self._arrays(a, b)
        aa, ab = self.abs(a), self.abs(b)
        m, s = self.maximum(aa, ab), self.minimum(aa, ab)
        q = self.div(s, self.where(self.eq(m, 0.0), 1.0, m))
        r = self.mul(m, self.sqrt(self.add(self.mul(q, q), 1.0)))
        return self.where(self.logical_or(self.eq(aa, math.inf), self.eq(ab, math.inf)),
                          math.inf, r)

    def copysign(self, a, b):
        """``|a|``, negated where ``b``'s sign bit is set (as far as ``_signbit`` sees it)."""
        a, b = self._arrays(a, b)
        mag = self.abs(a)
        return self.where(self._signbit(b), self.neg(mag), mag)

    # ------------------------------------------------------------------ bits
    def _bitwise(self, a, b, combine, logical):
        a, b = self._arrays(a, b)
        dt = self.dtype_of(a)
        if dt == "bool":
            return getattr(self, logical)(a, b)
        bits = _BITS[dt]
        out = None
        for i in range(bits):
            ra, rb = self.remainder(a, 2), self.remainder(b, 2)
            bit = combine(ra, rb)
            weight = -(1 << (bits - 1)) if (i == bits - 1 and not dt.startswith("u")) \
                else (1 << i)
            term = self.mul(bit, weight)
            out = term if out is None else self.add(out, term)
            if i < bits - 1:
                a, b = self.floordiv(a, 2), self.floordiv(b, 2)
        return out

    def bitwise_and(self, a, b):
        """Bit by bit: ``a_i b_i``."""
        return self._bitwise(a, b, self.mul, "logical_and")

    def bitwise_or(self, a, b):
        """Bit by bit: ``a_i + b_i - a_i b_i``."""
        return self._bitwise(a, b, lambda x, y: self.sub(self.add(x, y), self.mul(x, y)),
                             "logical_or")

    def bitwise_xor(self, a, b):
        """Bit by bit: ``(a_i + b_i) mod 2``."""
        return self._bitwise(a, b, lambda x, y: self.remainder(self.add(x, y), 2),
                             "logical_xor")

    def bitwise_not(self, x):
        """``-x - 1`` (wrapping: ``255 - x`` for uint8)."""
        return self.sub(self.neg(x), 1)

    def _shift_parts(self, a, b):
        a, b = self._arrays(a, b)
        dt = self.dtype_of(a)
        return a, b, dt, _BITS[dt]

    def left_shift(self, a, b):
        """``a * 2**b`` (wrapping), 0 where ``b`` is out of ``[0, bits)``."""
        a, b, dt, bits = self._shift_parts(a, b)
        valid = self.logical_and(self.ge(b, 0), self.lt(b, bits))
        return self.where(valid, self.mul(a, self.pow(2, self.where(valid, b, 0))), 0)

    def right_shift(self, a, b):
        """``floor(a / 2**b)``; out of range, the sign fill (-1 or 0)."""
        a, b, dt, bits = self._shift_parts(a, b)
        signed = not dt.startswith("u")
        limit = bits - 1 if signed else bits  # 2**(bits - 1) does not fit a signed dtype
        valid = self.logical_and(self.ge(b, 0), self.lt(b, limit))
        q = self.floordiv(a, self.pow(2, self.where(valid, b, 0)))
        fill = self.neg(self.astype(self.lt(a, 0), dt)) if signed else 0
        return self.where(valid, q, fill)
