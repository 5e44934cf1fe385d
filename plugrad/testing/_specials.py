"""Special values per dtype: the inputs where backends that look right go wrong.

Random samples in ``[-2, 2]`` never reach NaN, infinities, signed zeros, the largest and
smallest magnitudes, rounding ties or integer wraparound; these tables do. The op database
(:mod:`plugrad.testing.opdb`) adds them to every elementwise primitive and reduction, and
the contract clauses (:mod:`plugrad.testing._contract`) use them by name.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["FLOAT_NAMES", "INT_NAMES", "finfo", "iinfo", "float_specials", "binary_specials",
           "int_edges", "round_ties", "numpy_dtype", "round_to"]

FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
INT_NAMES = ("uint8", "int8", "int16", "int32", "int64")

#: ``(max, smallest normal, smallest subnormal, significand bits)`` of each floating dtype.
_FINFO = {
    "float16": (65504.0, 2.0 ** -14, 2.0 ** -24, 11),
    "bfloat16": (3.3895313892515355e38, 2.0 ** -126, 2.0 ** -133, 8),
    "float32": (3.4028234663852886e38, 2.0 ** -126, 2.0 ** -149, 24),
    "float64": (1.7976931348623157e308, 2.0 ** -1022, 5e-324, 53),
}


def finfo(dtype: str) -> tuple[float, float, float, int]:
    """``(max, tiny, smallest subnormal, significand bits)`` of a floating dtype name."""
    return _FINFO[dtype]


def iinfo(dtype: str) -> tuple[int, int]:
    """``(min, max)`` of an integer dtype name."""
    bits = int(dtype.lstrip("uint"))
    if dtype.startswith("u"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def numpy_dtype(dtype: str):
    """The NumPy dtype holding ``dtype``'s values on the host (bfloat16 crosses as float32)."""
    return np.dtype("float32" if dtype == "bfloat16" else dtype)


def float_specials(dtype: str) -> list[float]:
    """NaN, both infinities and zeros, ones, halves, the largest finite value, the smallest
    normal and subnormal values (both signs), and a value that overflows ``exp``."""
    big, tiny, sub, _ = finfo(dtype)
    return [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -1.5,
            big, -big, tiny, -tiny, sub, -sub, 100.0 if dtype != "float64" else 1000.0]


def binary_specials(dtype: str) -> tuple[list[float], list[float]]:
    """Every pair of a smaller special set, as two flat lists ``(a, b)`` of equal length."""
    big, _, sub, _ = finfo(dtype)
    vals = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.5, 3.0, big, -big, sub]
    a = [x for x in vals for _ in vals]
    b = [y for _ in vals for y in vals]
    return a, b


def round_ties(dtype: str) -> list[float]:
    """Halves (which round to even), the values either side of 0.5, -0.4 (rounds to -0.0),
    the largest halves the dtype has, and integers too large to have a fraction."""
    _, _, _, bits = finfo(dtype)
    below_half = 0.5 - 2.0 ** -(bits + 1)  # the largest value below 0.5
    return [0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, below_half, -below_half, 0.5 + 2.0 ** -bits,
            -0.4, 0.4, 2.0 ** (bits - 1) - 0.5, -(2.0 ** (bits - 1)) + 0.5,
            2.0 ** (bits - 1) + 1.0, -(2.0 ** (bits - 1)) - 1.0]


def int_edges(dtype: str) -> list[int]:
    """The extremes of an integer dtype, their neighbours, and small values."""
    lo, hi = iinfo(dtype)
    vals = [lo, lo + 1, hi, hi - 1, 0, 1, 2]
    if lo < 0:
        vals += [-1, -2]
    return vals


def round_to(a, dtype: str) -> np.ndarray:
    """Float values rounded to ``dtype`` (half to even; bfloat16 too, which NumPy lacks),
    as float64."""
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(all="ignore"):
        if dtype != "bfloat16":
            return a.astype(numpy_dtype(dtype)).astype(np.float64)
        bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    out = bits.astype(np.uint32).view(np.float32).astype(np.float64)
    return np.where(np.isnan(a), a, out)
