"""A plugrad backend from scratch on flat Python lists: device ``pylist``.

Written against the contract (``docs/backends.md`` and the docstrings of
``plugrad.backends.contract``) without NumPy arrays or the Array API helper: an array is a
shape, a dtype name and a row-major list of Python numbers. Each value is stored rounded
to its dtype (float32 through ``array('f')``, float16 through ``struct``) or wrapped
modulo ``2**bits`` (integers), so arithmetic can use Python's ``float``/``int`` and round
once, on store. NumPy is used only at the host boundary (``from_numpy``/``to_numpy``).

Slow, small and independent of plugrad's own reference backend: a second opinion on what
the contract says, and the example of a backend that is not NumPy-shaped.
"""
from __future__ import annotations

import math
import random
import struct
from array import array
from itertools import repeat

from plugrad.backends import Backend
from plugrad.backends.hooks import hookimpl

_INF, _NAN = math.inf, math.nan
_BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}
_SIGNIFICAND = {"float16": 11, "float32": 24, "float64": 53}


def _half(v: float) -> float:
    try:
        return struct.unpack("e", struct.pack("e", v))[0]
    except OverflowError:  # beyond float16's range after rounding: IEEE says inf
        return math.copysign(_INF, v)


def _wrapper(dtype: str):
    """The store function of an integer dtype: truncate floats, wrap modulo 2**bits."""
    bits = _BITS[dtype]
    mod, off = 1 << bits, 0 if dtype.startswith("u") else 1 << (bits - 1)

    def wrap(v):
        if isinstance(v, float):
            v = int(v) if math.isfinite(v) else 0  # NaN/inf to int: unspecified, no error
        return (int(v) + off) % mod - off
    return wrap


def _store(dtype: str, values) -> list:
    """``values`` as the dtype stores them (the one rounding rule of this backend)."""
    if dtype == "float64":
        return [float(v) for v in values]
    if dtype == "float32":
        return array("f", [float(v) for v in values]).tolist()
    if dtype == "float16":
        return [_half(float(v)) for v in values]
    if dtype == "bool":
        return [v != 0 for v in values]  # NaN != 0: True
    return list(map(_wrapper(dtype), values))


class ListArray:
    """Shape (tuple of ints), dtype name and the flat row-major list of values."""

    __slots__ = ("shape", "dtype", "data")

    def __init__(self, shape, dtype, data, rounded=False):
        self.shape = tuple(int(n) for n in shape)
        self.dtype = dtype
        self.data = list(data) if rounded else _store(dtype, data)
        assert len(self.data) == math.prod(self.shape), (self.shape, len(self.data))

    def __repr__(self):
        return f"ListArray({self.shape}, {self.dtype!r}, {self.data!r})"


# ---------------------------------------------------------------------- layout
def _strides(shape) -> list:
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return out[::-1]


def _gather_flat(data, shape, strides, start=0) -> list:
    """Values read through a strided view of ``data`` (any strides, also 0)."""
    offsets = [start]
    for n, st in zip(shape, strides):
        offsets = [o + i * st for o in offsets for i in range(n)]
    return [data[o] for o in offsets]


def _broadcast(shapes) -> tuple:
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(nd):
        sizes = {s[d - nd + len(s)] for s in shapes if d - nd + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _expand(x: ListArray, shape) -> list:
    """``x``'s values broadcast to ``shape``."""
    shape = tuple(shape)
    if x.shape == shape:
        return x.data
    pad = len(shape) - len(x.shape)
    strides = [0] * pad + [0 if n == 1 else st for n, st in zip(x.shape, _strides(x.shape))]
    return _gather_flat(x.data, shape, strides)


def _is_scalar(v) -> bool:
    return isinstance(v, (bool, int, float))


# ---------------------------------------------------------------------- IEEE scalar functions
def _exp(v):
    try:
        return math.exp(v)
    except OverflowError:
        return _INF


def _log(v):
    if v == 0:
        return -_INF
    return math.log(v) if v > 0 or v != v else _NAN


def _periodic(fn):
    return lambda v: fn(v) if math.isfinite(v) else (_NAN if v != v or math.isinf(v) else v)


def _floor(v):
    if not math.isfinite(v) or v == int(v):
        return v  # keeps inf, NaN, -0.0 and integral values
    return float(math.floor(v))


def _round_even(v):
    if not math.isfinite(v) or v == int(v):
        return v
    low = math.floor(v)
    frac = v - low
    up = frac > 0.5 or (frac == 0.5 and low % 2 == 1)
    return math.copysign(float(low + up), v)  # -0.4 rounds to -0.0


def _div(a, b):
    if b == 0:
        if a == 0 or a != a:
            return _NAN
        return math.copysign(_INF, a) * math.copysign(1.0, b)
    return a / b


def _floordiv(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return _div(a, b) if b == 0 else a // b
    return a // b


def _odd_integer(y):
    return math.isfinite(y) and y == int(y) and int(y) % 2 == 1


def _fpow(a, b):
    try:
        return math.pow(a, b)
    except OverflowError:
        return -_INF if a < 0 and _odd_integer(b) else _INF
    except ValueError:  # 0 to a negative power, or a negative base to a fraction
        if a == 0:
            return math.copysign(_INF, a) if _odd_integer(b) else _INF
        return _NAN


def _first_best(values, better):
    """Index of the first NaN, else of the first best value."""
    best = 0
    for i, v in enumerate(values):
        if v != v:
            return i
        if better(v, values[best]):
            best = i
    return best


class ListBackend(Backend):
    name = "pylist"
    device_type = "pylist"
    dtypes = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                        "float32", "float64"})
    array_type = ListArray

    def __init__(self):
        self._rng = random.Random(0)

    # ---- helpers
    def _elementwise(self, fn, *operands, out=None):
        """``fn`` over broadcast operands; a Python scalar takes the arrays' dtype first."""
        arrays = [x for x in operands if not _is_scalar(x)]
        dtype = arrays[0].dtype
        shape = _broadcast([x.shape for x in arrays])
        columns = [repeat(_store(dtype, [x])[0]) if _is_scalar(x) else _expand(x, shape)
                   for x in operands]
        return ListArray(shape, out or dtype, map(fn, *columns))

    def _groups(self, x, axes):
        """(kept shape, list of value groups) for a reduction over ``axes``."""
        axes = tuple(range(len(x.shape))) if axes is None else tuple(axes)
        kept = [d for d in range(len(x.shape)) if d not in axes]
        moved = self.permute(x, tuple(kept) + axes)
        n = math.prod(x.shape[d] for d in axes)
        count = math.prod(x.shape[d] for d in kept)
        return axes, kept, [moved.data[i * n:(i + 1) * n] for i in range(count)]

    def _reduce(self, x, axes, keepdims, fn, out=None):
        axes, kept, groups = self._groups(x, axes)
        shape = [1 if d in axes else n for d, n in enumerate(x.shape)] if keepdims \
            else [x.shape[d] for d in kept]
        return ListArray(shape, out or x.dtype, [fn(g) for g in groups])

    # ---- transfer and creation
    def from_numpy(self, a, dtype, device):
        import numpy as np
        a = np.asarray(a)
        return ListArray(a.shape, dtype, a.reshape(-1).tolist())

    def to_numpy(self, x):
        import numpy as np
        return np.array(x.data, dtype=x.dtype).reshape(x.shape)

    def full(self, shape, value, dtype, device):
        return ListArray(shape, dtype, [_store(dtype, [value])[0]] * math.prod(shape), True)

    def astype(self, x, dtype):
        if x.dtype.startswith("float") and dtype in _BITS:  # truncate toward zero first
            return ListArray(x.shape, dtype, [math.trunc(v) if math.isfinite(v) else 0
                                              for v in x.data])
        return ListArray(x.shape, dtype, x.data)

    def assign(self, dst, key, value):
        key = tuple(key) + (slice(None),) * (len(dst.shape) - len(key))
        ranges = [range(*k.indices(n)) for k, n in zip(key, dst.shape)]
        shape = [len(r) for r in ranges]
        own = _strides(dst.shape)
        start = sum(st * r.start for st, r in zip(own, ranges))
        strides = [st * r.step for st, r in zip(own, ranges)]
        offsets = _gather_flat(list(range(len(dst.data))), shape, strides, start)
        values = [value] * len(offsets) if _is_scalar(value) else list(_expand(value, shape))
        for o, v in zip(offsets, _store(dst.dtype, values)):  # values copied first: overlap ok
            dst.data[o] = v
        return dst

    # ---- unary
    def neg(self, x): return self._elementwise(lambda v: -v, x)
    def abs(self, x): return self._elementwise(abs, x)
    def exp(self, x): return self._elementwise(_exp, x)
    def log(self, x): return self._elementwise(_log, x)

    def sqrt(self, x):
        return self._elementwise(lambda v: math.sqrt(v) if v >= 0 or v != v else _NAN, x)

    def sin(self, x): return self._elementwise(_periodic(math.sin), x)
    def cos(self, x): return self._elementwise(_periodic(math.cos), x)
    def tanh(self, x): return self._elementwise(math.tanh, x)
    def floor(self, x): return self._elementwise(_floor, x)
    def round(self, x): return self._elementwise(_round_even, x)
    def logical_not(self, x): return self._elementwise(lambda v: not v, x)

    # ---- binary
    def add(self, a, b): return self._elementwise(lambda u, v: u + v, a, b)
    def sub(self, a, b): return self._elementwise(lambda u, v: u - v, a, b)
    def mul(self, a, b): return self._elementwise(lambda u, v: u * v, a, b)
    def div(self, a, b): return self._elementwise(_div, a, b)
    def floordiv(self, a, b): return self._elementwise(_floordiv, a, b)

    def pow(self, a, b):
        dtype = (b if _is_scalar(a) else a).dtype
        if dtype in _BITS:
            mod = 1 << _BITS[dtype]
            return self._elementwise(lambda u, v: pow(u, v, mod), a, b)
        return self._elementwise(_fpow, a, b)

    def eq(self, a, b): return self._elementwise(lambda u, v: u == v, a, b, out="bool")
    def lt(self, a, b): return self._elementwise(lambda u, v: u < v, a, b, out="bool")
    def logical_and(self, a, b): return self._elementwise(lambda u, v: u and v, a, b)

    def where(self, cond, a, b):
        like = next((v for v in (a, b) if not _is_scalar(v)), None)  # its dtype is the result's
        if like is None:
            raise TypeError("where: at least one of a and b must be an array")
        shape = _broadcast([cond.shape] + [v.shape for v in (a, b) if not _is_scalar(v)])
        c = _expand(cond, shape)
        av, bv = ([_store(like.dtype, [v])[0]] * len(c) if _is_scalar(v) else _expand(v, shape)
                  for v in (a, b))
        return ListArray(shape, like.dtype, [x if k else y for k, x, y in zip(c, av, bv)], True)

    # ---- reductions
    def sum(self, x, axes, keepdims):
        return self._reduce(x, axes, keepdims, _fsum if x.dtype.startswith("float") else sum)

    def prod(self, x, axes, keepdims):
        return self._reduce(x, axes, keepdims, math.prod)

    def max(self, x, axes, keepdims):
        return self._reduce(x, axes, keepdims, lambda g: g[_first_best(g, lambda u, v: u > v)])

    def argmax(self, x, axis, keepdims):
        pick = lambda g: _first_best(g, lambda u, v: u > v)  # noqa: E731
        if axis is None:
            return ListArray((1,) * len(x.shape) if keepdims else (), "int64", [pick(x.data)])
        return self._reduce(x, (axis,), keepdims, pick, out="int64")

    def cumsum(self, x, axis):
        order = tuple(d for d in range(len(x.shape)) if d != axis) + (axis,)
        moved = self.permute(x, order)
        n = x.shape[axis]
        data = []
        for i in range(0, len(moved.data), n or 1):
            total = 0
            for v in moved.data[i:i + n]:
                total += v
                data.append(total)
        out = ListArray(moved.shape, x.dtype, data)
        return self.permute(out, tuple(order.index(d) for d in range(len(x.shape))))

    # ---- movement and indexing
    def reshape(self, x, shape):
        return ListArray(shape, x.dtype, x.data, True)

    def permute(self, x, axes):
        own = _strides(x.shape)
        shape = [x.shape[a] for a in axes]
        return ListArray(shape, x.dtype, _gather_flat(x.data, shape, [own[a] for a in axes]), True)

    def broadcast_to(self, x, shape):
        return ListArray(shape, x.dtype, _expand(x, shape), True)

    def slice(self, x, key):
        key = tuple(key) + (slice(None),) * (len(x.shape) - len(key))
        ranges = [range(*k.indices(n)) for k, n in zip(key, x.shape)]
        own = _strides(x.shape)
        shape = [len(r) for r in ranges]
        start = sum(st * r.start for st, r in zip(own, ranges))
        return ListArray(shape, x.dtype, _gather_flat(
            x.data, shape, [st * r.step for st, r in zip(own, ranges)], start), True)

    def concat(self, arrays, axis):
        first = arrays[0]
        outer = math.prod(first.shape[:axis])
        blocks = [math.prod(a.shape[axis:]) for a in arrays]
        data = [v for o in range(outer) for a, n in zip(arrays, blocks)
                for v in a.data[o * n:(o + 1) * n]]
        shape = first.shape[:axis] + (sum(a.shape[axis] for a in arrays),) + first.shape[axis + 1:]
        return ListArray(shape, first.dtype, data, True)

    def _targets(self, shape, axis, index):
        """Flat offsets into an array of ``shape``: each index entry's own position with
        its ``axis`` coordinate replaced by the entry."""
        own = _strides(shape)
        out = []
        istrides = _strides(index.shape)
        for flat, i in enumerate(index.data):
            offset, rest = 0, flat
            for d, st in enumerate(istrides):
                c, rest = divmod(rest, st) if st else (0, rest)
                offset += (i if d == axis else c) * own[d]
            out.append(offset)
        return out

    def gather(self, x, axis, index):
        return ListArray(index.shape, x.dtype,
                         [x.data[o] for o in self._targets(x.shape, axis, index)], True)

    def scatter_add(self, x, axis, index, src):
        acc = list(x.data)
        for o, v in zip(self._targets(x.shape, axis, index), src.data):
            acc[o] += v  # summed unrounded, rounded once on store
        return ListArray(x.shape, x.dtype, acc)

    def matmul(self, a, b):
        (n, k), m = a.shape[-2:], b.shape[-1]
        batch = _broadcast([a.shape[:-2], b.shape[:-2]])
        av, bv = _expand(a, batch + (n, k)), _expand(b, batch + (k, m))
        total = _fsum if a.dtype.startswith("float") else sum
        out = []
        for t in range(math.prod(batch)):
            lhs, rhs = av[t * n * k:(t + 1) * n * k], bv[t * k * m:(t + 1) * k * m]
            out += [total([lhs[i * k + p] * rhs[p * m + j] for p in range(k)])
                    for i in range(n) for j in range(m)]
        return ListArray(batch + (n, m), a.dtype, out)

    # ---- random numbers
    def seed(self, seed):
        self._rng.seed(seed)

    def uniform(self, shape, dtype, device):
        bits = _SIGNIFICAND[dtype]  # k / 2**bits is exact in the dtype, and below 1
        return ListArray(shape, dtype, [self._rng.getrandbits(bits) / (1 << bits)
                                        for _ in range(math.prod(shape))])

    def normal(self, shape, dtype, device):
        return ListArray(shape, dtype, [self._rng.gauss(0.0, 1.0) for _ in range(math.prod(shape))])


def _fsum(values):
    """An accurate float sum with IEEE results where the plain sum is inf or NaN (math.fsum
    raises there)."""
    total = 0.0
    for v in values:
        total += v
    if not math.isfinite(total):
        return total
    try:
        return math.fsum(values)
    except OverflowError:
        return total


@hookimpl
def plugrad_backends():
    return [ListBackend()]
