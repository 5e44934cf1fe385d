"""A NumPy-backed stand-in for the subset of CuPy that plugrad's ``cuda`` backend uses.

It checks *plugrad's* code paths (device plumbing, which CuPy names are called, that no
primitive leaks a device array into NumPy), not CuPy and not a GPU. It is deliberately strict
where real CuPy is strict:

* ``ndarray`` is a wrapper, not a NumPy array: ``np.asarray(x)`` raises ``TypeError`` as CuPy
  does ("Implicit conversion to a NumPy array is not allowed"), mixing a NumPy array into an
  operation raises, and every function returns wrapped arrays (never NumPy scalars).
* Only names that exist in CuPy 13 are provided (no ``cupy.pow``, ``cupy.concat``,
  ``cupy.permute_dims``, ``cupy.astype``...).
* Each array lives on a fake device; a kernel (any op but views and ``asnumpy``) raises
  ``ValueError`` when an input is not on the current device, as CuPy does without peer access.
* ``ElementwiseKernel`` compiles the kernel's C++ body with the host ``g++`` and runs it per
  element (so the text that NVCC will compile is executed, not a copy of its maths).

Use :func:`install` to put it in ``sys.modules`` as ``cupy``/``cupyx`` before the backend
imports CuPy.
"""
from __future__ import annotations

import builtins
import ctypes
import hashlib
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import types
import weakref

import numpy as np

_MODULE = sys.modules[__name__]
N_DEVICES = 1
_state = threading.local()


def _quiet():
    """CUDA never warns about floating-point edge cases: neither does the fake."""
    return np.errstate(all="ignore")


def _current() -> int:
    return getattr(_state, "dev", 0)


# ====================================================================== devices
class CUDARuntimeError(RuntimeError):
    pass


class Device:
    """``cupy.cuda.Device``: a context manager making the device current."""

    def __init__(self, device=None):
        if device is None:
            device = _current()
        device = int(device)
        if not 0 <= device < N_DEVICES:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        self.id = device
        self._prev: list = []

    def __enter__(self):
        self._prev.append(_current())
        _state.dev = self.id
        return self

    def __exit__(self, *exc):
        _state.dev = self._prev.pop()
        return False

    def use(self):
        _state.dev = self.id

    def synchronize(self):
        _STATS["synchronize"] += 1

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return self.id

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


class _Runtime:
    CUDARuntimeError = CUDARuntimeError

    @staticmethod
    def getDeviceCount():
        return N_DEVICES

    @staticmethod
    def getDevice():
        return _current()

    @staticmethod
    def getDeviceProperties(i):
        if not 0 <= i < N_DEVICES:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        return {"name": f"Fake CUDA device {i} (NumPy)".encode(), "totalGlobalMem": 1 << 34}


class _Stream:
    def synchronize(self):
        _STATS["synchronize"] += 1


cuda = types.ModuleType("cupy.cuda")
cuda.__path__ = []  # a package, as in CuPy (array-api-compat imports cupy.cuda.device)
cuda.Device = Device
cuda.device = types.ModuleType("cupy.cuda.device")
cuda.device.Device = Device
cuda.runtime = _Runtime()
cuda.get_current_stream = lambda: _Stream()

#: Counters the tests read: host transfers, kernel launches by name, syncs.
_STATS = {"to_host": 0, "to_device": 0, "synchronize": 0, "elementwise": {}}


def stats() -> dict:
    return _STATS


# ====================================================================== memory pool
class MemoryPool:
    def __init__(self):
        self._used = {}   # device -> bytes in live arrays
        self._total = {}  # device -> bytes reserved (used + cached)

    def _alloc(self, dev, nbytes):
        self._used[dev] = self._used.get(dev, 0) + nbytes
        self._total[dev] = builtins.max(self._total.get(dev, 0), self._used[dev])

    def _free(self, dev, nbytes):
        self._used[dev] -= nbytes

    def used_bytes(self):
        return self._used.get(_current(), 0)

    def total_bytes(self):
        return self._total.get(_current(), 0)

    def free_bytes(self):
        return self.total_bytes() - self.used_bytes()

    def free_all_blocks(self):
        for dev in self._total:
            self._total[dev] = self._used.get(dev, 0)


_POOL = MemoryPool()
_PINNED = MemoryPool()


def get_default_memory_pool():
    return _POOL


def get_default_pinned_memory_pool():
    return _PINNED


# ====================================================================== ndarray
_NOT_ALLOWED = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` "
                "to construct a NumPy array explicitly.")


class ndarray:  # noqa: N801 - CuPy's name
    """A device array: a NumPy array plus the fake device it lives on."""

    __slots__ = ("_a", "_dev", "__weakref__")
    __array_priority__ = 100

    def __init__(self, a: np.ndarray, dev: int):
        self._a = a
        self._dev = dev
        if a.flags.owndata and a.nbytes:
            _POOL._alloc(dev, a.nbytes)
            weakref.finalize(self, _POOL._free, dev, a.nbytes)

    # NumPy must not see through it (CuPy refuses implicit conversion).
    def __array__(self, *args, **kwargs):
        raise TypeError(_NOT_ALLOWED)

    __array_ufunc__ = None

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(f"{func.__name__}: {_NOT_ALLOWED}")

    # ---- attributes
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    device = property(lambda self: Device(self._dev))
    T = property(lambda self: _wrap_view(self._a.T, self._dev))

    def get(self, stream=None, order="C", out=None):
        _STATS["to_host"] += 1
        return np.array(self._a, copy=True, order=order)  # CuPy: C order unless asked

    def set(self, arr):
        self._a[...] = arr

    def item(self):
        _STATS["to_host"] += 1
        return self._a.item()

    def tolist(self):
        _STATS["to_host"] += 1
        return self._a.tolist()

    def __float__(self): return float(self.item())
    def __int__(self): return int(self.item())
    def __bool__(self): return bool(self.item())
    def __complex__(self): return complex(self.item())

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        return f"array({self._a!r}, device={self._dev})"

    __str__ = lambda self: str(self._a)  # noqa: E731

    def __dlpack_device__(self):
        return (2, self._dev)  # kDLCUDA

    def __dlpack__(self, stream=None, **kwargs):
        # A real CuPy capsule points at device memory; the fake's at host memory.
        return self._a.__dlpack__()

    # ---- views (no kernel: no device check)
    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        out = self._a.reshape(shape)
        if not np.shares_memory(out, self._a):  # a copy is a kernel
            _check_devices([self])
        return _wrap_view(out, self._dev)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _wrap_view(self._a.transpose(*axes), self._dev)

    def view(self, dtype=None):
        return _wrap_view(self._a.view(dtype), self._dev)

    def __getitem__(self, key):
        key = _unwrap_key(key)
        out = self._a[key]
        if isinstance(out, np.ndarray) and np.shares_memory(out, self._a):
            return _wrap_view(out, self._dev)
        _check_devices([self])
        return _wrap(out)

    def __setitem__(self, key, value):
        _check_devices([self, value])
        self._a[_unwrap_key(key)] = _unwrap(value)

    def __getattr__(self, name):
        # Kernels: astype, copy, sum, max, argmax, ... (methods CuPy's ndarray has).
        if name not in _NDARRAY_METHODS:
            raise AttributeError(f"fake cupy.ndarray has no attribute {name!r}")
        method = getattr(self._a, name)

        def call(*args, **kwargs):
            _check_devices([self, *args, *kwargs.values()])
            with _quiet():
                return _wrap(method(*_unwrap(args), **_unwrap(kwargs)))
        return call


_NDARRAY_METHODS = frozenset({
    "astype", "copy", "sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin",
    "cumsum", "ravel", "flatten", "squeeze", "swapaxes", "fill", "any", "all", "clip", "dot",
    "round", "nonzero", "take", "repeat", "sort", "argsort", "conj", "diagonal", "trace"})


def _wrap_view(a, dev):
    return ndarray(a, dev)


def _wrap(out):
    """NumPy results of a kernel become arrays on the current device (never NumPy scalars)."""
    if isinstance(out, np.ndarray):
        return ndarray(out, _current())
    if isinstance(out, np.generic):
        return ndarray(np.asarray(out), _current())
    if isinstance(out, tuple):
        return tuple(_wrap(o) for o in out)
    if isinstance(out, list):
        return [_wrap(o) for o in out]
    return out


def _unwrap(v):
    if isinstance(v, ndarray):
        return v._a
    if isinstance(v, np.ndarray):
        raise TypeError(f"Unsupported type {type(v)} (a NumPy array passed to a CuPy "
                        f"function: copy it with cupy.asarray first)")
    if isinstance(v, (list, tuple)):
        return type(v)(_unwrap(x) for x in v)
    if isinstance(v, dict):
        return {k: _unwrap(x) for k, x in v.items()}
    return v


def _unwrap_key(key):
    """Indices may be CuPy arrays, ints, slices, lists (NumPy arrays are refused)."""
    if isinstance(key, tuple):
        return tuple(_unwrap_key(k) for k in key)
    if isinstance(key, np.ndarray):
        raise TypeError("fake cupy: index with a NumPy array (CuPy would copy it to the "
                        "device on every call; build the index on the device)")
    return _unwrap(key)


def _check_devices(args):
    cur = _current()
    for a in args:
        if isinstance(a, (list, tuple)):
            _check_devices(a)
        elif isinstance(a, ndarray) and a._dev != cur:
            raise ValueError(f"The device where the array resides ({a._dev}) is different "
                             f"from the current device ({cur}). Peer access is unavailable "
                             f"between these devices.")


# ---- operators: kernels on the current device
def _binop(name):
    def op(self, other):
        _check_devices([self, other])
        with _quiet():
            return _wrap(getattr(self._a, name)(_unwrap(other)))
    op.__name__ = name
    return op


for _name in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv",
              "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul", "rmatmul", "and", "rand",
              "or", "ror", "xor", "rxor", "lt", "le", "gt", "ge", "eq", "ne", "lshift",
              "rshift", "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow",
              "iand", "ior", "ixor"):
    _dunder = f"__{_name}__"
    if _name.startswith("i") and _name not in ("iadd",) and not hasattr(np.ndarray, _dunder):
        continue
    _op = _binop(_dunder)
    if _name.startswith("i"):
        def _inplace(self, other, _d=_dunder):
            _check_devices([self, other])
            with _quiet():
                getattr(self._a, _d)(_unwrap(other))
            return self
        _op = _inplace
    setattr(ndarray, _dunder, _op)


def _unop(name):
    def op(self):
        _check_devices([self])
        with _quiet():
            return _wrap(getattr(self._a, name)())
    return op


for _name in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(ndarray, _name, _unop(_name))


# ====================================================================== functions
def _kernel(fn, name):
    def call(*args, **kwargs):
        _check_devices([*args, *kwargs.values()])
        with _quiet():
            return _wrap(fn(*_unwrap(args), **_unwrap(kwargs)))
    call.__name__ = name
    return call


class _UFunc:
    """A CuPy ufunc: call it, or ``.at`` (CuPy 13) for unbuffered in-place accumulation."""

    def __init__(self, uf):
        self._uf = uf
        self.__name__ = uf.__name__

    def __call__(self, *args, **kwargs):
        _check_devices([*args, *kwargs.values()])
        with _quiet():
            return _wrap(self._uf(*_unwrap(args), **_unwrap(kwargs)))

    def at(self, a, indices, b=None):
        _check_devices([a, indices, b])
        self._uf.at(a._a, _unwrap_key(indices), _unwrap(b))

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False):
        _check_devices([a])
        return _wrap(self._uf.reduce(a._a, axis=axis, dtype=dtype, keepdims=keepdims))


# Names CuPy 13 has with NumPy's meaning (checked against CuPy's reference docs).
_UFUNCS = ("add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
           "power", "negative", "absolute", "exp", "log", "sqrt", "sin", "cos", "tanh",
           "floor", "ceil", "rint", "sign", "isnan", "isinf", "isfinite", "log1p", "expm1",
           "logical_not", "logical_and", "logical_or", "logical_xor", "equal", "not_equal",
           "less", "less_equal", "greater", "greater_equal", "maximum", "minimum", "fmax",
           "fmin", "fmod", "square", "reciprocal", "exp2", "log2", "log10", "arctan2", "tan",
           "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh",
           "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift",
           "trunc", "copysign", "signbit", "hypot", "abs", "divmod")
_FUNCS = ("where", "sum", "prod", "amax", "amin", "max", "min", "mean", "var", "std", "argmax",
          "argmin", "cumsum", "cumprod", "reshape", "transpose", "broadcast_to", "concatenate",
          "stack", "flip", "matmul", "dot", "einsum", "pad", "take", "take_along_axis",
          "put_along_axis", "argwhere", "nonzero", "argsort", "sort", "clip", "round",
          "around", "squeeze", "expand_dims", "tril", "triu", "ravel", "zeros_like",
          "ones_like", "empty_like", "full_like", "may_share_memory", "shares_memory",
          "isclose", "allclose", "array_equal", "any", "all", "count_nonzero", "diff",
          "searchsorted", "unique", "moveaxis", "swapaxes", "split", "tile", "repeat",
          "outer", "tensordot", "atleast_1d", "result_type", "ascontiguousarray")
for _name in _UFUNCS:
    setattr(_MODULE, _name, _UFunc(getattr(np, _name)))
for _name in _FUNCS:
    setattr(_MODULE, _name, _kernel(getattr(np, _name), _name))
may_share_memory = lambda a, b: np.may_share_memory(_unwrap(a), _unwrap(b))  # noqa: E731
shares_memory = lambda a, b: np.shares_memory(_unwrap(a), _unwrap(b))  # noqa: E731
result_type = lambda *a: np.result_type(*_unwrap(a))  # noqa: E731

for _name in ("bool_", "intp", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32",
              "uint64", "float16", "float32", "float64", "complex64", "complex128", "dtype",
              "inf", "nan", "pi", "e", "newaxis", "iinfo", "finfo", "generic", "issubdtype",
              "integer", "signedinteger", "unsignedinteger", "floating", "complexfloating",
              "number"):
    setattr(_MODULE, _name, getattr(np, _name))


def _creation(fn):
    def call(*args, **kwargs):
        return ndarray(fn(*args, **kwargs), _current())
    return call


zeros = _creation(np.zeros)
ones = _creation(np.ones)
empty = _creation(np.empty)
full = _creation(np.full)
arange = _creation(np.arange)
linspace = _creation(np.linspace)
eye = _creation(np.eye)


def asarray(a, dtype=None, order=None):
    if isinstance(a, ndarray):
        if a._dev != _current():
            _STATS["to_device"] += 1
            return ndarray(np.array(a._a, dtype=dtype, copy=True), _current())
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
    _STATS["to_device"] += 1
    return ndarray(np.array(a, dtype=dtype, copy=True), _current())


def array(a, dtype=None, copy=True, order="K", ndmin=0):
    if isinstance(a, ndarray):
        _STATS["to_device"] += a._dev != _current()
        return ndarray(np.array(a._a, dtype=dtype, copy=True, ndmin=ndmin), _current())
    _STATS["to_device"] += 1
    return ndarray(np.array(a, dtype=dtype, copy=True, ndmin=ndmin), _current())


def asnumpy(a, stream=None, order="C", out=None):
    if isinstance(a, ndarray):
        return a.get()
    return np.asarray(a)


def from_dlpack(obj):
    if isinstance(obj, ndarray):
        return obj
    dev = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (1, 0)
    if dev[0] != 2:
        raise BufferError("fake cupy.from_dlpack: the producer is not on a CUDA device")
    return ndarray(np.from_dlpack(obj), dev[1])


def get_array_module(*args):
    return _MODULE if builtins.any(isinstance(a, ndarray) for a in args) else np


# ---- submodules array-api-compat re-exports (their contents are not used by plugrad)
linalg = types.ModuleType("cupy.linalg")
linalg.lstsq = lambda *a, **k: (_ for _ in ()).throw(NotImplementedError("fake cupy.linalg"))
fft = types.ModuleType("cupy.fft")

# ---- stride tricks
lib = types.ModuleType("cupy.lib")
lib.stride_tricks = types.ModuleType("cupy.lib.stride_tricks")
lib.stride_tricks.as_strided = lambda x, shape=None, strides=None: _wrap_view(
    np.lib.stride_tricks.as_strided(x._a, shape, strides), x._dev)


# ====================================================================== random
class _Random(types.ModuleType):
    """``cupy.random``: one generator per device, as in CuPy."""

    def __init__(self):
        super().__init__("cupy.random")
        self._gens: dict = {}

    def _gen(self):
        dev = _current()
        if dev not in self._gens:
            self._gens[dev] = np.random.default_rng(1234 + dev)
        return self._gens[dev]

    def seed(self, seed=None):
        self._gens[_current()] = np.random.default_rng(seed)

    def random(self, size=None, dtype=float):
        return ndarray(np.asarray(self._gen().random(size, dtype=np.dtype(dtype).type)),
                       _current())

    def standard_normal(self, size=None, dtype=float):
        return ndarray(np.asarray(self._gen().standard_normal(size, dtype=np.dtype(dtype).type)),
                       _current())


random = _Random()


# ====================================================================== ElementwiseKernel
_CXX_LOCK = threading.Lock()
_CXX_CACHE: dict = {}
_CXX_DIR = tempfile.mkdtemp(prefix="fake_cupy_kernels_")
_CTYPE = {"float32": "float", "float64": "double", "int32": "int", "int64": "long long",
          "bool": "bool", "float16": None}


def _parse_params(spec: str):
    out = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        words = part.split()
        if words[0] == "raw":
            raise NotImplementedError("fake ElementwiseKernel: raw parameters")
        out.append((words[0], words[1]))
    return out


def _compile(source: str):
    key = hashlib.sha1(source.encode()).hexdigest()
    with _CXX_LOCK:
        lib_ = _CXX_CACHE.get(key)
        if lib_ is None:
            src = os.path.join(_CXX_DIR, f"k{key}.cpp")
            so = os.path.join(_CXX_DIR, f"k{key}.so")
            with open(src, "w") as f:
                f.write(source)
            r = subprocess.run(["g++", "-O1", "-shared", "-fPIC", "-std=c++14", "-Wall",
                                "-Werror=return-type", "-o", so, src],
                               capture_output=True, text=True)
            if r.returncode:
                raise RuntimeError(f"fake ElementwiseKernel: the kernel does not compile:\n"
                                   f"{r.stderr}\n--- source ---\n{source}")
            lib_ = ctypes.CDLL(so)
            _CXX_CACHE[key] = lib_
        return lib_


class ElementwiseKernel:
    """Compiles ``operation`` as C++ with g++ and runs it once per (broadcast) element."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True,
                 preamble="", no_return=False, return_tuple=False, **kwargs):
        self.in_params = _parse_params(in_params)
        self.out_params = _parse_params(out_params)
        self.operation = operation
        self.name = name
        self.preamble = preamble
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"kernel name {name!r} is not an identifier")

    def __call__(self, *args, size=None, stream=None):
        if len(args) != len(self.in_params):
            raise TypeError(f"{self.name}: wrong number of arguments "
                            f"({len(args)} given, {len(self.in_params)} expected)")
        _check_devices(args)
        _STATS["elementwise"][self.name] = _STATS["elementwise"].get(self.name, 0) + 1
        types_: dict = {}
        for (t, _), a in zip(self.in_params, args):
            if isinstance(a, ndarray) and len(t) == 1 and t.isupper():
                types_.setdefault(t, a.dtype)
        for (t, _), a in zip(self.in_params, args):
            if len(t) == 1 and t.isupper() and t not in types_:
                types_[t] = np.result_type(a)

        def np_type(t):
            return types_[t] if t in types_ else np.dtype(t)

        ins = [np.asarray(_unwrap(a), dtype=np_type(t)) for (t, _), a in zip(self.in_params, args)]
        ins = [a.copy(order="C") for a in np.broadcast_arrays(*ins)]  # (ascontiguousarray: 0-d -> 1-d)
        shape = ins[0].shape if ins else ()
        outs = [np.empty(shape, dtype=np_type(t)) for t, _ in self.out_params]
        ctypes_ = {t: _CTYPE[np_type(t).name] for t, _ in self.in_params + self.out_params}
        if None in ctypes_.values():
            raise TypeError(f"{self.name}: the fake compiles kernels for float32/float64/int only")
        typedefs = "".join(f"typedef {c} {t};\n" for t, c in ctypes_.items()
                           if len(t) == 1 and t.isupper())
        sig = ", ".join([f"const {ctypes_[t]}* {n}__p" for t, n in self.in_params]
                        + [f"{ctypes_[t]}* {n}__p" for t, n in self.out_params])
        loads = "".join(f"const {ctypes_[t]} {n} = {n}__p[i]; " for t, n in self.in_params)
        decls = "".join(f"{ctypes_[t]} {n}; " for t, n in self.out_params)
        stores = "".join(f"{n}__p[i] = {n}; " for _, n in self.out_params)
        source = ("#include <cmath>\n#include <cstddef>\nusing namespace std;\n"
                  f"{typedefs}{self.preamble}\n"
                  f'extern "C" void {self.name}(long long n{", " if sig else ""}{sig}) {{\n'
                  f"  for (long long i = 0; i < n; ++i) {{ {loads}{decls}\n"
                  f"    {{ {self.operation}; }}\n    {stores}}}\n}}\n")
        fn = getattr(_compile(source), self.name)
        fn.restype = None
        fn(ctypes.c_longlong(int(np.prod(shape, dtype=np.int64))),
           *[a.ctypes.data_as(ctypes.c_void_p) for a in ins + outs])
        res = [ndarray(o, _current()) for o in outs]
        return res[0] if len(res) == 1 else tuple(res)


class ReductionKernel:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("fake cupy: ReductionKernel is not provided "
                                  "(the backend does not use it)")


def fuse(*args, **kwargs):
    raise NotImplementedError("fake cupy: fuse is not provided (the backend does not use it)")


# ====================================================================== cupyx
def _erf(x):
    _check_devices([x])
    a = x._a
    dt = a.dtype if a.dtype in (np.float32, np.float64) else np.float64
    out = np.vectorize(math.erf, otypes=[np.float64])(a).astype(dt) if a.size else a.astype(dt)
    return ndarray(np.asarray(out), _current())


def _scatter_add(a, slices, value):
    _check_devices([a, slices, value])
    np.add.at(a._a, _unwrap_key(slices), _unwrap(value))


cupyx = types.ModuleType("cupyx")
cupyx.scatter_add = _scatter_add
cupyx.scipy = types.ModuleType("cupyx.scipy")
cupyx.scipy.special = types.ModuleType("cupyx.scipy.special")
cupyx.scipy.special.erf = _erf
cupyx.scipy.special.erfc = lambda x: 1.0 - _erf(x)
cupyx.__fake__ = True

__version__ = "13.99.0+fake"
__fake__ = True


def reset(n_devices: int = 1) -> None:
    """Forget devices, generators and counters (each test starts clean)."""
    global N_DEVICES
    N_DEVICES = n_devices
    _state.dev = 0
    random._gens.clear()
    _STATS.update({"to_host": 0, "to_device": 0, "synchronize": 0, "elementwise": {}})


_MODULES = {"cupy": _MODULE, "cupy.cuda": cuda, "cupy.cuda.device": cuda.device,
            "cupy.linalg": linalg, "cupy.fft": fft, "cupy.random": random, "cupy.lib": lib,
            "cupy.lib.stride_tricks": lib.stride_tricks, "cupyx": cupyx,
            "cupyx.scipy": cupyx.scipy, "cupyx.scipy.special": cupyx.scipy.special}


def install(monkeypatch=None, n_devices: int = 1):
    """Make ``import cupy`` / ``import cupyx.scipy.special`` give this fake."""
    reset(n_devices)
    for name, mod in _MODULES.items():
        if monkeypatch is not None:
            monkeypatch.setitem(sys.modules, name, mod)
        else:
            sys.modules[name] = mod
    return _MODULE
