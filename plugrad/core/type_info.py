"""``plugrad.finfo`` / ``plugrad.iinfo``: the numerical limits of a dtype, as PyTorch gives
them (Python floats and ints; ``dtype`` is the name). NumPy and ml_dtypes know the IEEE
formats, so the values come from them rather than from tables kept by hand."""
from __future__ import annotations

import numpy as np

from plugrad.core import dtypes as _dt


def _np_finfo(name: str):
    if name == "bfloat16":
        ml_dtypes = _dt.ml_dtypes()
        return ml_dtypes.finfo(ml_dtypes.bfloat16)
    return np.finfo(name)


def _resolve(dtype, who: str, kinds: str, other: str):
    dt = _dt.get_default_dtype() if dtype is None else _dt.get_dtype(dtype)
    if dt.kind not in kinds:
        if who == "iinfo" and dt.kind == "b":
            raise TypeError("plugrad.bool is not supported by plugrad.iinfo")
        want = "a floating point" if who == "finfo" else "an integer"
        raise TypeError(f"plugrad.{who}() requires {want} input type. Use plugrad.{other} "
                        f"to handle 'plugrad.{who}'")
    return dt


class finfo:  # noqa: N801 - PyTorch's name
    """Limits of a floating dtype (the default dtype when none is given)."""

    def __init__(self, type=None):  # noqa: A002 - PyTorch's argument name
        dt = _resolve(type, "finfo", "f", "iinfo")
        f = _np_finfo(dt.name)
        self.bits = int(f.bits)
        self.eps = float(f.eps)
        self.max = float(f.max)
        self.min = float(f.min)
        self.tiny = self.smallest_normal = float(f.smallest_normal)
        self.resolution = 10.0 ** -int(f.precision)
        self.dtype = dt.name

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801
    """Limits of an integer dtype."""

    def __init__(self, type):  # noqa: A002
        dt = _resolve(type, "iinfo", "iu", "finfo")
        i = np.iinfo(dt.name)
        self.bits = int(i.bits)
        self.max = int(i.max)
        self.min = int(i.min)
        self.dtype = dt.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
