"""The reference array: a shape, a dtype name and a flat row-major list of Python values.

Every value is stored already rounded to its dtype (see :func:`cast`), so each primitive can
compute in Python ``float``/``int`` and round exactly once, on store. There are no strides
and no views: layout changes go through :func:`strided`, which copies.
"""
from __future__ import annotations

import math
import struct

FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")

#: Significand bits (including the implicit one) of each floating dtype.
MANTISSA_BITS = {"float16": 11, "float32": 24, "float64": 53}


def _float_caster(fmt: str):
    """Round a Python float to an IEEE format through ``struct`` (correct round-half-even);
    overflow saturates to ±inf as in IEEE arithmetic instead of raising."""
    def cast(v):
        v = float(v)
        try:
            return struct.unpack(fmt, struct.pack(fmt, v))[0]
        except OverflowError:
            return math.copysign(math.inf, v)
    return cast


def _int_caster(bits: int, signed: bool = True):
    """Convert to an integer of ``bits`` bits (two's complement when ``signed``), wrapping
    modulo ``2**bits`` like NumPy.

    Floats truncate toward zero; a non-finite float (undefined in C) becomes the minimum
    value, which is what NumPy gives on x86.
    """
    low, span = -(1 << (bits - 1)) if signed else 0, 1 << bits

    def cast(v):
        if isinstance(v, float):
            if not math.isfinite(v):
                return low
            v = math.trunc(v)
        return (int(v) - low) % span + low
    return cast


#: One scalar conversion per dtype name: any Python number in, the stored value out.
CASTS = {
    "bool": lambda v: v != 0,          # NaN != 0, so NaN is True as in NumPy
    "uint8": _int_caster(8, signed=False),
    "int8": _int_caster(8),
    "int16": _int_caster(16),
    "int32": _int_caster(32),
    "int64": _int_caster(64),
    "float16": _float_caster("e"),
    "float32": _float_caster("f"),
    "float64": float,
}


def cast(value, dtype: str):
    """``value`` converted to ``dtype`` (the single rounding / wrapping rule)."""
    return CASTS[dtype](value)


class RefArray:
    """An n-d array: ``shape`` (tuple of ints), ``dtype`` (name) and flat row-major ``data``.

    The shape never changes after construction; only :meth:`ReferenceBackend.assign`
    writes into ``data``.
    """

    __slots__ = ("shape", "dtype", "data")

    def __init__(self, shape, dtype: str, values):
        """Store ``values`` (any iterable of Python numbers) rounded to ``dtype``."""
        if dtype not in CASTS:
            raise TypeError(f"reference backend has no dtype {dtype!r}")
        self.shape = tuple(int(n) for n in shape)
        self.dtype = dtype
        self.data = list(map(CASTS[dtype], values))
        if len(self.data) != size_of(self.shape):
            raise ValueError(f"{len(self.data)} values do not fill shape {self.shape}")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        return f"RefArray(shape={self.shape}, dtype={self.dtype!r}, data={self.data!r})"


# ---------------------------------------------------------------------- layout helpers
def size_of(shape) -> int:
    return math.prod(shape)


def strides_of(shape) -> tuple:
    """Row-major element strides of a contiguous array of ``shape``."""
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


def offsets(shape, strides, start: int = 0) -> list:
    """Flat offsets ``start + sum(i_d * strides_d)`` of every index of ``shape``, row-major."""
    offs = [start]
    for n, st in zip(shape, strides):
        offs = [o + i * st for o in offs for i in range(n)]
    return offs


def strided(data, shape, strides, start: int = 0) -> list:
    """The values read from ``data`` through a strided view (a copy): the one layout
    primitive behind broadcast, permute and slice."""
    return [data[o] for o in offsets(shape, strides, start)]


def broadcast_shapes(*shapes) -> tuple:
    """The NumPy broadcast of ``shapes``; ValueError when they do not broadcast."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        sizes = {s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_values(x: RefArray, shape) -> list:
    """The values of ``x`` broadcast to ``shape`` (row-major list)."""
    shape = tuple(shape)
    if x.shape == shape:
        return list(x.data)
    if broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"cannot broadcast {x.shape} to {shape}")
    pad = len(shape) - x.ndim
    own = strides_of(x.shape)
    strides = [0] * pad + [0 if n == 1 else st for n, st in zip(x.shape, own)]
    return strided(x.data, shape, strides)
