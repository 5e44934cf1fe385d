"""The math kernels the Array API standard has (2023.12: inverse trigonometric and
hyperbolic functions, ``atan2``, ``hypot``, ``copysign``, the bitwise functions), on
``self.xp``; a base of :class:`~plugrad.backends.array_api.ArrayAPIBackend`, so NumPy, CuPy
and any namespace backend get them. ``erfc``, ``erfinv``, ``lgamma`` and ``digamma`` are not
in the standard: those stay composites unless a backend overrides them.

The standard leaves a shift by a negative amount or by the bit width or more unspecified
(CUDA masks the amount), so the shifts spell PyTorch's results out with ``where``.
"""
from __future__ import annotations

_BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}


class ArrayAPIMathKernels:
    """Needs ``xp``, ``_quiet`` and ``_pair`` from ``ArrayAPIBackend``."""

    def _unary(self, name, x):
        with self._quiet():  # domain errors give NaN, overflow inf: quietly
            return getattr(self.xp, name)(x)

    def _binary(self, name, a, b):
        with self._quiet():
            return getattr(self.xp, name)(*self._pair(a, b))

    def asin(self, x): return self._unary("asin", x)
    def acos(self, x): return self._unary("acos", x)
    def atan(self, x): return self._unary("atan", x)
    def sinh(self, x): return self._unary("sinh", x)
    def cosh(self, x): return self._unary("cosh", x)
    def asinh(self, x): return self._unary("asinh", x)
    def acosh(self, x): return self._unary("acosh", x)
    def atanh(self, x): return self._unary("atanh", x)
    def atan2(self, a, b): return self._binary("atan2", a, b)
    def hypot(self, a, b): return self._binary("hypot", a, b)
    def copysign(self, a, b): return self._binary("copysign", a, b)
    def bitwise_and(self, a, b): return self.xp.bitwise_and(*self._pair(a, b))
    def bitwise_or(self, a, b): return self.xp.bitwise_or(*self._pair(a, b))
    def bitwise_xor(self, a, b): return self.xp.bitwise_xor(*self._pair(a, b))
    def bitwise_not(self, x): return self.xp.bitwise_invert(x)

    def _shift_operands(self, a, b):
        a, b = self._pair(a, b)
        bits = _BITS[str(a.dtype).rsplit(".", 1)[-1]]
        xp = self.xp
        valid = xp.logical_and(b >= 0, b < bits)
        return a, xp.where(valid, b, xp.zeros_like(b)), valid

    def left_shift(self, a, b):
        a, s, valid = self._shift_operands(a, b)
        xp = self.xp
        out = xp.bitwise_left_shift(a, s)
        return xp.where(valid, out, xp.zeros_like(out))

    def right_shift(self, a, b):
        a, s, valid = self._shift_operands(a, b)
        xp = self.xp
        out = xp.bitwise_right_shift(a, s)
        fill = xp.where(a < 0, xp.full_like(out, -1) if out.dtype != xp.uint8 else
                        xp.zeros_like(out), xp.zeros_like(out))
        return xp.where(valid, out, fill)
