"""A plugrad backend written directly against the contract: NumPy arrays on device ``mini``.

Every required primitive is implemented in the most direct way; every optional kernel
(softmax, conv2d, min, ...) is left to the contract's composite fallback.
"""
import numpy as np

from plugrad.backends import Backend
from plugrad.backends.hooks import hookimpl


def _along_axis(index, axis):
    """The NumPy fancy index addressing ``out[..., index, ...]`` along ``axis``."""
    key = list(np.indices(index.shape, sparse=True))
    key[axis] = index
    return tuple(key)


class MinimalBackend(Backend):
    name = "minimal"
    device_type = "mini"
    dtypes = frozenset({"bool", "int32", "int64", "float32", "float64"})
    array_type = np.ndarray

    def __init__(self):
        self._rng = np.random.default_rng(0)

    # ---- transfer and creation (one device: the index is ignored)
    def from_numpy(self, a, dtype, device):
        return np.array(a, dtype=dtype, copy=True)

    def to_numpy(self, x):
        return np.asarray(x)

    def full(self, shape, value, dtype, device):
        return np.full(shape, value, dtype=dtype)

    def astype(self, x, dtype):
        with np.errstate(all="ignore"):
            return np.asarray(x).astype(dtype, copy=True)

    def assign(self, dst, key, value):
        if not isinstance(dst, np.ndarray):  # an immutable 0-d NumPy scalar: return a new one
            return np.array(value, dtype=dst.dtype)
        dst[key] = value
        return dst

    # ---- unary
    def neg(self, x): return np.negative(x)
    def abs(self, x): return np.abs(x)
    def sin(self, x): return np.sin(x)
    def cos(self, x): return np.cos(x)
    def tanh(self, x): return np.tanh(x)
    def floor(self, x): return np.floor(x)
    def round(self, x): return np.round(x)
    def logical_not(self, x): return np.logical_not(x)

    def exp(self, x):
        with np.errstate(all="ignore"):  # overflow gives inf, silently
            return np.exp(x)

    def log(self, x):
        with np.errstate(all="ignore"):  # log(0) = -inf, log(-1) = nan, silently
            return np.log(x)

    def sqrt(self, x):
        with np.errstate(all="ignore"):
            return np.sqrt(x)

    # ---- binary (Python scalars are weak in NumPy 2, as the contract wants)
    def add(self, a, b):
        with np.errstate(all="ignore"):
            return np.add(a, b)

    def sub(self, a, b):
        with np.errstate(all="ignore"):
            return np.subtract(a, b)

    def mul(self, a, b):
        with np.errstate(all="ignore"):
            return np.multiply(a, b)

    def div(self, a, b):
        with np.errstate(all="ignore"):
            return np.true_divide(a, b)

    def floordiv(self, a, b):
        with np.errstate(all="ignore"):
            return np.floor_divide(a, b)

    def pow(self, a, b):
        with np.errstate(all="ignore"):
            return np.power(a, b)

    def eq(self, a, b): return np.equal(a, b)
    def lt(self, a, b): return np.less(a, b)
    def logical_and(self, a, b): return np.logical_and(a, b)
    def where(self, cond, a, b): return np.where(cond, a, b)

    # ---- reductions
    def sum(self, x, axes, keepdims):
        return np.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)

    def prod(self, x, axes, keepdims):
        with np.errstate(all="ignore"):
            return np.prod(x, axis=axes, keepdims=keepdims, dtype=x.dtype)

    def max(self, x, axes, keepdims):
        return np.max(x, axis=axes, keepdims=keepdims)

    def argmax(self, x, axis, keepdims):
        return np.argmax(x, axis=axis, keepdims=keepdims).astype(np.int64)

    def cumsum(self, x, axis):
        return np.cumsum(x, axis=axis, dtype=x.dtype)

    # ---- movement and indexing
    def reshape(self, x, shape): return np.reshape(x, shape)
    def permute(self, x, axes): return np.transpose(x, axes)
    def broadcast_to(self, x, shape): return np.broadcast_to(x, shape)
    def slice(self, x, key): return x[key]
    def concat(self, arrays, axis): return np.concatenate(arrays, axis=axis)
    def gather(self, x, axis, index): return np.take_along_axis(x, index, axis=axis)

    def scatter_add(self, x, axis, index, src):
        out = np.array(x, copy=True)
        np.add.at(out, _along_axis(index, axis), src)
        return out

    def matmul(self, a, b): return np.matmul(a, b)

    # ---- random numbers
    def seed(self, seed):
        self._rng = np.random.default_rng(seed)

    def uniform(self, shape, dtype, device):
        return self._rng.random(shape, dtype=dtype)

    def normal(self, shape, dtype, device):
        return self._rng.standard_normal(shape, dtype=dtype)


@hookimpl
def plugrad_backends():
    return [MinimalBackend()]
