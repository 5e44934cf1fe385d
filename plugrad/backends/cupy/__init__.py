"""The ``cuda`` backend: the generic Array API backend on CuPy, with CuPy's own fast paths.

Registering it imports nothing: CuPy is imported the first time a ``cuda`` tensor is made (or
``plugrad.cuda.is_available()`` is asked), so ``import plugrad`` works without CuPy or a GPU.

Devices. A creation primitive's ``device`` index (``cuda:N``) selects ``cupy.cuda.Device(N)``;
``None`` (plain ``"cuda"``) means CuPy's current device, which ``plugrad.cuda.set_device``
changes. CuPy launches a kernel on the *current* device, so on a machine with several GPUs
every primitive is run with the device of its first array argument made current (on a single
GPU this is skipped: no per-op cost).

Everything CuPy calls here exists in CuPy 13 (NumPy-1 style names: ``power``, ``concatenate``,
``transpose``; not the Array API 2023 aliases), and no primitive copies data to the host
except ``to_numpy``.
"""
from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

from plugrad.backends.array_api import ArrayAPIBackend, _along_axis_key
from plugrad.backends.contract import optional_kernels, required_primitives
from plugrad.backends.cupy.kernels import FUSED_DTYPES, Kernels
from plugrad.backends.hooks import hookimpl
from plugrad.backends.numpy.nn_kernels import _taps as _numpy_taps


def _import_cupy():
    import cupy  # noqa: PLC0415 - imported lazily on purpose
    return cupy


_NULL = contextlib.nullcontext()
_SCALARS = (bool, int, float)
# Creation primitives carry their own ``device`` argument; never wrapped per device.
_CREATION = frozenset({"from_numpy", "full", "arange", "uniform", "normal", "seed"})


class CuPyBackend(ArrayAPIBackend):
    """CuPy arrays on NVIDIA (or ROCm) GPUs."""

    def __init__(self):
        super().__init__("cupy", "cuda", _import_cupy,
                         dtypes={"bool", "uint8", "int8", "int16", "int32", "int64",
                                 "float16", "float32", "float64"})
        self._cupy = None
        self._available = None
        self._reason = ""
        self._count = 0
        self._seed = 0
        self._seeded: set = set()  # device ids whose generator was seeded with self._seed
        self._kernels = None
        self._special = None

    # ------------------------------------------------------------------ environment
    @property
    def cp(self):
        if self._cupy is None:
            self._cupy = _import_cupy()
        return self._cupy

    @property
    def xp(self):
        """CuPy itself: its namespace follows NumPy closely enough for our calls."""
        if self._xp is None:
            self._xp = self.cp
            self.array_type = self.cp.ndarray
        return self._xp

    @property
    def k(self) -> Kernels:
        """The fused elementwise kernels (compiled on first use)."""
        if self._kernels is None:
            self._kernels = Kernels(self.cp)
        return self._kernels

    def is_available(self) -> bool:
        if self._available is None:
            try:
                cp = self.cp
                self._count = int(cp.cuda.runtime.getDeviceCount())
                self._available = self._count > 0
                if not self._available:
                    self._reason = "CuPy is installed but no CUDA device was found"
                else:
                    self.xp  # noqa: B018 - sets array_type
                    if self._count > 1:
                        self._install_device_guards()
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
        return self._count if self.is_available() else 0

    def current_device(self) -> int:
        return int(self.cp.cuda.runtime.getDevice())

    def synchronize(self, device=None) -> None:
        self.cp.cuda.Device(device if device is not None else self.current_device()).synchronize()

    def _on(self, device):
        """Context making ``cuda:device`` current (``None``: stay on the current device)."""
        return _NULL if device is None else self.cp.cuda.Device(device)

    def _install_device_guards(self) -> None:
        """With several GPUs, run each primitive on the device of its first array argument
        (CuPy would otherwise launch on the current device and fail, or go over peer access).
        Instance attributes shadow the methods, so the registry's kernel table picks them up."""
        ndarray = self.cp.ndarray
        get_device = self.cp.cuda.runtime.getDevice

        def guard(fn):
            @functools.wraps(fn)
            def call(*args, **kwargs):
                for a in args:
                    if isinstance(a, (list, tuple)) and a and isinstance(a[0], ndarray):
                        a = a[0]
                    if isinstance(a, ndarray):
                        dev = a.device
                        if dev.id != get_device():
                            with dev:
                                return fn(*args, **kwargs)
                        break
                return fn(*args, **kwargs)
            return call

        for op in required_primitives() + optional_kernels() + ("dtype_of",):
            if op not in _CREATION:
                setattr(self, op, guard(getattr(self, op)))

    def dtype_of(self, x) -> str:
        return x.dtype.name

    # ------------------------------------------------------------------ transfer, creation
    def from_numpy(self, a, dtype, device):
        cp = self.cp
        with self._on(device):
            if isinstance(a, cp.ndarray):  # device to device (also across GPUs)
                return cp.array(a, dtype=dtype, copy=True)
            return cp.asarray(np.asarray(a, dtype=dtype))  # (ascontiguousarray makes 0-d 1-d)

    def to_numpy(self, x):
        return self.cp.asnumpy(x)

    def from_dlpack(self, obj, device=None):
        """A CuPy array sharing memory with any object exporting ``__dlpack__`` on a GPU."""
        with self._on(device):
            return self.cp.from_dlpack(obj)

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

    def assign(self, dst, key, value):
        cp = self.cp
        if _self_overlapping(dst):
            # A broadcast view (stride 0): CuPy would let us write through it into memory
            # that other elements, and maybe other tensors, share. Write into a copy instead
            # (the contract's "cannot be written: return a new array").
            dst = dst.copy()  # C-contiguous, fresh memory
        # CuPy's copy kernel does not guard against overlapping source and destination.
        elif isinstance(value, cp.ndarray) and cp.may_share_memory(dst, value):
            value = value.copy()
        dst[key] = value
        return dst

    # ------------------------------------------------------------------ elementwise
    def _pair(self, a, b):
        return a, b  # CuPy's ufuncs take Python scalars as they are (weak)

    def neg(self, x): return self.cp.negative(x)
    def abs(self, x): return self.cp.absolute(x)
    def exp(self, x): return self.cp.exp(x)
    def log(self, x): return self.cp.log(x)
    def sqrt(self, x): return self.cp.sqrt(x)
    def sin(self, x): return self.cp.sin(x)
    def cos(self, x): return self.cp.cos(x)
    def tanh(self, x): return self.cp.tanh(x)
    def floor(self, x): return self.cp.floor(x)
    def ceil(self, x): return self.cp.ceil(x)
    def round(self, x): return self.cp.rint(x)  # halves to even
    def sign(self, x): return self.cp.sign(x)
    def isnan(self, x): return self.cp.isnan(x)
    def log1p(self, x): return self.cp.log1p(x)
    def expm1(self, x): return self.cp.expm1(x)
    def logical_not(self, x): return self.cp.logical_not(x)

    def add(self, a, b): return self.cp.add(a, b)
    def sub(self, a, b): return self.cp.subtract(a, b)
    def mul(self, a, b): return self.cp.multiply(a, b)
    def div(self, a, b): return self.cp.true_divide(a, b)
    def floordiv(self, a, b): return self.cp.floor_divide(a, b)
    def remainder(self, a, b): return self.cp.remainder(a, b)
    def eq(self, a, b): return self.cp.equal(a, b)
    def ne(self, a, b): return self.cp.not_equal(a, b)
    def lt(self, a, b): return self.cp.less(a, b)
    def le(self, a, b): return self.cp.less_equal(a, b)
    def gt(self, a, b): return self.cp.greater(a, b)
    def ge(self, a, b): return self.cp.greater_equal(a, b)
    def maximum(self, a, b): return self.cp.maximum(a, b)
    def minimum(self, a, b): return self.cp.minimum(a, b)
    def logical_and(self, a, b): return self.cp.logical_and(a, b)
    def logical_or(self, a, b): return self.cp.logical_or(a, b)
    def logical_xor(self, a, b): return self.cp.logical_xor(a, b)

    def pow(self, a, b):
        if isinstance(b, (int, float)) and b == 2:
            return self.cp.multiply(a, a)
        return self.cp.power(a, b)

    def where(self, cond, a, b):
        if isinstance(a, _SCALARS) and isinstance(b, _SCALARS):
            raise TypeError("where: at least one of a, b must be an array")
        return self.cp.where(cond, a, b)

    def sigmoid(self, x):
        if x.dtype.name in FUSED_DTYPES:
            return self.k.sigmoid(x)
        e = self.cp.exp(-self.cp.absolute(x))
        r = 1.0 / (1.0 + e)
        return self.cp.where(x < 0, e * r, r)

    def erf(self, x):
        if self._special is None:
            import cupyx.scipy.special  # noqa: PLC0415
            self._special = cupyx.scipy.special
        if x.dtype.name == "float16":  # erf is provided for float32/float64
            return self._special.erf(x.astype("float32")).astype("float16")
        return self._special.erf(x)

    # ------------------------------------------------------------------ reductions
    def sum(self, x, axes, keepdims):
        if x.dtype.name == "float16":  # accumulate in float32 (a float16 sum stalls at 2048)
            return self.cp.sum(x, axis=axes, keepdims=keepdims,
                               dtype=self.cp.float32).astype(x.dtype)
        return self.cp.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)

    def prod(self, x, axes, keepdims):
        return self.cp.prod(x, axis=axes, keepdims=keepdims, dtype=x.dtype)

    def max(self, x, axes, keepdims):
        return self.cp.amax(x, axis=axes, keepdims=keepdims)

    def min(self, x, axes, keepdims):
        return self.cp.amin(x, axis=axes, keepdims=keepdims)

    def argmax(self, x, axis, keepdims):
        return self._index(self.cp.argmax(x, axis=axis), x, axis, keepdims)

    def argmin(self, x, axis, keepdims):
        return self._index(self.cp.argmin(x, axis=axis), x, axis, keepdims)

    def _index(self, idx, x, axis, keepdims):
        idx = idx.astype(self.cp.int64, copy=False)
        if keepdims:  # cupy.argmax(keepdims=) is recent; reshape instead
            shape = tuple(1 if (axis is None or d == axis) else n for d, n in enumerate(x.shape))
            idx = idx.reshape(shape)
        return idx

    def cumsum(self, x, axis):
        if x.dtype.name == "float16":
            return self.cp.cumsum(x, axis=axis, dtype=self.cp.float32).astype(x.dtype)
        return self.cp.cumsum(x, axis=axis, dtype=x.dtype)

    def logsumexp(self, x, axes, keepdims):
        cp = self.cp
        m = cp.amax(x, axis=axes, keepdims=True)
        m = cp.where(cp.isinf(m), 0, m)
        out = cp.log(cp.sum(self._sub_exp(x, m), axis=axes, keepdims=True)) + m
        if keepdims:
            return out
        drop = tuple(range(x.ndim)) if axes is None else tuple(axes)
        return out.reshape(tuple(n for d, n in enumerate(x.shape) if d not in drop))

    def softmax(self, x, axis):
        cp = self.cp
        m = cp.amax(x, axis=axis, keepdims=True)
        m = cp.where(cp.isinf(m), 0, m)  # an all -inf row gives NaN, as on the CPU
        e = self._sub_exp(x, m)
        e /= cp.sum(e, axis=axis, keepdims=True)
        return e

    def log_softmax(self, x, axis):
        return x - self.logsumexp(x, (axis,), True)

    def _sub_exp(self, x, m):
        if x.dtype.name in FUSED_DTYPES:
            return self.k.sub_exp(x, m)
        return self.cp.exp(x - m)

    # ------------------------------------------------------------------ movement
    def reshape(self, x, shape): return x.reshape(shape)
    def permute(self, x, axes): return self.cp.transpose(x, axes)
    def broadcast_to(self, x, shape): return self.cp.broadcast_to(x, shape)
    def slice(self, x, key): return x[key]
    def concat(self, arrays, axis): return self.cp.concatenate(arrays, axis=axis)
    def flip(self, x, axes): return self.cp.flip(x, axis=axes)
    def matmul(self, a, b): return self.cp.matmul(a, b)

    def pad(self, x, widths, value):
        return self.cp.pad(x, widths, mode="constant", constant_values=value)

    def gather(self, x, axis, index):
        return self.cp.take_along_axis(x, index, axis=axis)

    def take(self, x, axis, index):
        return self.cp.take(x, index, axis=axis)

    def _key(self, index, axis):
        """The fancy-index key along ``axis``, built on the device (no host round trip)."""
        return _along_axis_key(index, axis, self.cp)

    def scatter_add(self, x, axis, index, src):
        cp = self.cp
        dtype = x.dtype.name
        key = self._key(index, axis)
        if dtype in ("float16", "float32", "float64", "int32", "uint32", "uint64"):
            out = x.copy()
            _add_at(cp, out, key, src)
            return out
        if dtype == "int64":  # no signed 64-bit atomics: two's complement adds alike unsigned
            out = x.copy()
            _add_at(cp, out.view(cp.uint64), key, src.view(cp.uint64))
            return out
        # bool, int8/16, uint8: accumulate in int32 (wraps alike modulo 2**bits), cast back
        wide = x.astype(cp.int32)
        _add_at(cp, wide, key, src.astype(cp.int32))
        if dtype == "bool":
            return wide != 0
        return wide.astype(x.dtype)

    def scatter(self, x, axis, index, src):
        out = x.copy()
        out[self._key(index, axis)] = src  # the core guarantees unique targets
        return out

    def nonzero(self, x):
        if x.ndim == 0:
            return self.cp.zeros((1 if bool(x) else 0, 0), dtype=self.cp.int64)
        return self.cp.argwhere(x).astype(self.cp.int64, copy=False)

    def argsort(self, x, axis, descending):
        cp = self.cp
        if descending:  # stable descending: stable ascending of the reversed array, reversed
            order = cp.flip(cp.argsort(cp.flip(x, axis), axis=axis), axis)
            return (x.shape[axis] - 1 - order).astype(cp.int64, copy=False)
        return cp.argsort(x, axis=axis).astype(cp.int64, copy=False)

    # ------------------------------------------------------------------ random
    def seed(self, seed):
        """Reset the generator of every device (CuPy keeps one per device; each is seeded
        on first use after this, so seeding never imports CuPy or touches a GPU)."""
        self._seed = int(seed)
        self._seeded = set()

    def seed_device(self, seed, device=None) -> None:
        """Seed only ``device``'s generator (``torch.cuda.manual_seed``)."""
        idx = self.current_device() if device is None else device
        with self._on(idx):
            self.cp.random.seed(int(seed))
        self._seeded.add(idx)

    def _rng_ready(self):
        idx = self.current_device()
        if idx not in self._seeded:
            self.cp.random.seed(self._seed)
            self._seeded.add(idx)

    def _sample(self, fn, shape, dtype, device):
        with self._on(device):
            self._rng_ready()
            out = fn(shape, dtype=np.float64 if dtype == "float64" else np.float32)
            return out if out.dtype.name == dtype else out.astype(dtype)

    def uniform(self, shape, dtype, device):
        out = self._sample(self.cp.random.random, shape, dtype, device)
        if dtype == "float16":  # rounding up to 1.0 would leave [0, 1)
            out = self.cp.minimum(out, np.float16(1.0 - 2.0 ** -11))
        return out

    def normal(self, shape, dtype, device):
        return self._sample(self.cp.random.standard_normal, shape, dtype, device)

    # ------------------------------------------------------------------ nn kernels
    def _taps(self, x, kernel, stride, padding, dilation, value=0):
        """Contiguous im2col: the NumPy backend's code, on CuPy."""
        return _numpy_taps(x, kernel, stride, padding, dilation, value, xp=self.cp)

    def unfold2d(self, x, kernel, stride, padding, dilation, value=0):
        cols = self._taps(x, kernel, stride, padding, dilation, value)
        return cols.reshape(cols.shape[:2] + tuple(kernel) + cols.shape[3:])

    def fold2d(self, cols, input_hw, kernel, stride, padding, dilation):
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        (pt, pb), (pl, pr) = padding
        n, c, _, _, oh, ow = cols.shape
        out = self.cp.zeros((n, c, input_hw[0] + pt + pb, input_hw[1] + pl + pr),
                            dtype=cols.dtype)
        for i in range(kh):
            for j in range(kw):
                out[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                    j * dw:j * dw + sw * (ow - 1) + 1:sw] += cols[:, :, i, j]
        return out[:, :, pt:pt + input_hw[0], pl:pl + input_hw[1]]

    def _grouped_cols(self, x, weight_shape, stride, padding, dilation, groups):
        o, cg, kh, kw = weight_shape
        cols = self._taps(x, (kh, kw), stride, padding, dilation)
        n, _, _, oh, ow = cols.shape
        return cols.reshape(n, groups, cg * kh * kw, oh * ow), oh, ow

    def conv2d(self, x, w, stride, padding, dilation, groups):
        o = w.shape[0]
        cols, oh, ow = self._grouped_cols(x, w.shape, stride, padding, dilation, groups)
        out = self.cp.matmul(w.reshape(groups, o // groups, -1), cols)  # N, G, O/G, L
        return out.reshape(x.shape[0], o, oh, ow)

    def conv2d_grad_input(self, g, w, input_hw, stride, padding, dilation, groups):
        o, cg, kh, kw = w.shape
        n, _, oh, ow = g.shape
        wt = w.reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
        cols = self.cp.matmul(wt, g.reshape(n, groups, o // groups, oh * ow))
        return self.fold2d(cols.reshape(n, groups * cg, kh, kw, oh, ow), input_hw, (kh, kw),
                           stride, padding, dilation)

    def conv2d_grad_weight(self, g, x, weight_shape, stride, padding, dilation, groups):
        o = weight_shape[0]
        cols, oh, ow = self._grouped_cols(x, weight_shape, stride, padding, dilation, groups)
        gm = g.reshape(g.shape[0], groups, o // groups, oh * ow)
        out = self.cp.matmul(gm, cols.transpose(0, 1, 3, 2)).sum(axis=0)
        return out.reshape(weight_shape)

    def max_pool2d(self, x, kernel, stride, padding, dilation):
        cp = self.cp
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        (pt, _), (pl, _) = padding
        cols = self._taps(x, kernel, stride, padding, dilation, -math.inf)
        _, _, _, oh, ow = cols.shape
        tap = cp.argmax(cols, axis=2)
        out = cp.take_along_axis(cols, tap[:, :, None], axis=2)[:, :, 0]
        ki, kj = tap // kw, tap % kw
        rows = (cp.arange(oh, dtype=cp.int64) * sh - pt)[:, None] + ki * dh
        cols_ = (cp.arange(ow, dtype=cp.int64) * sw - pl)[None, :] + kj * dw
        return out, (rows * x.shape[3] + cols_).astype(cp.int64, copy=False)

    def layer_norm(self, x, weight, bias, n_axes, eps):
        cp = self.cp
        axes = tuple(range(x.ndim - n_axes, x.ndim))
        mean = cp.mean(x, axis=axes, keepdims=True)
        var = cp.var(x, axis=axes, keepdims=True)
        rstd = (1.0 / cp.sqrt(var + eps)).astype(x.dtype, copy=False)
        mean = mean.astype(x.dtype, copy=False)
        if x.dtype.name in FUSED_DTYPES:
            if weight is not None and bias is not None:
                y = self.k.normalize_affine(x, mean, rstd, weight, bias)
            elif weight is not None:
                y = self.k.normalize_scale(x, mean, rstd, weight)
            else:
                y = self.k.normalize(x, mean, rstd)
                if bias is not None:
                    y += bias
            return y, mean, rstd
        y = (x - mean) * rstd
        if weight is not None:
            y *= weight
        if bias is not None:
            y += bias
        return y, mean, rstd

    def gelu(self, x, approximate):
        if x.dtype.name in FUSED_DTYPES:
            return self.k.gelu_tanh(x) if approximate == "tanh" else self.k.gelu_erf(x)
        if approximate == "tanh":
            cp = self.cp
            return 0.5 * x * (1.0 + cp.tanh(math.sqrt(2.0 / math.pi)
                                            * (x + 0.044715 * x * x * x)))
        return 0.5 * x * (1.0 + self.erf(x * math.sqrt(0.5)))

    # ------------------------------------------------------------------ memory
    def memory_stats(self, device=None) -> dict:
        """Bytes in use and held by CuPy's default pool on ``device`` (None: current)."""
        pool = self.cp.get_default_memory_pool()
        with self._on(device):
            return {"allocated": int(pool.used_bytes()), "reserved": int(pool.total_bytes())}

    def empty_cache(self) -> None:
        self.cp.get_default_memory_pool().free_all_blocks()
        self.cp.get_default_pinned_memory_pool().free_all_blocks()


def _self_overlapping(x) -> bool:
    """Whether two elements of ``x`` share memory (a zero stride on an axis longer than 1)."""
    return any(s == 0 and n > 1 for s, n in zip(x.strides, x.shape))


def _add_at(cp, out, key, src):
    """``out[key] += src`` with repeated indices accumulating (atomics)."""
    at = getattr(getattr(cp, "add", None), "at", None)
    if at is not None:
        at(out, key, src)
    else:  # CuPy < 13
        import cupyx  # noqa: PLC0415
        cupyx.scatter_add(out, key, src)


@hookimpl
def plugrad_backends():
    return [CuPyBackend()]
