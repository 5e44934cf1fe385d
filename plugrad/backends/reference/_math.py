"""The reference backend's math kernels (``contract_math.py``): Python's ``math`` one value at
a time, with its exceptions turned into the IEEE results, and plain Python integers for the
bit operations (the store wraps them to the dtype). ``erfinv`` and ``digamma``, which
``math`` lacks, are written out here in double precision."""
from __future__ import annotations

import math

INF, NAN = math.inf, math.nan
_BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}


def _domain(fn, lo, hi):
    """``fn`` on ``[lo, hi]``, NaN outside (``math`` raises ValueError there)."""
    def f(x):
        return fn(x) if lo <= x <= hi else NAN
    return f


def sinh(x):
    try:
        return math.sinh(x)
    except OverflowError:
        return math.copysign(INF, x)


def cosh(x):
    try:
        return math.cosh(x)
    except OverflowError:
        return INF


def atanh(x):
    if abs(x) == 1:
        return math.copysign(INF, x)
    return math.atanh(x) if abs(x) < 1 else NAN


def lgamma(x):
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):  # poles (0, -0.0, negative integers), overflow
        return INF


def digamma(x):
    """PyTorch's conventions: ``-inf`` at +0.0, ``inf`` at -0.0, NaN at the negative
    integers and at -inf; reflection, the recurrence up to 10, the asymptotic series."""
    if x != x or x == INF:
        return x
    if x == 0:
        return -math.copysign(INF, x)
    if x < 0:
        if x == -INF or x == math.floor(x):
            return NAN
        r = x - round(x)
        return digamma(1.0 - x) - math.pi * math.cos(math.pi * r) / math.sin(math.pi * r)
    acc = 0.0
    while x < 10:
        acc += 1.0 / x
        x += 1.0
    z = 1.0 / (x * x)
    series = z * (1 / 12 + z * (-1 / 120 + z * (1 / 252 + z * (-1 / 240 + z * (
        1 / 132 + z * (-691 / 32760 + z / 12))))))
    return math.log(x) - 0.5 / x - series - acc


def erfinv(x):
    """Newton's method on ``erf`` (on ``log(erfc)`` against the exact ``1 - |x|`` in the
    tail) from a rough start, until it stops moving."""
    if x != x or abs(x) > 1:
        return NAN
    if abs(x) == 1:
        return math.copysign(INF, x)
    if x == 0:
        return x
    a, t = abs(x), 1.0 - abs(x)
    r = math.sqrt(-math.log(t * (2.0 - t))) * 0.9 if a > 0.5 else a * math.sqrt(math.pi) / 2
    for _ in range(100):
        d = 2.0 / math.sqrt(math.pi) * math.exp(-r * r)
        if a > 0.5:
            e = math.erfc(r)
            step = (math.log(e) - math.log(t)) * e / d
        else:
            step = -(math.erf(r) - a) / d
        r += step
        if abs(step) <= 1e-17 * abs(r):
            break
    return math.copysign(r, x)


def left_shift(a, b, bits):
    return a << b if 0 <= b < bits else 0


def right_shift(a, b, bits):
    return a >> b if 0 <= b < bits else (-1 if a < 0 else 0)


class RefMathKernels:
    """Mixed into ``ReferenceBackend`` (which provides ``_map``)."""

    def asin(self, x):
        return self._map(_domain(math.asin, -1.0, 1.0), x)

    def acos(self, x):
        return self._map(_domain(math.acos, -1.0, 1.0), x)

    def atan(self, x):
        return self._map(math.atan, x)

    def atan2(self, a, b):
        return self._map(math.atan2, a, b)

    def sinh(self, x):
        return self._map(sinh, x)

    def cosh(self, x):
        return self._map(cosh, x)

    def asinh(self, x):
        return self._map(math.asinh, x)

    def acosh(self, x):
        return self._map(lambda v: math.acosh(v) if v >= 1 else NAN, x)

    def atanh(self, x):
        return self._map(atanh, x)

    def erfc(self, x):
        return self._map(math.erfc, x)

    def erfinv(self, x):
        return self._map(erfinv, x)

    def lgamma(self, x):
        return self._map(lgamma, x)

    def digamma(self, x):
        return self._map(digamma, x)

    def hypot(self, a, b):
        return self._map(math.hypot, a, b)

    def copysign(self, a, b):
        return self._map(math.copysign, a, b)

    def bitwise_and(self, a, b):
        return self._map(lambda u, v: u & v, a, b)

    def bitwise_or(self, a, b):
        return self._map(lambda u, v: u | v, a, b)

    def bitwise_xor(self, a, b):
        return self._map(lambda u, v: u ^ v, a, b)

    def bitwise_not(self, x):
        return self._map(lambda u: ~u, x)

    def _bits_of(self, a, b):
        return _BITS[(b if isinstance(a, (bool, int, float)) else a).dtype]

    def left_shift(self, a, b):
        bits = self._bits_of(a, b)
        return self._map(lambda u, v: left_shift(u, v, bits), a, b)

    def right_shift(self, a, b):
        bits = self._bits_of(a, b)
        return self._map(lambda u, v: right_shift(u, v, bits), a, b)
