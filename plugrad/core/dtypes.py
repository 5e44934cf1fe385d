"""Dtypes and PyTorch's type-promotion rules.

Backends see dtypes only by name; the core keeps one interned :class:`DType` object per name
so that comparisons are identity checks and promotion results can be cached.
"""
from __future__ import annotations

import functools

import numpy as np

from plugrad.core import naming
from plugrad.core.errors import OpError


def ml_dtypes():
    """The ml_dtypes module (bfloat16 on the host), imported on first use: importing it
    costs about a second, which ``import plugrad`` should not pay."""
    import ml_dtypes as module
    return module


class DType:
    """A tensor element type, printed as PyTorch prints its own (``plugrad.float32``)."""

    __slots__ = ("name", "itemsize", "kind", "is_floating_point", "is_signed", "_rank")

    def __init__(self, name: str, itemsize: int, kind: str, rank: int):
        self.name = name
        self.itemsize = itemsize
        self.kind = kind  # "b" bool, "i" signed int, "u" unsigned int, "f" floating
        self.is_floating_point = kind == "f"
        self.is_signed = kind in "if"
        self._rank = rank

    @property
    def is_complex(self) -> bool:
        return False

    @property
    def category(self) -> int:
        """0 bool, 1 integer, 2 floating: the order promotion climbs."""
        return {"b": 0, "i": 1, "u": 1, "f": 2}[self.kind]

    def to_numpy(self) -> np.dtype:
        if self.name == "bfloat16":
            return np.dtype(ml_dtypes().bfloat16)
        return np.dtype(self.name)

    def __repr__(self) -> str:
        return f"{naming.prefix}.{self.name}"

    def __reduce__(self):
        return (get_dtype, (self.name,))


bool_ = DType("bool", 1, "b", 0)
uint8 = DType("uint8", 1, "u", 1)
int8 = DType("int8", 1, "i", 2)
int16 = DType("int16", 2, "i", 3)
int32 = DType("int32", 4, "i", 4)
int64 = DType("int64", 8, "i", 5)
float16 = DType("float16", 2, "f", 6)
bfloat16 = DType("bfloat16", 2, "f", 7)
float32 = DType("float32", 4, "f", 8)
float64 = DType("float64", 8, "f", 9)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_ALIASES = {"float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
            "short": int16, "bool": bool_, "byte": uint8, "char": int8}

_default_float = float32

# PyTorch's legacy tensor-type names (``torch.FloatTensor``): ``x.type()`` answers with them
LEGACY_NAMES = {float32: "FloatTensor", float64: "DoubleTensor", float16: "HalfTensor",
                bfloat16: "BFloat16Tensor", int64: "LongTensor", int32: "IntTensor",
                int16: "ShortTensor", int8: "CharTensor", uint8: "ByteTensor",
                bool_: "BoolTensor"}
_BY_LEGACY_NAME = {name: d for d, name in LEGACY_NAMES.items()}


def parse_legacy_name(name: str):
    """``'torch.cuda.FloatTensor'`` (any package prefix) -> ``(float32, True)``; None if
    ``name`` is no legacy tensor-type name."""
    parts = name.split(".")
    dtype = _BY_LEGACY_NAME.get(parts[-1])
    if dtype is None:
        return None
    return dtype, len(parts) >= 2 and parts[-2] == "cuda"


def get_dtype(spec) -> DType:
    """Turn a DType, a name, a NumPy dtype or a Python type into a DType."""
    if isinstance(spec, DType):
        return spec
    if spec is float:
        return _default_float
    if spec is int:
        return int64
    if spec is bool:
        return bool_
    if isinstance(spec, str):
        name = spec.rsplit(".", 1)[-1]
        found = _BY_NAME.get(name) or _ALIASES.get(name)
        if found is not None:
            return found
    else:
        try:
            found = _BY_NAME.get(np.dtype(spec).name)
        except TypeError:
            found = None
        if found is not None:
            return found
    raise TypeError(f"unknown dtype {spec!r}; expected one of "
                    f"{', '.join(d.name for d in ALL_DTYPES)}")


def get_default_dtype() -> DType:
    return _default_float


def set_default_dtype(dtype) -> None:
    """Set the dtype of new floating tensors (float32 unless changed), as PyTorch does."""
    global _default_float
    d = get_dtype(dtype)
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating dtypes are allowed, got {d}")
    _default_float = d
    _scalar_result.cache_clear()


@functools.lru_cache(maxsize=None)
def promote_types(a: DType, b: DType) -> DType:
    """PyTorch's promotion of two tensor dtypes (a float beats any integer, whatever its width)."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.kind == "f":
        if {a.name, b.name} == {"float16", "bfloat16"}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    if a.kind == b.kind:
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a.kind == "i" else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    return {1: int16, 2: int32, 4: int64}.get(signed.itemsize, int64)


def scalar_dtype(value) -> DType:
    """The dtype a Python scalar would get on its own."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    return _default_float


@functools.lru_cache(maxsize=None)
def _scalar_result(dtype: DType, scalar_type: type) -> DType:
    return _combine(dtype, scalar_dtype(scalar_type(0)))


def result_with_scalar(dtype: DType, value) -> DType:
    """Result dtype of a tensor op with a Python scalar: the scalar only matters when it is
    of a higher category (``int_tensor * 2.5`` is float32, ``half_tensor * 2.5`` is half)."""
    return _scalar_result(dtype, type(value) if type(value) in (bool, int, float) else float)


def _combine(higher: DType, lower: DType) -> DType:
    """PyTorch's ``combine_categories``: operands of lower priority (0-d tensors, scalars)
    change the result only by raising its category."""
    if higher.kind == "f":
        return higher
    if higher is bool_ or lower.kind == "f":
        return promote_types(higher, lower)
    return higher


@functools.lru_cache(maxsize=4096)
def result_type_of(dims: tuple[tuple[DType, bool], ...]) -> DType:
    """Result dtype of tensors given as ``(dtype, is_zero_dim)`` pairs."""
    dim_result = zero_result = None
    for dtype, zero_dim in dims:
        if zero_dim:
            zero_result = dtype if zero_result is None else promote_types(zero_result, dtype)
        else:
            dim_result = dtype if dim_result is None else promote_types(dim_result, dtype)
    if dim_result is None:
        return zero_result
    if zero_result is None:
        return dim_result
    return _combine(dim_result, zero_result)


def wrap_int(value: int, dtype: DType) -> int:
    """A Python int as C converts it to the integer ``dtype``: modulo ``2**bits`` (PyTorch:
    ``uint8_tensor <= -1`` compares with 255, ``int8_tensor + 200`` adds -56)."""
    if not -(1 << 63) <= value < (1 << 64):
        raise OverflowError(f"Python int {value} too big to convert to {dtype.name}")
    bits = 8 * dtype.itemsize
    value &= (1 << bits) - 1
    if dtype.kind == "i" and value >> (bits - 1):
        value -= 1 << bits
    return value


def checked_scalar(op: str, value, dtype: DType):
    """A Python scalar converted to ``dtype`` as PyTorch's checked conversion does (fill
    values, clamp bounds, ``where``/``masked_fill`` scalars): an integer dtype takes a value
    in its range (an unsigned one also ``-max..-1`` for an int, wrapping; a float must be in
    ``[0, max]``) and truncates a float; out of range is ``RuntimeError: value cannot be
    converted to type ... without overflow``."""
    kind = dtype.kind
    if kind not in "iu" or type(value) is bool:
        return float(value) if kind == "f" else (bool(value) if kind == "b" else int(value))
    bits = 8 * dtype.itemsize
    if kind == "u":
        lo, hi = -((1 << bits) - 1), (1 << bits) - 1
        if isinstance(value, float):  # no wrapping for a float (c10's overflows): [0, max]
            lo = 0
    else:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if value != value or not lo <= value <= hi:  # NaN and inf too
        c = {"u": "uint", "i": "int"}[kind]
        raise OpError(f"{op}: value cannot be converted to type {c}{bits}_t without overflow "
                      f"(got {value!r})")
    return wrap_int(int(value), dtype)
