"""The core and the composites keep the contract's promises to backends.

The contract tells a backend what it will receive (the "core guarantees" clauses of
``plugrad/backends/contract.py`` and of ``docs/backends.md``): ``slice``/``assign`` keys of
normalised slices (``0 <= start <= stop <= size``, ``step >= 1``, one per dimension for
``slice``), operands of binary primitives of one dtype and never two Python scalars,
``where`` with at least one array branch, non-negative axes, shapes as tuples of ints,
floating arrays only for the transcendental primitives, no bool array for the arithmetic
primitives, ``sum``, ``prod`` or ``cumsum``, no integer division by zero, no negative
integer exponent, ``gather`` indices in range, ``max`` never over an empty axis,
device indices in ``[0, device_count())`` or None, declared dtypes only. A reference backend
that records every breach runs the public-op and kernel cases of the conformance suite
(forward and gradients); none may occur.
"""
import collections
import contextlib
import traceback

import pytest

from plugrad.backends.hooks import hookimpl
from plugrad.backends.reference import ReferenceBackend
from plugrad.core.registry import get_registry

_SCALARS = (bool, int, float)
_FLOATS = {"float16", "bfloat16", "float32", "float64"}
_INTS = {"uint8", "int8", "int16", "int32", "int64"}
BREACHES = collections.Counter()


def _note(what):
    frames = [f for f in traceback.extract_stack()[:-1]
              if "/plugrad/" in f.filename and "/testing/" not in f.filename]
    where = "; ".join(f"{f.filename.split('plugrad/')[-1]}:{f.lineno}" for f in frames[-2:])
    BREACHES[f"{what} (called from {where})"] += 1


def _normalised(key, shape, one_per_dim):
    if not isinstance(key, tuple) or (one_per_dim and len(key) != len(shape)) \
            or len(key) > len(shape):
        return False
    return all(isinstance(k, slice) and all(type(v) is int for v in (k.start, k.stop, k.step))
               and 0 <= k.start <= k.stop <= n and k.step >= 1 for k, n in zip(key, shape))


def _is_shape(shape):
    return isinstance(shape, tuple) and all(type(n) is int and n >= 0 for n in shape)


def _axes_ok(axes, ndim, allow_none=True):
    if axes is None:
        return allow_none
    return isinstance(axes, tuple) and all(type(a) is int and 0 <= a < max(ndim, 1)
                                           for a in axes)


def _axis_ok(axis, ndim, allow_none=False):
    return (allow_none and axis is None) or (type(axis) is int and 0 <= axis < max(ndim, 1))


def _dtype(x):
    return None if type(x) in _SCALARS else x.dtype


class Checking(ReferenceBackend):
    """The reference backend, noting every input the contract says it never gets."""

    def __init__(self):
        super().__init__()
        self.name, self.device_type = "precondition-check", "prechk"

    def _device(self, name, dtype, device):
        if dtype not in self.dtypes:
            _note(f"{name}: undeclared dtype {dtype!r}")
        if device is not None and not (type(device) is int and 0 <= device < self.device_count()):
            _note(f"{name}: device index {device!r}")

    def from_numpy(self, a, dtype, device):
        self._device("from_numpy", dtype, device)
        return super().from_numpy(a, dtype, device)

    def full(self, shape, value, dtype, device):
        self._device("full", dtype, device)
        if not _is_shape(shape):
            _note(f"full: shape {shape!r}")
        if type(value) not in _SCALARS:
            _note(f"full: value {type(value).__name__}")
        return super().full(shape, value, dtype, device)

    def astype(self, x, dtype):
        if dtype not in self.dtypes:
            _note(f"astype: undeclared dtype {dtype!r}")
        return super().astype(x, dtype)

    def slice(self, x, key):
        if not _normalised(key, x.shape, True):
            _note(f"slice: key {key} for shape {x.shape}")
        return super().slice(x, key)

    def assign(self, dst, key, value):
        if not _normalised(key, dst.shape, False):
            _note(f"assign: key {key} for shape {dst.shape}")
        if type(value) not in _SCALARS and value.dtype != dst.dtype:
            _note(f"assign: value {value.dtype} into {dst.dtype}")
        return super().assign(dst, key, value)

    def where(self, cond, a, b):
        if cond.dtype != "bool":
            _note(f"where: condition of dtype {cond.dtype}")
        if type(a) in _SCALARS and type(b) in _SCALARS:
            _note("where: two Python scalars")
        elif None not in (_dtype(a), _dtype(b)) and a.dtype != b.dtype:
            _note(f"where: branches {a.dtype} and {b.dtype}")
        return super().where(cond, a, b)

    def floordiv(self, a, b):
        if _dtype(a) in _INTS or _dtype(b) in _INTS:
            if (self.to_numpy(b) == 0).any() if type(b) not in _SCALARS else b == 0:
                _note("floordiv: integer division by zero")
        return self._binary("floordiv", a, b)

    def pow(self, a, b):
        if _dtype(a) in _INTS or _dtype(b) in _INTS:
            if (self.to_numpy(b) < 0).any() if type(b) not in _SCALARS else b < 0:
                _note("pow: negative integer exponent")
        return self._binary("pow", a, b)

    def _binary(self, name, a, b):
        if type(a) in _SCALARS and type(b) in _SCALARS:
            _note(f"{name}: two Python scalars")
        elif None not in (_dtype(a), _dtype(b)) and a.dtype != b.dtype:
            _note(f"{name}: dtypes {a.dtype} and {b.dtype}")
        for v in (a, b):  # logical_and takes bool arrays only, eq and lt any, the rest numbers
            dt = _dtype(v)
            if dt is not None and name not in ("eq", "lt") and (dt == "bool") != (
                    name == "logical_and"):
                _note(f"{name}: a {dt} array")
        return getattr(super(), name)(a, b)

    def max(self, x, axes, keepdims):
        self._reduction("max", x, axes, bool_ok=True)
        if any(x.shape[d] == 0 for d in (range(x.ndim) if axes is None else axes)):
            _note(f"max: an empty axis of shape {x.shape}")
        return super().max(x, axes, keepdims)

    def _reduction(self, name, x, axes, bool_ok=False):
        if not _axes_ok(axes, x.ndim):
            _note(f"{name}: axes {axes!r} for {x.ndim}-d")
        if x.dtype == "bool" and not bool_ok:
            _note(f"{name}: a bool array")

    def sum(self, x, axes, keepdims):
        self._reduction("sum", x, axes)
        return super().sum(x, axes, keepdims)

    def prod(self, x, axes, keepdims):
        self._reduction("prod", x, axes)
        return super().prod(x, axes, keepdims)

    def argmax(self, x, axis, keepdims):
        if not _axis_ok(axis, x.ndim, allow_none=True):
            _note(f"argmax: axis {axis!r} for {x.ndim}-d")
        return super().argmax(x, axis, keepdims)

    def cumsum(self, x, axis):
        self._reduction("cumsum", x, (axis,))
        return super().cumsum(x, axis)

    def reshape(self, x, shape):
        if not _is_shape(shape):
            _note(f"reshape: shape {shape!r}")
        return super().reshape(x, shape)

    def broadcast_to(self, x, shape):
        if not _is_shape(shape):
            _note(f"broadcast_to: shape {shape!r}")
        return super().broadcast_to(x, shape)

    def permute(self, x, axes):
        if not (_axes_ok(axes, x.ndim, False) and sorted(axes) == list(range(x.ndim))):
            _note(f"permute: axes {axes!r} for {x.ndim}-d")
        return super().permute(x, axes)

    def concat(self, arrays, axis):
        if len({a.dtype for a in arrays}) > 1 or not _axis_ok(axis, arrays[0].ndim):
            _note(f"concat: dtypes {[a.dtype for a in arrays]}, axis {axis!r}")
        return super().concat(arrays, axis)

    def gather(self, x, axis, index):
        if index.dtype != "int64" or not _axis_ok(axis, x.ndim) or not (
                (self.to_numpy(index) >= 0) & (self.to_numpy(index) < x.shape[axis])).all():
            _note(f"gather: index {index.dtype} out of [0, {x.shape[axis]}) or axis {axis!r}")
        return super().gather(x, axis, index)

    def matmul(self, a, b):
        if a.dtype != b.dtype:
            _note(f"matmul: dtypes {a.dtype} and {b.dtype}")
        return super().matmul(a, b)

    def uniform(self, shape, dtype, device):
        self._random("uniform", shape, dtype, device)
        return super().uniform(shape, dtype, device)

    def normal(self, shape, dtype, device):
        self._random("normal", shape, dtype, device)
        return super().normal(shape, dtype, device)

    def _random(self, name, shape, dtype, device):
        self._device(name, dtype, device)
        if dtype not in _FLOATS or not _is_shape(shape):
            _note(f"{name}: dtype {dtype}, shape {shape!r}")


def _unary(name, floating):
    def method(self, x):
        if (floating and x.dtype not in _FLOATS) or (name == "neg" and x.dtype == "bool"):
            _note(f"{name}: a {x.dtype} array")
        return getattr(super(Checking, self), name)(x)
    return method


for _name in ("exp", "log", "sqrt", "sin", "cos", "tanh", "floor", "round"):
    setattr(Checking, _name, _unary(_name, True))
for _name in ("neg", "abs"):
    setattr(Checking, _name, _unary(_name, False))


def _logical_not(self, x):
    if x.dtype != "bool":
        _note(f"logical_not: a {x.dtype} array")
    return ReferenceBackend.logical_not(self, x)


Checking.logical_not = _logical_not
for _name in ("add", "sub", "mul", "div", "eq", "lt", "logical_and"):
    setattr(Checking, _name, lambda self, a, b, _n=_name: self._binary(_n, a, b))


class _Plugin:
    @hookimpl
    def plugrad_backends(self):
        return [Checking()]


@pytest.fixture
def checking_device(tmp_path, monkeypatch):
    reg = get_registry()
    plugin = _Plugin()
    reg.register_plugin(plugin, name="precondition-check")
    monkeypatch.chdir(tmp_path)
    BREACHES.clear()
    try:
        yield "prechk"
    finally:
        reg.unregister_plugin(plugin)


def test_callers_keep_the_preconditions(checking_device, tmp_path):
    code = pytest.main(["--pyargs", "plugrad.testing.conformance.test_ops",
                        "plugrad.testing.conformance.test_kernels", "--plugrad-backend",
                        checking_device, "-q", "--tb=no", "-p", "no:cacheprovider", "-o",
                        "addopts=", "--rootdir", str(tmp_path),
                        "-k", "test_forward or test_kernel_forward or test_gradcheck "
                              "or test_backward_paths"])
    assert code == pytest.ExitCode.OK
    assert not BREACHES, "callers broke the contract's preconditions:\n" + "\n".join(
        f"{n} x {what}" for what, n in BREACHES.most_common(30))


def test_the_checker_notices_a_breach(checking_device):
    """The checks above can fail: a key past the end, a bool sum, exp of integers, an integer
    division by zero, two scalars are each noted."""
    k = get_registry().table(checking_device)
    x = k.full((3,), 1.0, "float32", None)
    b = k.backend
    b.slice(x, (slice(1, 4, 2),))
    b.sum(k.full((2,), True, "bool", None), None, False)
    b.exp(k.full((2,), 1, "int64", None))
    with contextlib.suppress(ZeroDivisionError):  # the reference raises, after the note
        b.floordiv(k.full((2,), 1, "int64", None), 0)
    with contextlib.suppress(TypeError):
        b.add(1, 2)
    assert len(BREACHES) == 5, BREACHES
