"""A generic backend over any Array API namespace (NumPy, CuPy, array-api-strict, ...).

One code path serves every compliant library (Chainer's ``xp`` idiom): a third party brings
a backend by naming a namespace. Libraries subclass it to override only their hot paths.
What the standard lacks (scatter-add, random numbers) goes through host NumPy by default.
"""
from __future__ import annotations

import numpy as np

from plugrad.backends.contract import Backend


class ArrayAPIBackend(Backend):
    """Backend whose primitives call an Array API namespace ``xp``.

    ``namespace`` is the namespace itself or a zero-argument callable returning it, so that
    registering the backend does not import the library (it loads on first use).
    """

    def __init__(self, name: str, device_type: str, namespace, *, dtypes=None,
                 array_type: type | None = None):
        self.name = name
        self.device_type = device_type
        self._namespace = namespace
        self._xp = None
        if dtypes is not None:
            self.dtypes = frozenset(dtypes)
        if array_type is not None:
            self.array_type = array_type
        self._rng = np.random.default_rng(0)

    # ------------------------------------------------------------------ namespace
    @property
    def xp(self):
        """The Array API namespace, imported on first use."""
        if self._xp is None:
            ns = self._namespace() if callable(self._namespace) and not hasattr(
                self._namespace, "asarray") else self._namespace
            try:
                import array_api_compat
                ns = array_api_compat.array_namespace(ns.asarray([0]))
            except (ImportError, TypeError):
                pass
            self._xp = ns
            if self.array_type is object:
                self.array_type = type(ns.asarray([0]))
        return self._xp

    def is_available(self) -> bool:
        try:
            self.xp
        except Exception:  # noqa: BLE001 - any import failure means "not here"
            return False
        return True

    def unavailable_reason(self) -> str:
        try:
            self.xp
        except Exception as exc:  # noqa: BLE001
            return f"{type(exc).__name__}: {exc}"
        return ""

    def _dt(self, dtype: str):
        return getattr(self.xp, dtype)

    def dtype_of(self, x) -> str:
        return str(x.dtype).rsplit(".", 1)[-1]

    # ------------------------------------------------------------------ transfer, creation
    def from_numpy(self, a, dtype, device):
        a = np.array(a, dtype=np.dtype(dtype), order="C", copy=True)  # keeps 0-d as 0-d
        try:
            return self.xp.asarray(a)
        except (TypeError, ValueError):
            return self.xp.asarray(a.tolist(), dtype=self._dt(dtype))

    def to_numpy(self, x):
        try:
            return np.from_dlpack(x)
        except (TypeError, RuntimeError, BufferError, AttributeError):
            return np.asarray(x)

    def full(self, shape, value, dtype, device):
        return self.xp.full(shape, value, dtype=self._dt(dtype))

    def astype(self, x, dtype):
        return self.xp.astype(x, self._dt(dtype), copy=True)

    def assign(self, dst, key, value):
        dst[tuple(key) + (...,)] = value  # the standard wants every axis addressed
        return dst

    def arange(self, start, stop, step, dtype, device):
        return self.xp.arange(start, stop, step, dtype=self._dt(dtype))

    # ------------------------------------------------------------------ elementwise
    def neg(self, x): return self.xp.negative(x)
    def abs(self, x):
        return x if x.dtype == self.xp.bool else self.xp.abs(x)
    def exp(self, x):
        with _quiet():
            return self.xp.exp(x)

    def log(self, x):
        with _quiet():
            return self.xp.log(x)

    def sqrt(self, x):
        with _quiet():
            return self.xp.sqrt(x)
    def sin(self, x): return self.xp.sin(x)
    def cos(self, x): return self.xp.cos(x)
    def tanh(self, x): return self.xp.tanh(x)
    def floor(self, x): return self.xp.floor(x)
    def ceil(self, x): return self.xp.ceil(x)
    def round(self, x): return self.xp.round(x)
    def sign(self, x): return self.xp.sign(x)
    def isnan(self, x): return self.xp.isnan(x)
    def log1p(self, x):
        with _quiet():
            return self.xp.log1p(x)

    def expm1(self, x):
        with _quiet():
            return self.xp.expm1(x)
    def logical_not(self, x): return self.xp.logical_not(x)

    def add(self, a, b): return self.xp.add(*self._pair(a, b))
    def sub(self, a, b): return self.xp.subtract(*self._pair(a, b))
    def mul(self, a, b): return self.xp.multiply(*self._pair(a, b))
    def div(self, a, b):
        with _quiet():
            return self.xp.divide(*self._pair(a, b))

    def floordiv(self, a, b):
        with _quiet():
            return self.xp.floor_divide(*self._pair(a, b))

    def remainder(self, a, b):
        with _quiet():
            return self.xp.remainder(*self._pair(a, b))

    def pow(self, a, b):
        with _quiet():
            return self.xp.pow(*self._pair(a, b))
    def eq(self, a, b): return self.xp.equal(*self._pair(a, b))
    def ne(self, a, b): return self.xp.not_equal(*self._pair(a, b))
    def lt(self, a, b): return self.xp.less(*self._ordered(a, b))
    def le(self, a, b): return self.xp.less_equal(*self._ordered(a, b))
    def gt(self, a, b): return self.xp.greater(*self._ordered(a, b))
    def ge(self, a, b): return self.xp.greater_equal(*self._ordered(a, b))

    def maximum(self, a, b):
        return self._like_bool(a, b, self.xp.maximum(*self._ordered(a, b)))

    def minimum(self, a, b):
        return self._like_bool(a, b, self.xp.minimum(*self._ordered(a, b)))

    def _ordered(self, a, b):
        """Operands of an ordering op: the standard orders numbers only, so bools (False <
        True) become int8 first."""
        a, b = self._pair(a, b)
        if a.dtype == self.xp.bool:
            a, b = self.xp.astype(a, self.xp.int8), self.xp.astype(b, self.xp.int8)
        return a, b

    def _like_bool(self, a, b, out):
        like = b if isinstance(a, (bool, int, float)) else a
        return self.xp.astype(out, self.xp.bool) if like.dtype == self.xp.bool else out
    def logical_and(self, a, b): return self.xp.logical_and(*self._pair(a, b))
    def logical_or(self, a, b): return self.xp.logical_or(*self._pair(a, b))
    def logical_xor(self, a, b): return self.xp.logical_xor(*self._pair(a, b))

    def _pair(self, a, b):
        """Array API functions take arrays: turn a Python scalar into a 0-d array of the
        other operand's dtype (the contract's weak-scalar rule)."""
        if isinstance(a, (bool, int, float)):
            a = self.xp.asarray(a, dtype=b.dtype)
        elif isinstance(b, (bool, int, float)):
            b = self.xp.asarray(b, dtype=a.dtype)
        return a, b

    def where(self, cond, a, b):
        if isinstance(a, (bool, int, float)) and isinstance(b, (bool, int, float)):
            raise TypeError("where: at least one of a, b must be an array")
        a, b = self._pair(a, b)
        return self.xp.where(cond, a, b)

    # ------------------------------------------------------------------ reductions
    def sum(self, x, axes, keepdims):
        return self.xp.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)

    def prod(self, x, axes, keepdims):
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
        x = self.xp.astype(x, self.xp.int8) if x.dtype == self.xp.bool else x
        return self.xp.astype(self.xp.argmax(x, axis=axis, keepdims=keepdims), self.xp.int64)

    def argmin(self, x, axis, keepdims):
        x = self.xp.astype(x, self.xp.int8) if x.dtype == self.xp.bool else x
        return self.xp.astype(self.xp.argmin(x, axis=axis, keepdims=keepdims), self.xp.int64)

    def cumsum(self, x, axis):
        return self.xp.cumulative_sum(x, axis=axis, dtype=x.dtype)

    # ------------------------------------------------------------------ movement
    def reshape(self, x, shape): return self.xp.reshape(x, shape)
    def permute(self, x, axes): return self.xp.permute_dims(x, axes)
    def broadcast_to(self, x, shape): return self.xp.broadcast_to(x, shape)
    def slice(self, x, key):
        # The standard leaves stops past the end unspecified: clamp them to the axis.
        key = tuple(slice(k.start, min(k.stop, n), k.step) for k, n in zip(key, x.shape))
        return x[key + (...,)]
    def concat(self, arrays, axis): return self.xp.concat(list(arrays), axis=axis)
    def flip(self, x, axes): return self.xp.flip(x, axis=axes)
    def matmul(self, a, b):
        if a.dtype == self.xp.bool:  # the standard multiplies numbers only: count, then test
            counts = self.xp.matmul(self.xp.astype(a, self.xp.int64), self.xp.astype(b, self.xp.int64))
            return self.xp.astype(counts, self.xp.bool)
        return self.xp.matmul(a, b)

    def gather(self, x, axis, index):
        return self.xp.take_along_axis(x, index, axis=axis)

    def scatter_add(self, x, axis, index, src):
        """The standard has no scatter: do it on the host, correctly, then come back."""
        out = np.array(self.to_numpy(x), copy=True)
        np.add.at(out, _along_axis_key(self.to_numpy(index), axis), self.to_numpy(src))
        return self.from_numpy(out, self.dtype_of(x), None)

    def nonzero(self, x):
        idx = self.xp.nonzero(x)
        if not idx:  # 0-d input
            return self.from_numpy(np.argwhere(self.to_numpy(x)), "int64", None)
        return self.xp.astype(self.xp.stack(idx, axis=-1), self.xp.int64)

    # ------------------------------------------------------------------ random
    def seed(self, seed):
        self._rng = np.random.default_rng(seed)

    def uniform(self, shape, dtype, device):
        sample = self._rng.random(shape, dtype=np.float64 if dtype == "float64" else np.float32)
        return self.from_numpy(sample, dtype, device)

    def normal(self, shape, dtype, device):
        sample = self._rng.standard_normal(
            shape, dtype=np.float64 if dtype == "float64" else np.float32)
        return self.from_numpy(sample, dtype, device)


def _quiet():
    """IEEE results without warnings (the contract's rule). Libraries built on NumPy report
    through NumPy's error state; for others this is a no-op."""
    return np.errstate(all="ignore")


def _along_axis_key(index, axis: int, xp=np) -> tuple:
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
