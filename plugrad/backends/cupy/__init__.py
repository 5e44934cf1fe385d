"""The ``cuda`` backend: the generic Array API backend on CuPy.

Registering it imports nothing: CuPy is imported the first time a ``cuda`` tensor is made,
so ``import plugrad`` works (and ``plugrad.cuda.is_available()`` is False) without CuPy or a
GPU.
"""
from __future__ import annotations

import numpy as np

from plugrad.backends.array_api import ArrayAPIBackend, _along_axis_key
from plugrad.backends.hooks import hookimpl


def _import_cupy():
    import cupy  # noqa: PLC0415 - imported lazily on purpose
    return cupy


class CuPyBackend(ArrayAPIBackend):
    """CuPy arrays on NVIDIA (or ROCm) GPUs."""

    def __init__(self):
        super().__init__("cupy", "cuda", _import_cupy,
                         dtypes={"bool", "uint8", "int8", "int16", "int32", "int64",
                                 "float16", "float32", "float64"})
        self._cupy = None
        self._available = None
        self._reason = ""

    @property
    def cp(self):
        if self._cupy is None:
            self._cupy = _import_cupy()
        return self._cupy

    @property
    def xp(self):
        """CuPy itself: its namespace follows the Array API closely enough for our calls."""
        if self._xp is None:
            self._xp = self.cp
            self.array_type = self.cp.ndarray
        return self._xp

    def is_available(self) -> bool:
        if self._available is None:
            try:
                cp = self.cp
                self._available = cp.cuda.runtime.getDeviceCount() > 0
                if not self._available:
                    self._reason = "CuPy is installed but no CUDA device was found"
            except ImportError as exc:
                self._available = False
                self._reason = (f"CuPy is not installed ({exc}); install plugrad[cuda12] or "
                                f"plugrad[cuda13]")
            except Exception as exc:  # noqa: BLE001 - driver errors mean "no GPU here"
                self._available = False
                self._reason = f"CUDA is not usable: {type(exc).__name__}: {exc}"
        return self._available

    def unavailable_reason(self) -> str:
        self.is_available()
        return self._reason

    def device_count(self) -> int:
        return self.cp.cuda.runtime.getDeviceCount() if self.is_available() else 0

    def synchronize(self, device=None) -> None:
        with self._on(device):
            self.cp.cuda.Device().synchronize()

    def _on(self, device):
        return self.cp.cuda.Device(device if device is not None else 0)

    def dtype_of(self, x) -> str:
        return x.dtype.name

    # ------------------------------------------------------------------ transfer, creation
    def from_numpy(self, a, dtype, device):
        with self._on(device):
            return self.cp.asarray(np.asarray(a, dtype=dtype))

    def to_numpy(self, x):
        return self.cp.asnumpy(x)

    def full(self, shape, value, dtype, device):
        with self._on(device):
            return self.cp.full(shape, value, dtype=dtype)

    def arange(self, start, stop, step, dtype, device):
        with self._on(device):
            return self.cp.arange(start, stop, step, dtype=dtype)

    def astype(self, x, dtype):
        return x.astype(dtype, copy=True)

    def copy(self, x):
        return x.copy()

    def _pair(self, a, b):
        return a, b  # CuPy's ufuncs take Python scalars as weak, like NumPy 2

    def sum(self, x, axes, keepdims):
        return self.cp.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)

    def prod(self, x, axes, keepdims):
        return self.cp.prod(x, axis=axes, keepdims=keepdims, dtype=x.dtype)

    def cumsum(self, x, axis):
        return self.cp.cumsum(x, axis=axis, dtype=x.dtype)

    def permute(self, x, axes):
        return self.cp.transpose(x, axes)

    def concat(self, arrays, axis):
        return self.cp.concatenate(arrays, axis=axis)

    def gather(self, x, axis, index):
        return self.cp.take_along_axis(x, index, axis=axis)

    def take(self, x, axis, index):
        return self.cp.take(x, index, axis=axis)

    def scatter_add(self, x, axis, index, src):
        import cupyx  # noqa: PLC0415
        out = x.copy()
        key = tuple(self.cp.asarray(k) for k in _along_axis_key(self.cp.asnumpy(index), axis))
        cupyx.scatter_add(out, key, src)
        return out

    def nonzero(self, x):
        return self.cp.argwhere(x).astype(self.cp.int64)

    def pad(self, x, widths, value):
        return self.cp.pad(x, widths, constant_values=value)

    def sigmoid(self, x):
        e = self.cp.exp(-self.cp.abs(x))
        r = 1.0 / (1.0 + e)
        return self.cp.where(x < 0, e * r, r)

    def erf(self, x):
        import cupyx.scipy.special  # noqa: PLC0415
        return cupyx.scipy.special.erf(x)

    def softmax(self, x, axis):
        e = self.cp.exp(x - self.cp.max(x, axis=axis, keepdims=True))
        e /= self.cp.sum(e, axis=axis, keepdims=True)
        return e

    # ------------------------------------------------------------------ random
    def seed(self, seed):
        self._seed = seed
        if self._cupy is not None and self.is_available():
            self.cp.random.seed(seed)

    def uniform(self, shape, dtype, device):
        self._ensure_seeded()
        with self._on(device):
            return self.cp.random.random(shape, dtype=np.float64 if dtype == "float64"
                                         else np.float32).astype(dtype, copy=False)

    def normal(self, shape, dtype, device):
        self._ensure_seeded()
        with self._on(device):
            return self.cp.random.standard_normal(
                shape, dtype=np.float64 if dtype == "float64" else np.float32
            ).astype(dtype, copy=False)

    def _ensure_seeded(self):
        if not getattr(self, "_seeded", False):
            self.cp.random.seed(getattr(self, "_seed", 0))
            self._seeded = True


@hookimpl
def plugrad_backends():
    return [CuPyBackend()]
