"""The ``cuda`` backend: the shared Array API implementation on CuPy, plus what is CuPy's own.

Everything not defined here is :class:`~plugrad.backends.array_api.ArrayAPIBackend` on
``xp = array_api_compat.cupy`` (the standard's names on CuPy 13) and the shared nn kernels of
:class:`~plugrad.backends.xp_kernels.XpKernels`. What is here: device selection and guards,
host transfer, overlap-safe assignment, ``rint``, ``scatter_add`` with atomics, CuPy's
per-device generators, ``erf`` from ``cupyx``, the memory pool, and the fused elementwise
kernels of :mod:`plugrad.backends.cupy.kernels` (through the ``_fused`` hook).

Registering it imports nothing: CuPy is imported the first time a ``cuda`` tensor is made (or
``plugrad.cuda.is_available()`` is asked), so ``import plugrad`` works without CuPy or a GPU.

Devices. A creation primitive's ``device`` index (``cuda:N``) selects ``cupy.cuda.Device(N)``;
``None`` (plain ``"cuda"``) means CuPy's current device, which ``plugrad.cuda.set_device``
changes. CuPy launches a kernel on the *current* device, so on a machine with several GPUs
every primitive is run with the device of its first array argument made current (on a single
GPU this is skipped: no per-op cost). No primitive copies data to the host except
``to_numpy``.
"""
from __future__ import annotations

import contextlib
import functools

import numpy as np

from plugrad.backends.array_api import ArrayAPIBackend, along_axis_key
from plugrad.backends.contract import optional_kernels, required_primitives
from plugrad.backends.cupy.kernels import FUSED_DTYPES, Kernels
from plugrad.backends.hooks import hookimpl
from plugrad.backends.xp_kernels import XpKernels


def _import_cupy():
    import cupy  # noqa: PLC0415 - imported lazily on purpose
    return cupy


_NULL = contextlib.nullcontext()
# Creation primitives carry their own ``device`` argument; never wrapped per device.
_CREATION = frozenset({"from_numpy", "full", "arange", "uniform", "normal", "seed"})


class CuPyBackend(XpKernels, ArrayAPIBackend):
    """CuPy arrays on NVIDIA (or ROCm) GPUs."""

    dlpack_device_type = 2  # kDLCUDA

    def __init__(self):
        super().__init__("cupy", "cuda", _import_cupy,
                         dtypes={"bool", "uint8", "int8", "int16", "int32", "int64",
                                 "float16", "float32", "float64"})
        self._reason = None
        self._count = 0
        self._seed = 0
        self._seeded: set = set()  # device ids whose generator was seeded with self._seed

    # ------------------------------------------------------------------ CuPy itself
    @functools.cached_property
    def cp(self):
        """CuPy's own namespace, for what the standard lacks (kernels, RNG, devices)."""
        return _import_cupy()

    @functools.cached_property
    def k(self) -> Kernels:
        """The fused elementwise kernels (each compiled on first use)."""
        return Kernels(self.cp)

    @functools.cached_property
    def _special(self):
        import cupyx.scipy.special  # noqa: PLC0415
        return cupyx.scipy.special

    # ------------------------------------------------------------------ environment
    def unavailable_reason(self) -> str:
        if self._reason is None:
            self._reason = self._probe()
        return self._reason

    def _probe(self) -> str:
        try:
            self._count = int(self.cp.cuda.runtime.getDeviceCount())
        except ImportError as exc:
            return (f"CuPy is not installed ({exc}); install plugrad[cuda12] or "
                    f"plugrad[cuda13]")
        except Exception as exc:  # noqa: BLE001 - driver errors mean "no GPU here"
            return f"CUDA is not usable: {type(exc).__name__}: {exc}"
        if not self._count:
            return "CuPy is installed but no CUDA device was found"
        self.xp  # noqa: B018 - loads the namespace and sets array_type
        if self._count > 1:
            self._install_device_guards()
        return ""

    def device_count(self) -> int:
        return self._count if self.is_available() else 0

    def current_device(self) -> int:
        return int(self.cp.cuda.runtime.getDevice())

    def synchronize(self, device=None) -> None:
        self.cp.cuda.Device(device if device is not None else self.current_device()).synchronize()

    def _on(self, device):
        return _NULL if device is None else self.cp.cuda.Device(device)

    def _quiet(self):
        return _NULL  # CUDA never warns about floating-point edge cases

    def _pair(self, a, b):
        return a, b  # CuPy's ufuncs take Python scalars as they are (weak)

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

    # ------------------------------------------------------------------ transfer
    def to_numpy(self, x):
        return self.cp.asnumpy(x)

    def from_dlpack(self, obj, device=None):
        """A CuPy array sharing memory with an object exporting DLPack on this GPU; a host
        object (or one on another GPU) is copied to ``device``."""
        if int(obj.__dlpack_device__()[0]) != self.dlpack_device_type:
            return ArrayAPIBackend.from_dlpack(self, obj, device)  # the composite's host copy
        with self._on(device):
            out = self.cp.from_dlpack(obj)
        if device is None or out.device.id == device:
            return out
        return self.from_numpy(self.to_numpy(out), self.dtype_of(out), device)  # another GPU

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

    # ------------------------------------------------------------------ kernels
    def round(self, x):
        return self.cp.rint(x)  # halves to even

    def erf(self, x):
        if x.dtype.name == "float16":  # cupyx provides erf for float32/float64
            return self._special.erf(x.astype("float32")).astype("float16")
        return self._special.erf(x)

    def _linalg_guard(self):
        """cuSOLVER reports a singular or indefinite matrix only through its ``info``; CuPy
        raises on it (``numpy.linalg.LinAlgError``) only inside this error state."""
        import cupyx
        return cupyx.errstate(linalg="raise")

    def _fused(self, name, *arrays):
        """The :class:`~plugrad.backends.cupy.kernels.KernelSpec` ``plugrad_<name>``: one launch
        and no temporaries (float32/float64; float16 takes the ``xp`` expression)."""
        if arrays[0].dtype.name not in FUSED_DTYPES:
            return None
        return getattr(self.k, name)(*arrays)

    def scatter_add(self, x, axis, index, src):
        cp = self.cp
        dtype = x.dtype.name
        key = along_axis_key(index, axis, cp)  # built on the device: no host round trip
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

    def _sample(self, fn, shape, dtype, device):
        with self._on(device):
            idx = self.current_device()
            if idx not in self._seeded:
                self.cp.random.seed(self._seed)
                self._seeded.add(idx)
            out = fn(shape, dtype=np.float64 if dtype == "float64" else np.float32)
            return out if out.dtype.name == dtype else out.astype(dtype)

    def uniform(self, shape, dtype, device):
        out = self._sample(self.cp.random.random, shape, dtype, device)
        if dtype == "float16":  # rounding up to 1.0 would leave [0, 1)
            out = self.cp.minimum(out, np.float16(1.0 - 2.0 ** -11))
        return out

    def normal(self, shape, dtype, device):
        return self._sample(self.cp.random.standard_normal, shape, dtype, device)

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
