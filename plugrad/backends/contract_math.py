"""The backend contract, continued: the optional math kernels (inverse trigonometric and
hyperbolic functions, the gamma family, ``erfc``/``erfinv``, and the integer bit operations).

Conventions and composites as in :mod:`plugrad.backends.contract`; :class:`MathKernels` is a
base of :class:`~plugrad.backends.contract.Backend`, so these are its methods. The floating
kernels get floating arrays only and follow C99's ``<math.h>`` (IEEE 754) at the edges; the bit
operations get integer arrays (``bool`` only where said), two's complement, of one dtype (or
one array and a weak Python scalar).
"""
from __future__ import annotations

from plugrad.backends._composites_math import MathComposites as _M


class MathKernels:
    """The spec of the optional math kernels (each falls back to its composite)."""

    # ------------------------------------------------------------------ inverse trigonometric
    def asin(self, x):
        """Arcsine in ``[-pi/2, pi/2]``: NaN outside ``[-1, 1]``, ``asin(-0.0) == -0.0``."""
        return _M.asin(self, x)

    def acos(self, x):
        """Arccosine in ``[0, pi]``: NaN outside ``[-1, 1]``, ``acos(1) == 0``."""
        return _M.acos(self, x)

    def atan(self, x):
        """Arctangent in ``(-pi/2, pi/2)``: ``atan(±inf) == ±pi/2``, sign of zero kept."""
        return _M.atan(self, x)

    def atan2(self, a, b):
        """The angle of the point ``(b, a)`` in ``[-pi, pi]`` (``a`` is y): C's ``atan2``, signs
        of zeros included (``atan2(±0, -0) == ±pi``, ``atan2(±0, +0) == ±0``,
        ``atan2(±inf, ±inf)`` is ``±pi/4`` or ``±3pi/4``)."""
        return _M.atan2(self, a, b)

    # ------------------------------------------------------------------ hyperbolic
    def sinh(self, x):
        """Hyperbolic sine, finite up to where it overflows (``|x| > 710.47`` in float64)."""
        return _M.sinh(self, x)

    def cosh(self, x):
        """Hyperbolic cosine (``cosh(±inf) == inf``)."""
        return _M.cosh(self, x)

    def asinh(self, x):
        """Inverse hyperbolic sine, accurate for tiny and huge ``|x|``; sign of zero kept."""
        return _M.asinh(self, x)

    def acosh(self, x):
        """Inverse hyperbolic cosine: NaN below 1, ``acosh(1) == 0``, accurate for huge ``x``."""
        return _M.acosh(self, x)

    def atanh(self, x):
        """Inverse hyperbolic tangent: ``atanh(±1) == ±inf``, NaN outside ``[-1, 1]``."""
        return _M.atanh(self, x)

    # ------------------------------------------------------------------ error and gamma
    def erfc(self, x):
        """``1 - erf(x)`` with relative accuracy where it is tiny (``erfc(10)`` is 2e-45 and
        finite in float64)."""
        return _M.erfc(self, x)

    def erfinv(self, x):
        """The inverse of ``erf`` on ``[-1, 1]``: ``erfinv(±1) == ±inf``, NaN outside."""
        return _M.erfinv(self, x)

    def lgamma(self, x):
        """``log(|Gamma(x)|)``: ``inf`` at 0, ``-0.0``, the negative integers and ``±inf``."""
        return _M.lgamma(self, x)

    def digamma(self, x):
        """``Gamma'(x) / Gamma(x)`` (PyTorch's conventions): ``-inf`` at ``+0.0``, ``inf`` at
        ``-0.0``, NaN at the negative integers and ``-inf``, ``inf`` at ``inf``."""
        return _M.digamma(self, x)

    # ------------------------------------------------------------------ two floating operands
    def hypot(self, a, b):
        """``sqrt(a*a + b*b)`` without overflow or underflow; ``inf`` if either is infinite
        (even with a NaN), else NaN if either is NaN."""
        return _M.hypot(self, a, b)

    def copysign(self, a, b):
        """``|a|`` with the sign bit of ``b`` (``-0.0`` counts as negative). The composite
        counts every NaN ``b`` as positive (the primitives cannot see a NaN's sign)."""
        return _M.copysign(self, a, b)

    # ------------------------------------------------------------------ bits
    def bitwise_and(self, a, b):
        """``a & b`` on integer arrays (two's complement) or bool arrays."""
        return _M.bitwise_and(self, a, b)

    def bitwise_or(self, a, b):
        """``a | b`` on integer or bool arrays."""
        return _M.bitwise_or(self, a, b)

    def bitwise_xor(self, a, b):
        """``a ^ b`` on integer or bool arrays."""
        return _M.bitwise_xor(self, a, b)

    def bitwise_not(self, x):
        """``~x`` on an integer array (``-x - 1``, wrapping; ``255 - x`` for uint8)."""
        return _M.bitwise_not(self, x)

    def left_shift(self, a, b):
        """``a << b`` on integer arrays, wrapping; 0 where ``b`` is negative or at least the
        dtype's bit width (PyTorch's)."""
        return _M.left_shift(self, a, b)

    def right_shift(self, a, b):
        """Arithmetic ``a >> b`` (rounds toward -inf) on integer arrays; where ``b`` is negative
        or at least the bit width, -1 for a negative ``a``, else 0 (PyTorch's)."""
        return _M.right_shift(self, a, b)
