"""IEEE 754 scalar functions on Python numbers.

Python's ``math`` raises where IEEE returns a value (``log(0)``, ``exp(1000)``, ``1/0.0``);
these wrappers return the IEEE value instead, so the primitives never raise or warn.
Integer results are left unbounded here: the array store wraps them to the dtype.
"""
from __future__ import annotations

import math
from fractions import Fraction

INF, NAN = math.inf, math.nan


def exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return INF


def log(x: float) -> float:
    if x == 0:
        return -INF
    return math.log(x) if x > 0 or x != x else NAN


def sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 or x != x else NAN


def sin(x: float) -> float:
    return math.sin(x) if math.isfinite(x) else NAN if math.isinf(x) else x


def cos(x: float) -> float:
    return math.cos(x) if math.isfinite(x) else NAN if math.isinf(x) else x


def log1p(x: float) -> float:
    if x <= -1:
        return -INF if x == -1 else NAN
    return math.log1p(x)


def expm1(x: float) -> float:
    try:
        return math.expm1(x)
    except OverflowError:
        return INF


def floor(x: float) -> float:
    """Like ``math.floor`` but float-valued, keeping inf, NaN and the sign of zero."""
    if not math.isfinite(x) or x.is_integer():
        return x
    return float(math.floor(x))


def round_half_even(x: float) -> float:
    """``round(x, 0)`` is half-to-even, float-valued, and keeps inf, NaN and -0.0."""
    return round(x, 0)


def div(a: float, b: float) -> float:
    """True division with IEEE division by zero: ``±inf``, or NaN for ``0/0`` and ``nan/0``."""
    if b == 0:
        if a == 0 or a != a:
            return NAN
        return math.copysign(INF, a) * math.copysign(1.0, b)
    return a / b


def floordiv(a, b):
    """Python's ``//`` (which for floats is exactly NumPy's ``floor_divide``), with IEEE
    division by zero for floats instead of ZeroDivisionError."""
    if isinstance(b, float) and b == 0:
        return div(a, b)
    return a // b


def fmod(a, b):
    """C's ``fmod``: sign of ``a``; NaN for a float ``b == 0`` or an infinite ``a``."""
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if b == 0 or math.isinf(a) or math.isnan(a) or math.isnan(b):
            return NAN
        return math.fmod(a, b)
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def remainder(a, b):
    """Python's ``%`` (NumPy's ``remainder``); a float remainder by zero is NaN."""
    if isinstance(b, float) and b == 0:
        return NAN
    return a % b


def _is_odd_integer(y: float) -> bool:
    return math.isfinite(y) and y.is_integer() and int(y) % 2 == 1


def fpow(a: float, b: float) -> float:
    """C99 ``pow``: ``math.pow`` with its errors turned into the IEEE results."""
    try:
        return math.pow(a, b)
    except OverflowError:
        return -INF if a < 0 and _is_odd_integer(b) else INF
    except ValueError:
        if a == 0:  # zero to a negative power
            return math.copysign(INF, a) if _is_odd_integer(b) else INF
        return NAN  # negative base, non-integer exponent


def ipow(a: int, b: int, bits: int) -> int:
    """``a ** b`` modulo ``2**bits`` (the store wraps it to the dtype); ``0 ** 0 == 1``."""
    return pow(a, b, 1 << bits)


def fsum(values) -> float:
    """Correctly rounded sum of floats with IEEE specials (``inf + -inf`` is NaN, and a
    finite sum too large for a double is ±inf)."""
    values = list(values)
    try:
        return math.fsum(values)
    except ValueError:  # inf and -inf both present
        return NAN
    except OverflowError:  # finite values overflowed a double on the way
        specials = [v for v in values if not math.isfinite(v)]
        if specials:  # an inf or NaN decides the result anyway
            return fsum(specials)
        exact = sum(map(Fraction, values))
        try:
            return float(exact)
        except OverflowError:
            return INF if exact > 0 else -INF


def nan_arg_best(values, better) -> int:
    """Index of the first best value (``better`` is ``operator.gt`` for a maximum,
    ``operator.lt`` for a minimum), where the first NaN beats everything."""
    best = 0
    for i, v in enumerate(values):
        if v != v:
            return i
        if better(v, values[best]):
            best = i
    return best
