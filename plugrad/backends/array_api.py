"""The shared backend implementation, written once on an Array API namespace ``xp``.

Every primitive here calls ``self.xp`` with the standard's names, so one code path serves
NumPy, CuPy (through ``array-api-compat``), array-api-strict, and any compliant library a
third party names (Chainer's ``xp`` idiom, Thinc's ``Ops``). What a library does differently is
a small hook, not a copy of the implementation:

* :meth:`ArrayAPIBackend._quiet` -- the floating-point error state around ops that could warn
  (NumPy's ``errstate`` by default; a no-op where the library never warns);
* :meth:`ArrayAPIBackend._on` -- the device context of creation primitives (none by default);
* :meth:`ArrayAPIBackend._pair` -- how a Python scalar operand is passed (the standard's 2023
  functions take arrays; libraries that take scalars skip the conversion).

What the standard lacks (scatter-add, random numbers) goes through host NumPy, correctly if
not fast; optional ops the namespace happens to have (``pad``, ``put_along_axis``) are used
when present. ``NumPyBackend`` and ``CuPyBackend`` subclass this and override only their own
fast paths; their shared nn kernels are :class:`plugrad.backends.xp_kernels.XpKernels`.
"""
from __future__ import annotations

import contextlib
import functools
import json

import numpy as np

from plugrad.backends._array_api_math import ArrayAPIMathKernels
from plugrad.backends.contract import Backend

_SCALARS = (bool, int, float)
_NULL = contextlib.nullcontext()

try:  # NumPy 2 keeps its error state in a context variable: setting it is ~50x cheaper
    from numpy._core._ufunc_config import _extobj_contextvar as NUMPY_ERRSTATE
    with np.errstate(all="ignore"):
        NUMPY_IGNORE_ALL = NUMPY_ERRSTATE.get()
except (ImportError, AttributeError):  # pragma: no cover - another NumPy layout
    NUMPY_ERRSTATE = NUMPY_IGNORE_ALL = None


class _NumPyQuiet:
    """``np.errstate(all="ignore")`` as one set of NumPy's context variable (0.1 us, not 2)."""

    __slots__ = ("token",)

    def __enter__(self):
        self.token = NUMPY_ERRSTATE.set(NUMPY_IGNORE_ALL)

    def __exit__(self, *exc):
        NUMPY_ERRSTATE.reset(self.token)


def numpy_quiet():
    """A context with NumPy's floating-point warnings off (what ``_quiet`` returns)."""
    return _NumPyQuiet() if NUMPY_ERRSTATE is not None else np.errstate(all="ignore")


class ArrayAPIBackend(ArrayAPIMathKernels, Backend):
    """Backend whose primitives call an Array API namespace ``xp``.

    ``namespace`` is the namespace itself or a zero-argument callable returning it, so that
    registering the backend does not import the library (it loads on first use).
    """

    def __init__(self, name: str, device_type: str, namespace, *, dtypes=None,
                 array_type: type | None = None):
        self.name = name
        self.device_type = device_type
        self._namespace = namespace
        if dtypes is not None:
            self.dtypes = frozenset(dtypes)
        if array_type is not None:
            self.array_type = array_type
        self._rng = np.random.default_rng(0)

    # ------------------------------------------------------------------ namespace, hooks
    @functools.cached_property
    def xp(self):
        """The Array API namespace, imported on first use (``array-api-compat``'s wrapper
        where the library needs one). A subclass may assign it directly."""
        ns = self._namespace() if callable(self._namespace) and not hasattr(
            self._namespace, "asarray") else self._namespace
        try:
            import array_api_compat  # noqa: PLC0415 - only when a namespace is first used
            ns = array_api_compat.array_namespace(ns.asarray([0]))
        except (ImportError, TypeError):
            pass
        if self.array_type is object:
            self.array_type = type(ns.asarray([0]))
        return ns

    def _quiet(self):
        """Context for ops that can meet IEEE edge cases (overflow, ``inf - inf``, ``0/0``,
        ``sin(inf)``; the contract: IEEE results, never warnings). Libraries built on NumPy
        report through NumPy's error state; one that never warns returns a null context."""
        return numpy_quiet()

    def _on(self, device):
        """Context in which creation primitives place arrays on ``device`` (an index or None)."""
        return _NULL

    def _pair(self, a, b):
        """The operands of a binary function: a Python scalar becomes a 0-d array of the other
        operand's dtype (the contract's weak-scalar rule; the 2023 standard takes arrays)."""
        if isinstance(a, _SCALARS):
            a = self.xp.asarray(a, dtype=b.dtype)
        elif isinstance(b, _SCALARS):
            b = self.xp.asarray(b, dtype=a.dtype)
        return a, b

    def _dt(self, dtype: str):
        return getattr(self.xp, dtype)

    def _is(self, x, dtype: str) -> bool:
        """Whether array ``x`` has the dtype named ``dtype`` (False where the namespace lacks
        that dtype, as array-api-strict lacks float16)."""
        dt = getattr(self.xp, dtype, None)
        return dt is not None and x.dtype == dt

    def is_available(self) -> bool:
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        try:
            self.xp  # noqa: B018 - importing it is the test
        except Exception as exc:  # noqa: BLE001 - any import failure means "not here"
            return f"{type(exc).__name__}: {exc}"
        return ""

    def dtype_of(self, x) -> str:
        return str(x.dtype).rsplit(".", 1)[-1]

    # ------------------------------------------------------------------ transfer, creation
    def from_numpy(self, a, dtype, device):
        xp = self.xp
        with self._on(device):
            if isinstance(a, self.array_type):  # device to device (also across devices)
                return xp.asarray(a, dtype=self._dt(dtype), copy=True)
            with numpy_quiet():  # float64 -> float16 on the host may overflow to inf
                a = np.asarray(a, dtype=np.dtype(dtype))  # keeps 0-d as 0-d
            try:
                return xp.asarray(a, copy=True)
            except (TypeError, ValueError):
                return xp.asarray(a.tolist(), dtype=self._dt(dtype))

    def to_numpy(self, x):
        try:
            return np.from_dlpack(x)
        except (TypeError, RuntimeError, BufferError, AttributeError):
            return np.asarray(x)

    def from_dlpack(self, obj, device):
        """The standard's ``from_dlpack`` (sharing memory); the composite's host copy where
        the library cannot read ``obj`` (e.g. NumPy and another device's memory)."""
        try:
            with self._on(device):
                return self.xp.from_dlpack(obj)
        except (BufferError, RuntimeError, TypeError, ValueError):
            return Backend.from_dlpack(self, obj, device)

    def full(self, shape, value, dtype, device):
        with self._on(device):
            return self.xp.full(shape, value, dtype=self._dt(dtype))

    def arange(self, start, stop, step, dtype, device):
        with self._on(device):
            return self.xp.arange(start, stop, step, dtype=self._dt(dtype))

    def astype(self, x, dtype):
        with self._quiet():  # a narrowing float cast may overflow to inf
            return self.xp.astype(x, self._dt(dtype), copy=True)

    def copy(self, x):
        return self.xp.asarray(x, copy=True)

    def assign(self, dst, key, value):
        dst[tuple(key) + (...,)] = value  # the standard wants every axis addressed
        return dst

    # ------------------------------------------------------------------ elementwise
    def neg(self, x): return self.xp.negative(x)
    def abs(self, x): return self.copy(x) if x.dtype == self.xp.bool else self.xp.abs(x)
    def tanh(self, x): return self.xp.tanh(x)
    def floor(self, x): return self.xp.floor(x)
    def ceil(self, x): return self.xp.ceil(x)
    def round(self, x): return self.xp.round(x)
    def sign(self, x): return self.xp.sign(x)
    def isnan(self, x): return self.xp.isnan(x)
    def logical_not(self, x): return self.xp.logical_not(x)

    def exp(self, x):
        with self._quiet():
            return self.xp.exp(x)

    def sin(self, x):
        with self._quiet():  # sin(inf) is NaN
            return self.xp.sin(x)

    def cos(self, x):
        with self._quiet():
            return self.xp.cos(x)

    def expm1(self, x):
        with self._quiet():
            return self.xp.expm1(x)

    def log(self, x):
        with self._quiet():
            return self.xp.log(x)

    def log1p(self, x):
        with self._quiet():
            return self.xp.log1p(x)

    def sqrt(self, x):
        with self._quiet():
            return self.xp.sqrt(x)

    def eq(self, a, b): return self.xp.equal(*self._pair(a, b))
    def ne(self, a, b): return self.xp.not_equal(*self._pair(a, b))
    def lt(self, a, b): return self.xp.less(*self._ordered(a, b))
    def le(self, a, b): return self.xp.less_equal(*self._ordered(a, b))
    def gt(self, a, b): return self.xp.greater(*self._ordered(a, b))
    def ge(self, a, b): return self.xp.greater_equal(*self._ordered(a, b))
    def logical_and(self, a, b): return self.xp.logical_and(*self._pair(a, b))
    def logical_or(self, a, b): return self.xp.logical_or(*self._pair(a, b))
    def logical_xor(self, a, b): return self.xp.logical_xor(*self._pair(a, b))

    def add(self, a, b):
        with self._quiet():  # overflow, inf - inf
            return self.xp.add(*self._pair(a, b))

    def sub(self, a, b):
        with self._quiet():
            return self.xp.subtract(*self._pair(a, b))

    def mul(self, a, b):
        with self._quiet():  # overflow, inf * 0
            return self.xp.multiply(*self._pair(a, b))

    def div(self, a, b):
        with self._quiet():
            return self.xp.divide(*self._pair(a, b))

    def floordiv(self, a, b):
        with self._quiet():
            return self.xp.floor_divide(*self._pair(a, b))

    def remainder(self, a, b):
        with self._quiet():
            return self.xp.remainder(*self._pair(a, b))

    def pow(self, a, b):
        if type(b) in (int, float) and b == 2:
            return self.xp.multiply(a, a)  # the commonest case: exact, and cannot warn
        with self._quiet():
            return self.xp.pow(*self._pair(a, b))

    def maximum(self, a, b):
        return self._like_bool(a, b, self.xp.maximum(*self._ordered(a, b)))

    def minimum(self, a, b):
        return self._like_bool(a, b, self.xp.minimum(*self._ordered(a, b)))

    def where(self, cond, a, b):
        if isinstance(a, _SCALARS) and isinstance(b, _SCALARS):
            raise TypeError("where: at least one of a, b must be an array")
        return self.xp.where(cond, *self._pair(a, b))

    def _ordered(self, a, b):
        """Operands of an ordering op: the standard orders numbers only, so bools (False <
        True) become int8 first."""
        a, b = self._pair(a, b)
        like = b if isinstance(a, _SCALARS) else a
        if like.dtype == self.xp.bool:
            a, b = (int(v) if isinstance(v, _SCALARS) else self.xp.astype(v, self.xp.int8)
                    for v in (a, b))
        return a, b

    def _like_bool(self, a, b, out):
        like = b if isinstance(a, _SCALARS) else a
        return self.xp.astype(out, self.xp.bool) if like.dtype == self.xp.bool else out

    # ------------------------------------------------------------------ reductions
    def sum(self, x, axes, keepdims):
        xp = self.xp
        with self._quiet():  # overflow to inf, inf - inf
            if self._is(x, "float16"):  # accumulate in float32, round once, as PyTorch does
                return xp.astype(xp.sum(x, axis=axes, keepdims=keepdims, dtype=xp.float32),
                                 xp.float16)
            return xp.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)

    def prod(self, x, axes, keepdims):
        with self._quiet():
            return self.xp.prod(x, axis=axes, keepdims=keepdims, dtype=x.dtype)

    def max(self, x, axes, keepdims):
        if x.dtype == self.xp.bool:  # any()
            return self.xp.any(x, axis=axes, keepdims=keepdims)
        return self.xp.max(x, axis=axes, keepdims=keepdims)

    def min(self, x, axes, keepdims):
        if x.dtype == self.xp.bool:  # all()
            return self.xp.all(x, axis=axes, keepdims=keepdims)
        return self.xp.min(x, axis=axes, keepdims=keepdims)

    def argmax(self, x, axis, keepdims):
        return self._arg(self.xp.argmax, x, axis, keepdims)

    def argmin(self, x, axis, keepdims):
        return self._arg(self.xp.argmin, x, axis, keepdims)

    def _arg(self, fn, x, axis, keepdims):
        xp = self.xp
        if x.dtype == xp.bool:
            x = xp.astype(x, xp.int8)
        out = xp.astype(fn(x, axis=axis), xp.int64, copy=False)
        if keepdims:  # reshaped here: not every library's argmax has keepdims (CuPy 13)
            out = xp.reshape(out, tuple(1 if axis is None or d == axis else n
                                        for d, n in enumerate(x.shape)))
        return out

    def cumsum(self, x, axis):
        xp = self.xp
        cumulative_sum = getattr(xp, "cumulative_sum", None) or xp.cumsum  # NumPy < 2.1
        with self._quiet():
            if self._is(x, "float16"):
                return xp.astype(cumulative_sum(x, axis=axis, dtype=xp.float32), xp.float16)
            return cumulative_sum(x, axis=axis, dtype=x.dtype)

    # ------------------------------------------------------------------ movement, indexing
    def reshape(self, x, shape): return self.xp.reshape(x, shape)
    def permute(self, x, axes): return self.xp.permute_dims(x, axes)
    def broadcast_to(self, x, shape): return self.xp.broadcast_to(x, shape)
    def concat(self, arrays, axis): return self.xp.concat(list(arrays), axis=axis)
    def flip(self, x, axes): return self.xp.flip(x, axis=axes)
    def gather(self, x, axis, index): return self.xp.take_along_axis(x, index, axis=axis)
    def take(self, x, axis, index): return self.xp.take(x, index, axis=axis)

    def slice(self, x, key):
        # The standard leaves stops past the end unspecified: clamp them to the axis.
        key = tuple(slice(k.start, min(k.stop, n), k.step) for k, n in zip(key, x.shape))
        return x[key + (...,)]

    def pad(self, x, widths, value):
        pad = getattr(self.xp, "pad", None)  # not in the standard; NumPy and CuPy have it
        if pad is None:
            return Backend.pad(self, x, widths, value)
        return pad(x, widths, mode="constant", constant_values=value)

    def matmul(self, a, b):
        xp = self.xp
        if a.dtype == xp.bool:  # the standard multiplies numbers only: count, then test
            counts = xp.matmul(xp.astype(a, xp.int64), xp.astype(b, xp.int64))
            return xp.astype(counts, xp.bool)
        with self._quiet():  # inf * 0 inside: NaN
            return xp.matmul(a, b)

    def scatter_add(self, x, axis, index, src):
        """The standard has no scatter: do it on the host, correctly, then come back."""
        out = np.array(self.to_numpy(x), copy=True)
        np.add.at(out, along_axis_key(self.to_numpy(index), axis), self.to_numpy(src))
        return self.from_numpy(out, self.dtype_of(x), None)

    def scatter(self, x, axis, index, src):
        put = getattr(self.xp, "put_along_axis", None)  # not in the standard either
        if put is None:
            return Backend.scatter(self, x, axis, index, src)
        out = self.copy(x)
        put(out, index, src, axis=axis)
        return out

    def nonzero(self, x):
        if not x.shape:  # the standard's nonzero refuses 0-d input
            return Backend.nonzero(self, x)
        xp = self.xp
        return xp.astype(xp.stack(xp.nonzero(x), axis=-1), xp.int64, copy=False)

    def argsort(self, x, axis, descending):
        xp = self.xp
        if x.dtype == xp.bool:  # the standard sorts numbers only
            x = xp.astype(x, xp.int8)
        out = xp.argsort(x, axis=axis, descending=descending, stable=True)
        return xp.astype(out, xp.int64, copy=False)

    # ------------------------------------------------------------------ random
    def seed(self, seed):
        self._rng = np.random.default_rng(seed)

    def rng_state(self):
        return json.dumps(self._rng.bit_generator.state).encode()

    def set_rng_state(self, state):
        self._rng.bit_generator.state = json.loads(state)

    def uniform(self, shape, dtype, device):
        """Host samples; to a narrow dtype they are rounded *toward zero* (to nearest, the top
        of the range would become 1.0, and [0, 1) is the contract)."""
        u = self._rng.random(shape, dtype=np.float64 if dtype == "float64" else np.float32)
        if dtype == "float16":
            out = u.astype(np.float16)
            u = np.where(out > u, np.nextafter(out, np.float16(0)), out)
        elif dtype == "bfloat16":  # truncating a float32's low 16 bits is toward zero
            u = (np.asarray(u).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
        return self.from_numpy(u, dtype, device)

    def normal(self, shape, dtype, device):
        sample = self._rng.standard_normal(
            shape, dtype=np.float64 if dtype == "float64" else np.float32)
        return self.from_numpy(sample, dtype, device)


def along_axis_key(index, axis: int, xp=np) -> tuple:
    """The fancy-index key that addresses ``out[..., index, ...]`` along ``axis`` with every
    other dimension enumerated, as ``np.take_along_axis`` builds it (built with ``xp``, so a
    CuPy index gets a key on its own device)."""
    key = []
    for d, n in enumerate(index.shape):
        if d == axis:
            key.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            key.append(xp.arange(n).reshape(shape))
    return tuple(key)
