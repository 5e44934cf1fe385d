"""Kernel-level checks: a backend's primitives and optional kernels against the reference.

Each check takes an op-database entry of ``kind="kernel"``, a device type and a dtype name,
calls the kernel of that device's table on every sample, and raises ``AssertionError``
naming the op, the sample, the device and the dtype at the first breach of the contract:

* values, shapes (a tuple of ints, equal to the host values' shape), dtype names and the
  array type equal the reference backend's; special-value samples are compared with the
  reference run in the tested dtype, exactly where IEEE 754 defines one result, signs of
  zeros included;
* no kernel raises or warns on IEEE cases;
* ``to_numpy`` gives a NumPy array of the dtype's NumPy type;
* a float16/bfloat16/float32 result holds values of its dtype (not wider ones);
* a kernel writes none of its inputs, and its result shares no memory with them (movement
  primitives excepted).
"""
from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np

from plugrad.core.registry import get_registry
from plugrad.testing._comparison import assert_close
from plugrad.testing._specials import numpy_dtype, round_to
from plugrad.testing.opdb import DT, Arr, OpInfo

__all__ = ["reference_device", "check_kernel_forward", "check_kernel_inputs_unchanged",
           "no_warnings", "tree_map", "tolerance", "MOVEMENT"]

_NARROW = ("float16", "bfloat16", "float32")
_FLOATS = _NARROW + ("float64",)
#: Kernels that may return a view of an input (the contract's movement primitives, and
#: ``flip``/``to_numpy``/``from_dlpack``, which NumPy serves with views).
MOVEMENT = frozenset({"reshape", "permute", "broadcast_to", "slice", "flip", "to_numpy",
                      "from_dlpack", "assign", "update_"})
#: Kernels whose result IEEE 754 defines exactly (correctly rounded or exact): on special
#: values they must equal the reference bit for bit (NaN payloads aside).
_EXACT = frozenset({"neg", "abs", "floor", "ceil", "round", "sign", "isnan", "add", "sub",
                    "mul", "div", "sqrt", "maximum", "minimum", "eq", "ne", "lt", "le", "gt",
                    "ge", "logical_not", "logical_and", "logical_or", "logical_xor", "where",
                    "max", "min", "argmax", "argmin", "astype", "copy", "from_numpy", "full",
                    "to_numpy", "floordiv"})
#: Kernels where the sign of a zero result is not part of the contract.
_ZERO_SIGN_FREE = frozenset({"maximum", "minimum", "max", "min", "sum", "prod", "cumsum", "sign",
                             "matmul", "logsumexp", "softmax", "log_softmax", "remainder",
                             "pow", "sigmoid"})
_IGNORED_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning,
                     ResourceWarning)


def reference_device(device: str, dtype: str | None = None) -> str | None:
    """Where the reference runs: ``ref`` (pure Python), or ``cpu`` when ``ref`` is tested;
    None when that backend lacks ``dtype`` and the values can only be compared in float64."""
    ref = "cpu" if device == "ref" else "ref"
    if dtype is not None and dtype not in get_registry().table(ref).dtypes:
        return None
    return ref


def tolerance(op: OpInfo, dtype: str) -> tuple[float, float]:
    from plugrad.testing.opdb import TOLERANCES
    tol = op.tol.get(dtype) or TOLERANCES.get(dtype)
    if tol is None and dtype == "bfloat16":
        tol = (4e-2, 4e-2)
    return tol or (0.0, 0.0)


def tree_map(fn, obj):
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(tree_map(fn, v) for v in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(tree_map(fn, v) for v in obj)
    if isinstance(obj, dict):
        return {key: tree_map(fn, v) for key, v in obj.items()}
    return fn(obj)


@contextlib.contextmanager
def no_warnings(where: str):
    """Fail if the block emits a warning that reaches the user, or raises: IEEE cases have
    results, not errors. Filters already in place (a backend's own, which the NumPy backend
    uses to keep NumPy quiet at no cost per call) still apply; every other warning counts."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", append=True)
        for category in _IGNORED_WARNINGS:
            warnings.simplefilter("ignore", category)
        try:
            yield
        except (ArithmeticError, ValueError, RuntimeWarning) as exc:
            raise AssertionError(f"{where}: raised {type(exc).__name__}: {exc} (the contract "
                                 f"wants the IEEE 754 result, without errors)") from exc
    if caught:
        w = caught[0]
        raise AssertionError(f"{where}: emitted {w.category.__name__}: {w.message} (the "
                             f"contract wants IEEE 754 results without warnings)")


def _where(op, sample, device, dtype) -> str:
    return f"{op.name} [{sample.name}] on {device} in {dtype}"


def _exactly(actual, expected, where):
    assert_close(actual, expected, rtol=0.0, atol=0.0, equal_nan=True, msg=where)


def _materialize(obj, k, dtype: str, upcast: bool, emulate: bool = False):
    """Arr descriptions as arrays of kernel table ``k``; DT as the dtype name. ``emulate``:
    for a reference that lacks ``dtype`` (bfloat16), in float64 on inputs and Python float
    scalars already rounded to ``dtype``, so rounding the result once gives ``dtype``'s."""
    def conv(v):
        if v is DT:
            return "float64" if upcast and dtype in _FLOATS else dtype
        if emulate and type(v) is float:
            return float(round_to(np.array(v), dtype))
        if isinstance(v, np.ndarray) and upcast and v.dtype.kind == "f":
            return (round_to(v, dtype) if emulate else v).astype(np.float64)
        if not isinstance(v, Arr):
            return v
        vals = v.values.astype(numpy_dtype(v.dtype))
        if v.dtype == "bfloat16":
            vals = round_to(vals, "bfloat16").astype(np.float32)
        dt = v.dtype
        if upcast and dt in _FLOATS:
            vals, dt = vals.astype(np.float64), "float64"
        if v.layout == "T" and vals.ndim >= 2:
            base = k.from_numpy(np.ascontiguousarray(np.swapaxes(vals, -1, -2)), dt, None)
            axes = tuple(range(vals.ndim - 2)) + (vals.ndim - 1, vals.ndim - 2)
            return k.permute(base, axes)
        if v.layout == "slice" and vals.ndim >= 1:
            wide = k.from_numpy(np.repeat(vals, 2, axis=-1), dt, None)
            key = tuple(slice(0, n, 1) for n in vals.shape[:-1]) + (
                slice(0, 2 * vals.shape[-1], 2),)
            return k.slice(wide, key)
        return k.from_numpy(vals, dt, None)
    return tree_map(conv, obj)


def _is_array(v) -> bool:
    return hasattr(v, "shape") and not isinstance(v, (str, bytes, type))


def _is_backend_array(k, v) -> bool:
    """An array of the backend (not a NumPy array that a non-NumPy backend returned)."""
    return _is_array(v) and not (isinstance(v, np.ndarray)
                                 and k.backend.array_type is not np.ndarray)


class _Out:
    """A kernel's array output on the host: its values and its dtype name."""

    def __init__(self, values: np.ndarray, dtype: str):
        self.values, self.dtype = values, dtype


def _host_tree(k, obj, where: str = ""):
    """Kernel outputs as :class:`_Out`, checking the host-transfer clauses on the way."""
    if isinstance(obj, (tuple, list)):
        return type(obj)(_host_tree(k, v, where) for v in obj)
    if not _is_array(obj):
        return obj
    if isinstance(obj, np.ndarray) and k.backend.array_type is not np.ndarray:
        return _Out(obj, obj.dtype.name)  # e.g. to_numpy's own result
    shape = obj.shape
    assert isinstance(shape, tuple) and all(isinstance(n, int) and not isinstance(n, bool)
                                            for n in shape), \
        f"{where}: the array's shape {shape!r} is not a tuple of ints"
    dtype = k.backend.dtype_of(obj)
    host = k.to_numpy(obj)
    assert isinstance(host, np.ndarray), \
        f"{where}: to_numpy returned a {type(host).__name__}, not a NumPy array"
    if dtype in numpy_names():
        assert host.dtype == numpy_dtype(dtype), \
            f"{where}: to_numpy of a {dtype} array gave NumPy dtype {host.dtype}, expected " \
            f"{numpy_dtype(dtype)}"
    values = np.array(host, copy=True)
    assert tuple(shape) == values.shape, \
        f"{where}: the array's shape attribute {tuple(shape)} disagrees with its values " \
        f"{values.shape}"
    return _Out(values, dtype)


def numpy_names() -> frozenset:
    from plugrad.backends.contract import DTYPE_NAMES
    return frozenset(DTYPE_NAMES)


def _check_rounded(k, out, where):
    """A narrow float result holds values of its dtype: widened to float64 by the backend
    itself, it equals its host values (a backend computing in double without rounding
    shows its unrounded values here)."""
    if isinstance(out, (tuple, list)):
        for o in out:
            _check_rounded(k, o, where)
        return
    if not _is_backend_array(k, out):
        return
    dtype = k.backend.dtype_of(out)
    if dtype not in _NARROW or "float64" not in k.dtypes:
        return
    wide = np.asarray(k.to_numpy(k.astype(out, "float64")))
    own = np.asarray(k.to_numpy(out)).astype(np.float64)
    if dtype == "bfloat16":
        own = round_to(own, "bfloat16")
    _exactly(wide, own, f"{where}: the {dtype} result holds values that are not {dtype} "
                        f"values (astype(result, 'float64') differs from them)")


def _emulated(out, dtype: str, op_name: str):
    """A float64 reference result as the tested dtype's: floats rounded to it."""
    if isinstance(out, (tuple, list)):
        return type(out)(_emulated(o, dtype, op_name) for o in out)
    if not isinstance(out, _Out) or out.dtype != "float64":
        return out
    if op_name == "to_numpy":  # the host's type for the dtype
        return _Out(round_to(out.values, dtype).astype(numpy_dtype(dtype)),
                    numpy_dtype(dtype).name)
    return _Out(round_to(out.values, dtype), dtype)


def _compare_kernel(op, out, expected, expected_t, where, tested_dtype, exact: bool,
                    emulated: bool = False):
    if isinstance(expected, (tuple, list)):
        assert isinstance(out, (tuple, list)) and len(out) == len(expected), \
            f"{where}: returned {type(out).__name__} of the wrong length"
        for i, (o, e) in enumerate(zip(out, expected)):
            et = expected_t[i] if expected_t is not None else None
            _compare_kernel(op, o, e, et, f"{where} output {i}", tested_dtype, exact, emulated)
        return
    if expected is None or isinstance(expected, (str, bool, int, float)):
        assert out == expected or (out != out and expected != expected), \
            f"{where}: returned {out!r}, expected {expected!r}"
        return
    assert isinstance(out, _Out), f"{where}: returned {type(out).__name__}, expected an array"
    got, got_dt = out.values, out.dtype
    want = expected.values
    if expected_t is not None:
        want_dt = expected_t.dtype
    else:  # no reference in the tested dtype: floats of the float64 reference take it
        want_dt = tested_dtype if expected.dtype == "float64" else expected.dtype
    assert got_dt == want_dt, f"{where}: result dtype {got_dt}, expected {want_dt}"
    assert tuple(got.shape) == tuple(want.shape), \
        f"{where}: result shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    rtol, atol = tolerance(op, got_dt)
    if exact and op.name in _EXACT:
        rtol, atol = 0.0, 0.0
    elif exact and not emulated:  # an emulated reference skips the intermediate roundings
        atol = 0.0
    assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True, check_dtype=False, msg=where)
    if exact and op.name not in _ZERO_SIGN_FREE and got.dtype.kind == "f":
        zeros = (want == 0) & (got == 0)
        bad = zeros & (np.signbit(got) != np.signbit(want.astype(got.dtype)))
        assert not bad.any(), \
            f"{where}: wrong sign of zero at {np.argwhere(bad)[:4].tolist()}: got " \
            f"{got[bad][:4].tolist()}, expected {want[bad][:4].tolist()}"


def _check_array_types(k, out, where):
    if isinstance(out, (tuple, list)):
        for o in out:
            _check_array_types(k, o, where)
        return
    array_type = k.backend.array_type
    if _is_array(out) and not (tuple(out.shape) == () and  # immutable 0-d scalars are allowed
                               (type(out).__module__ == array_type.__module__
                                or isinstance(out, np.generic))):
        assert isinstance(out, array_type), \
            f"{where}: returned a {type(out).__name__}, not the backend's array type " \
            f"{k.backend.array_type.__name__}"


def check_kernel_forward(op: OpInfo, device: str, dtype: str) -> int:
    """The kernel of ``device``'s table agrees with the reference backend's."""
    reg = get_registry()
    k = reg.table(device)
    ref_dev = reference_device(device, dtype)
    rk = reg.table(ref_dev or reference_device(device))
    if op.random:
        from plugrad.testing._contract import check_random_kernel
        return check_random_kernel(op, k, dtype)
    n = 0
    for s in op.samples(device, dtype):
        where = _where(op, s, device, dtype)
        args, kwargs = _materialize((s.args, s.kwargs), k, dtype, upcast=False)
        with no_warnings(where):
            out = op.op(k, *args, **kwargs)
        if op.name != "to_numpy":
            _check_array_types(k, out, where)
            _check_rounded(k, out, where)
        got = _host_tree(k, out, where)
        if ref_dev is None:  # the reference lacks the dtype: float64, rounded to it
            eargs, ekw = _materialize((s.args, s.kwargs), rk, dtype, upcast=True, emulate=True)
            expected = _host_tree(rk, op.op(rk, *eargs, **ekw))
            if "float64" not in [a for a in s.args if isinstance(a, str)]:  # asked for
                expected = _emulated(expected, dtype, op.name)
            expected_t = expected
        elif s.in_dtype:
            targs, tkw = _materialize((s.args, s.kwargs), rk, dtype, upcast=False)
            expected = expected_t = _host_tree(rk, op.op(rk, *targs, **tkw))
        else:
            rargs, rkw = _materialize((s.args, s.kwargs), rk, dtype, upcast=True)
            expected = _host_tree(rk, op.op(rk, *rargs, **rkw))
            if dtype in _NARROW:
                targs, tkw = _materialize((s.args, s.kwargs), rk, dtype, upcast=False)
                expected_t = _host_tree(rk, op.op(rk, *targs, **tkw))
            else:
                expected_t = expected
        _compare_kernel(op, got, expected, expected_t, where, dtype, exact=s.in_dtype,
                        emulated=ref_dev is None)
        n += 1
    return n


def _fill_value(k, arr):
    dtype = k.backend.dtype_of(arr)
    return True if dtype == "bool" else (7 if not dtype.startswith(("float", "bfloat")) else 0.75)


def _write_outputs(k, out):
    """Write a constant into every array output (the only in-place primitive: assign)."""
    if isinstance(out, (tuple, list)):
        for o in out:
            _write_outputs(k, o)
        return
    if _is_backend_array(k, out) and math.prod(out.shape):
        k.assign(out, (), _fill_value(k, out))


def check_kernel_inputs_unchanged(op: OpInfo, device: str, dtype: str) -> int:
    """The kernel writes none of its input arrays (except those it is defined to write),
    and, unless it is a movement primitive, writing into its result leaves them alone too
    (results are new arrays, never views of an input)."""
    k = get_registry().table(device)
    n = 0
    for s in op.samples(device, dtype):
        where = _where(op, s, device, dtype)
        args = _materialize(s.args, k, dtype, upcast=False)
        kwargs = _materialize(s.kwargs, k, dtype, upcast=False)
        arrays = []

        def note(v, pos):
            if _is_array(v):
                arrays.append((pos, v, np.array(k.to_numpy(v), copy=True)))
        for i, a in enumerate(args):
            if i in op.mutates:
                continue
            tree_map(lambda v, i=i: note(v, i), a)
        with no_warnings(where):
            out = op.op(k, *args, **kwargs)
        for pos, arr, before in arrays:
            _exactly(np.asarray(k.to_numpy(arr)), before, f"{where}: argument {pos} was modified")
        if op.name in MOVEMENT or op.random:
            n += 1
            continue
        _write_outputs(k, out)
        for pos, arr, before in arrays:
            _exactly(np.asarray(k.to_numpy(arr)), before,
                     f"{where}: writing into the result changed argument {pos}: the result "
                     f"shares memory with an input (only movement primitives may return views)")
        n += 1
    return n
