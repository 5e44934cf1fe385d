"""The reference backend: every primitive of the contract in plain Python.

It is the executable definition of the primitives and the oracle of the conformance suite,
so it favours obvious correctness over speed: values are Python ``float``/``int`` computed
one at a time (see :mod:`.scalars` for the IEEE edge cases) and rounded or wrapped to the
dtype once, on store (see :mod:`.array`). Only the standard library is used, plus NumPy
inside :meth:`ReferenceBackend.from_numpy` / :meth:`ReferenceBackend.to_numpy`.
"""
from __future__ import annotations

import itertools
import json
import math
import operator
import random

from plugrad.backends.contract import Backend
from plugrad.backends.hooks import hookimpl

from . import scalars
from ._math import RefMathKernels
from .linalg import RefLinalgKernels
from .array import (FLOAT_DTYPES, MANTISSA_BITS, RefArray, broadcast_shapes, broadcast_values,
                    cast, offsets, size_of, strided, strides_of)

__all__ = ["ReferenceBackend", "RefArray"]

_INT_BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}


def _is_scalar(v) -> bool:
    return isinstance(v, (bool, int, float))


def _region(shape, key):
    """Shape, strides and start offset of ``x[key]`` for a tuple of slices (missing trailing
    slices select whole dimensions)."""
    key = tuple(key) + tuple(slice(None) for _ in shape[len(key):])
    ranges = [range(*k.indices(n)) for k, n in zip(key, shape)]
    own = strides_of(shape)
    return (tuple(len(r) for r in ranges),
            tuple(st * r.step for st, r in zip(own, ranges)),
            sum(st * r.start for st, r in zip(own, ranges)))


def _along(shape, axis: int, index: RefArray) -> list:
    """Flat offsets into an array of ``shape`` named by ``index`` along ``axis``: each entry's
    own position with its ``axis`` coordinate replaced by the entry (torch.gather addressing)."""
    if any(not 0 <= i < shape[axis] for i in index.data):
        raise IndexError(f"index out of range [0, {shape[axis]}) along axis {axis}")
    stride = strides_of(shape)[axis]
    base = offsets(index.shape, strides_of(shape))
    coord = offsets(index.shape, [int(d == axis) for d in range(len(shape))])
    return [b + (i - c) * stride for b, c, i in zip(base, coord, index.data)]


def _floating(dtype: str) -> str:
    if dtype not in FLOAT_DTYPES:
        raise TypeError(f"random samples need a floating dtype, not {dtype!r}")
    return dtype


def _total(dtype: str):
    """The sum used by reductions and matmul: exact (then rounded once) for floats."""
    return scalars.fsum if dtype in FLOAT_DTYPES else sum


class ReferenceBackend(RefMathKernels, RefLinalgKernels, Backend):
    """Pure-Python backend on :class:`RefArray` (single device; ``device`` is ignored)."""

    name = "reference"
    device_type = "ref"
    array_type = RefArray
    dtypes = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                        "float32", "float64"})

    def __init__(self):
        self._rng = random.Random(0)

    # ------------------------------------------------------------------ helpers
    def _map(self, fn, *operands, weak: str | None = None, out: str | None = None):
        """``fn`` applied elementwise over broadcast arrays and Python scalars.

        Scalars are weak: they take the dtype ``weak`` (default: the first array's). The
        result has dtype ``out`` (default: ``weak``). Every elementwise primitive is this.
        """
        arrays = [x for x in operands if not _is_scalar(x)]
        if not arrays:
            raise TypeError("an elementwise primitive needs at least one array")
        weak = weak or arrays[0].dtype
        shape = broadcast_shapes(*(x.shape for x in arrays))
        columns = [itertools.repeat(cast(x, weak)) if _is_scalar(x) else broadcast_values(x, shape)
                   for x in operands]
        return RefArray(shape, out or weak, map(fn, *columns))

    def _reduce(self, x, axes, keepdims: bool, fn, out: str | None = None):
        """``fn`` applied to the list of values of each group reduced over ``axes``."""
        axes = tuple(range(x.ndim)) if axes is None else tuple(axes)
        kept = tuple(d for d in range(x.ndim) if d not in axes)
        data = self.permute(x, kept + axes).data  # reduced axes last: groups are contiguous
        n = size_of(x.shape[d] for d in axes)
        shape = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)) if keepdims \
            else tuple(x.shape[d] for d in kept)
        groups = (data[i * n:(i + 1) * n] for i in range(size_of(shape)))
        return RefArray(shape, out or x.dtype, map(fn, groups))

    def _arg_best(self, x, axis, keepdims: bool, better):
        """argmax / argmin: the first best index, NaN counting as best."""
        pick = lambda v: scalars.nan_arg_best(v, better)  # noqa: E731
        if axis is not None:
            return self._reduce(x, (axis,), keepdims, pick, out="int64")
        shape = (1,) * x.ndim if keepdims else ()
        return RefArray(shape, "int64", [pick(x.data)])

    # ------------------------------------------------------------------ transfer, creation
    def from_numpy(self, a, dtype: str, device=None):
        import numpy as np
        a = np.asarray(a)
        return RefArray(a.shape, dtype, a.reshape(-1).tolist())

    def to_numpy(self, x):
        import numpy as np
        return np.array(x.data, dtype=x.dtype).reshape(x.shape)

    def full(self, shape, value, dtype: str, device=None):
        return RefArray(shape, dtype, [cast(value, dtype)] * size_of(shape))

    def astype(self, x, dtype: str):
        return RefArray(x.shape, dtype, x.data)

    def assign(self, dst, key, value):
        shape, strides, start = _region(dst.shape, key)
        # A fresh list of values is taken first, so value overlapping dst is harmless.
        values = ([cast(value, dst.dtype)] * size_of(shape) if _is_scalar(value)
                  else broadcast_values(value, shape))
        for o, v in zip(offsets(shape, strides, start), values):
            dst.data[o] = cast(v, dst.dtype)
        return dst

    # ------------------------------------------------------------------ unary
    def neg(self, x):
        return self._map(operator.neg, x)

    def abs(self, x):
        return self._map(abs, x)

    def exp(self, x):
        return self._map(scalars.exp, x)

    def log(self, x):
        return self._map(scalars.log, x)

    def sqrt(self, x):
        return self._map(scalars.sqrt, x)

    def sin(self, x):
        return self._map(scalars.sin, x)

    def cos(self, x):
        return self._map(scalars.cos, x)

    def tanh(self, x):
        return self._map(math.tanh, x)

    def floor(self, x):
        return self._map(scalars.floor, x)

    def round(self, x):
        return self._map(scalars.round_half_even, x)

    def logical_not(self, x):
        return self._map(operator.not_, x)

    # ------------------------------------------------------------------ binary
    def add(self, a, b):
        return self._map(operator.add, a, b)

    def sub(self, a, b):
        return self._map(operator.sub, a, b)

    def mul(self, a, b):
        return self._map(operator.mul, a, b)

    def div(self, a, b):
        return self._map(scalars.div, a, b)

    def floordiv(self, a, b):
        return self._map(scalars.floordiv, a, b)

    def pow(self, a, b):
        dtype = a.dtype if not _is_scalar(a) else b.dtype
        if dtype in _INT_BITS:
            bits = _INT_BITS[dtype]
            return self._map(lambda x, y: scalars.ipow(x, y, bits), a, b)
        return self._map(scalars.fpow, a, b)

    def eq(self, a, b):
        return self._map(operator.eq, a, b, out="bool")

    def lt(self, a, b):
        return self._map(operator.lt, a, b, out="bool")

    def logical_and(self, a, b):
        return self._map(lambda x, y: x and y, a, b)

    def where(self, cond, a, b):
        arrays = [v for v in (a, b) if not _is_scalar(v)]
        if not arrays:
            raise TypeError("where: at least one of a and b must be an array (its dtype is used)")
        return self._map(lambda c, x, y: x if c else y, cond, a, b, weak=arrays[0].dtype)

    # ------------------------------------------------------------------ reductions
    def sum(self, x, axes, keepdims: bool):
        return self._reduce(x, axes, keepdims, _total(x.dtype))

    def prod(self, x, axes, keepdims: bool):
        return self._reduce(x, axes, keepdims, math.prod)

    def max(self, x, axes, keepdims: bool):
        return self._reduce(x, axes, keepdims, lambda v: v[scalars.nan_arg_best(v, operator.gt)])

    def argmax(self, x, axis, keepdims: bool):
        return self._arg_best(x, axis, keepdims, operator.gt)

    def cumsum(self, x, axis: int):
        order = tuple(d for d in range(x.ndim) if d != axis) + (axis,)
        moved = self.permute(x, order)
        n = x.shape[axis]
        runs = (itertools.accumulate(moved.data[i:i + n]) for i in range(0, moved.size, n or 1))
        out = RefArray(moved.shape, x.dtype, itertools.chain.from_iterable(runs))
        return self.permute(out, tuple(order.index(d) for d in range(x.ndim)))

    # ------------------------------------------------------------------ movement
    def reshape(self, x, shape):
        return RefArray(shape, x.dtype, x.data)

    def permute(self, x, axes):
        if sorted(axes) != list(range(x.ndim)):
            raise ValueError(f"axes {axes} are not a permutation of {x.ndim} dims")
        own = strides_of(x.shape)
        return RefArray([x.shape[a] for a in axes], x.dtype,
                        strided(x.data, [x.shape[a] for a in axes], [own[a] for a in axes]))

    def broadcast_to(self, x, shape):
        return RefArray(shape, x.dtype, broadcast_values(x, shape))

    def slice(self, x, key):
        shape, strides, start = _region(x.shape, key)
        return RefArray(shape, x.dtype, strided(x.data, shape, strides, start))

    def concat(self, arrays, axis: int):
        first = arrays[0]
        for a in arrays:
            if a.dtype != first.dtype or a.shape[:axis] + a.shape[axis + 1:] != \
                    first.shape[:axis] + first.shape[axis + 1:]:
                raise ValueError("concat: arrays differ in dtype or in a dimension but axis")
        chunks = [size_of(a.shape[axis:]) for a in arrays]  # contiguous block per outer index
        data = [v for o in range(size_of(first.shape[:axis]))
                for a, c in zip(arrays, chunks) for v in a.data[o * c:(o + 1) * c]]
        shape = first.shape[:axis] + (sum(a.shape[axis] for a in arrays),) + first.shape[axis + 1:]
        return RefArray(shape, first.dtype, data)

    def gather(self, x, axis: int, index):
        return RefArray(index.shape, x.dtype, [x.data[o] for o in _along(x.shape, axis, index)])

    def scatter_add(self, x, axis: int, index, src):
        out = list(x.data)  # accumulate unrounded, round once on store
        for o, v in zip(_along(x.shape, axis, index), src.data):
            out[o] += v
        return RefArray(x.shape, x.dtype, out)

    def matmul(self, a, b):
        if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-2]:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not match")
        (n, k), m = a.shape[-2:], b.shape[-1]
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        av = broadcast_values(a, batch + (n, k))
        bv = broadcast_values(b, batch + (k, m))
        total = _total(a.dtype)
        out = []
        for t in range(size_of(batch)):
            lhs, rhs = av[t * n * k:(t + 1) * n * k], bv[t * k * m:(t + 1) * k * m]
            out += [total([lhs[i * k + p] * rhs[p * m + j] for p in range(k)])
                    for i in range(n) for j in range(m)]
        return RefArray(batch + (n, m), a.dtype, out)

    # ------------------------------------------------------------------ random
    def seed(self, seed: int) -> None:
        self._rng.seed(seed)

    def rng_state(self):
        version, internal, gauss = self._rng.getstate()
        return json.dumps([version, list(internal), gauss]).encode()

    def set_rng_state(self, state):
        version, internal, gauss = json.loads(state)
        self._rng.setstate((version, tuple(internal), gauss))

    def uniform(self, shape, dtype: str, device=None):
        # A random integer over 2**p, with p the dtype's significand bits, is exact in the
        # dtype and below 1, so rounding can never produce 1.0.
        bits = MANTISSA_BITS[_floating(dtype)]
        return RefArray(shape, dtype,
                        [self._rng.getrandbits(bits) / (1 << bits) for _ in range(size_of(shape))])

    def normal(self, shape, dtype: str, device=None):
        samples = [self._rng.gauss(0.0, 1.0) for _ in range(size_of(shape))]
        return RefArray(shape, _floating(dtype), samples)

    # ------------------------------------------------------------------ optional kernels
    # Overridden only where the composite is wrong at an edge the reference must define.

    def min(self, x, axes, keepdims):
        """Direct, because ``-max(-x)`` is wrong for the most negative integer (it wraps)."""
        return self._reduce(x, axes, keepdims, lambda v: v[scalars.nan_arg_best(v, operator.lt)])

    def argmin(self, x, axis, keepdims):
        """Direct, for the same wraparound reason as :meth:`min`."""
        return self._arg_best(x, axis, keepdims, operator.lt)

    def log1p(self, x):
        """Direct, because the composite gives NaN for ``log1p(inf)``."""
        return self._map(scalars.log1p, x)

    def expm1(self, x):
        """Direct, because the composite gives NaN for ``expm1(-inf)``."""
        return self._map(scalars.expm1, x)

    def remainder(self, a, b):
        """Direct, because ``a - (a // b) * b`` is NaN for ``b = ±inf`` and loses precision
        for large quotients; Python's ``%`` is exactly NumPy's ``remainder``."""
        return self._map(scalars.remainder, a, b)

    def fmod(self, a, b):
        """Direct (C's ``fmod`` via ``math.fmod``, exact), as :meth:`remainder`."""
        return self._map(scalars.fmod, a, b)


@hookimpl
def plugrad_backends():
    """The built-in ``ref`` device registers through the same hook as any plugin."""
    return [ReferenceBackend()]
