"""The checks behind the conformance suite, one function per kind of test.

Each takes an :class:`~plugrad.testing.opdb.OpInfo`, a device type and a dtype name, runs
every sample of the op and raises ``AssertionError`` (naming the op, sample, device and
dtype) at the first disagreement. They are plain functions so that a backend author can
also call them from a debugger or a script.
"""
from __future__ import annotations

import numpy as np

import plugrad
from plugrad.autograd import gradcheck
from plugrad.core.registry import get_registry
from plugrad.core.tensor import Tensor
from plugrad.testing._comparison import assert_close
from plugrad.testing.opdb import FLOATS, TOLERANCES, OpInfo

__all__ = ["reference_device", "check_forward", "check_gradcheck", "check_backward_paths",
           "check_variants",
           "check_inputs_unchanged", "check_unsupported_dtype", "check_promotion",
           "check_kernel_forward", "check_kernel_inputs_unchanged", "promotion_table",
           "tolerance"]

#: PyTorch's type-promotion table (``torch.promote_types``), written out once.
_ORDER = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64")
_TABLE_ROWS = """
bool     bool    uint8   int8    int16   int32   int64   float16  bfloat16 float32 float64
uint8    uint8   uint8   int16   int16   int32   int64   float16  bfloat16 float32 float64
int8     int8    int16   int8    int16   int32   int64   float16  bfloat16 float32 float64
int16    int16   int16   int16   int16   int32   int64   float16  bfloat16 float32 float64
int32    int32   int32   int32   int32   int32   int64   float16  bfloat16 float32 float64
int64    int64   int64   int64   int64   int64   int64   float16  bfloat16 float32 float64
float16  float16 float16 float16 float16 float16 float16 float16  float32  float32 float64
bfloat16 bfloat16 bfloat16 bfloat16 bfloat16 bfloat16 bfloat16 float32 bfloat16 float32 float64
float32  float32 float32 float32 float32 float32 float32 float32  float32  float32 float64
float64  float64 float64 float64 float64 float64 float64 float64  float64  float64 float64
"""


def promotion_table() -> dict[tuple[str, str], str]:
    """``{(a, b): result}`` for every pair of dtype names, as PyTorch promotes tensors."""
    out = {}
    for line in _TABLE_ROWS.strip().splitlines():
        row, *cells = line.split()
        for col, cell in zip(_ORDER, cells):
            out[(row, col)] = cell
    return out


_PROMOTE = promotion_table()


def reference_device(device: str) -> str:
    """Where the reference runs: ``ref`` (pure Python), or ``cpu`` when ``ref`` is tested."""
    return "cpu" if device == "ref" else "ref"


def tolerance(op: OpInfo, dtype: str) -> tuple[float, float]:
    return op.tol.get(dtype) or TOLERANCES.get(dtype, (0.0, 0.0))


def _where(op, sample, device, dtype) -> str:
    return f"{op.name} [{sample.name}] on {device} in {dtype}"


# ---------------------------------------------------------------------- trees of values
def tree_map(fn, obj):
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(tree_map(fn, v) for v in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(tree_map(fn, v) for v in obj)
    if isinstance(obj, dict):
        return {key: tree_map(fn, v) for key, v in obj.items()}
    return fn(obj)


def tensors_in(obj) -> list[Tensor]:
    found = []
    tree_map(lambda v: found.append(v) if isinstance(v, Tensor) else None, obj)
    return found


def _host(t: Tensor) -> np.ndarray:
    return np.array(t.detach().numpy(force=True), copy=True)


def _to_reference(obj, ref_device):
    """Tensors of ``obj`` copied to ``ref_device``, floating ones in float64."""
    def move(v):
        if not isinstance(v, Tensor):
            return v
        dtype = "float64" if v.dtype.is_floating_point else v.dtype.name
        return plugrad.tensor(_host(v), dtype=dtype, device=ref_device)
    return tree_map(move, obj)


def _to_numpy64(obj):
    def conv(v):
        if isinstance(v, Tensor):
            a = _host(v)
            return a.astype(np.float64) if a.dtype.kind == "f" else a
        return v
    return tree_map(conv, obj)


# ---------------------------------------------------------------------- public ops
def _compare_outputs(op, out, expected, tested_dtype, device, where, *, check_dtype=True):
    if isinstance(expected, Tensor):
        assert isinstance(out, Tensor), f"{where}: returned {type(out).__name__}, expected a Tensor"
        want = expected.dtype.name
        if want == "float64" and tested_dtype in FLOATS:
            want = tested_dtype
        if check_dtype:
            assert out.dtype.name == want, \
                f"{where}: output dtype {out.dtype.name}, expected {want}"
        assert out.device.type == device, f"{where}: output on {out.device}, expected {device}"
        rtol, atol = tolerance(op, out.dtype.name)
        assert_close(out, expected, rtol=rtol, atol=atol, equal_nan=op.equal_nan,
                     check_dtype=False, msg=where)
    elif isinstance(expected, np.ndarray):
        assert isinstance(out, Tensor), f"{where}: returned {type(out).__name__}, expected a Tensor"
        rtol, atol = tolerance(op, out.dtype.name)
        assert_close(out, expected, rtol=rtol, atol=atol, equal_nan=op.equal_nan,
                     check_dtype=False, msg=where)
    elif isinstance(expected, (tuple, list)):
        assert isinstance(out, (tuple, list)), \
            f"{where}: returned {type(out).__name__}, expected a sequence"
        assert len(out) == len(expected), \
            f"{where}: returned {len(out)} outputs, expected {len(expected)}"
        for i, (o, e) in enumerate(zip(out, expected)):
            _compare_outputs(op, o, e, tested_dtype, device, f"{where} output {i}",
                             check_dtype=check_dtype)
    else:
        assert_close(out, expected, equal_nan=op.equal_nan, check_dtype=False, msg=where)


def check_forward(op: OpInfo, device: str, dtype: str) -> int:
    """Every sample's output equals the reference (values, shape, dtype, device)."""
    ref_dev = reference_device(device)
    n = 0
    for s in op.samples(device, dtype):
        where = _where(op, s, device, dtype)
        out = op.op(*s.args, **s.kwargs)
        if op.np_ref is not None:
            with np.errstate(all="ignore"):
                expected = op.np_ref(*_to_numpy64(s.args), **s.kwargs)
            _compare_outputs(op, out, np.asarray(expected), dtype, device, where)
        else:
            expected = op.op(*_to_reference(s.args, ref_dev), **_to_reference(s.kwargs, ref_dev))
            _compare_outputs(op, out, expected, dtype, device, where)
        n += 1
    assert n, f"{op.name}: no samples for {dtype}"
    return n


def _with_leaves(sample):
    """The sample's arguments with each floating tensor replaced by a fresh leaf that
    requires grad, and those leaves."""
    leaves: list[Tensor] = []

    def leaf(v):
        if isinstance(v, Tensor) and v.dtype.is_floating_point:
            t = v.detach().requires_grad_(True)
            leaves.append(t)
            return t
        return v
    args, kwargs = tree_map(leaf, (sample.args, sample.kwargs))
    return args, kwargs, leaves


def check_gradcheck(op: OpInfo, device: str, dtype: str = "float64",
                    noncontiguous: bool = False) -> int:
    """``gradcheck`` in float64 on the op's first gradable samples (only those with
    non-contiguous inputs when ``noncontiguous``, else only the others)."""
    n = 0
    for s in op.samples(device, dtype):
        if not s.grad or s.noncontig != noncontiguous:
            continue
        args, kwargs, leaves = _with_leaves(s)
        if not leaves:
            continue
        ids = {id(t): i for i, t in enumerate(leaves)}

        def fn(*xs, _args=args, _kwargs=kwargs, _ids=ids):
            swap = lambda v: xs[_ids[id(v)]] if id(v) in _ids else v  # noqa: E731
            return op.op(*tree_map(swap, _args), **tree_map(swap, _kwargs))
        try:
            gradcheck(fn, tuple(leaves))
        except Exception as exc:
            raise AssertionError(f"{_where(op, s, device, dtype)}: gradcheck failed: "
                                 f"{type(exc).__name__}: {exc}") from exc
        n += 1
        if n >= op.grad_samples:
            break
    assert n, f"{op.name}: no gradable samples"
    return n


_RESHAPING_INPLACE = {"squeeze_", "unsqueeze_", "t_", "transpose_"}
_AUGMENTED = {f"__i{n}__" for n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
                                     "matmul", "and", "or", "xor", "lshift", "rshift")}


def _exactly(actual, expected, where):
    assert_close(actual, expected, rtol=0.0, atol=0.0, equal_nan=True, msg=where)


def check_backward_paths(op: OpInfo, device: str, dtype: str) -> int:
    """The two bindings of every gradient rule agree bit for bit: ``loss.backward()`` (rules
    on bare arrays with the node's kernel table) and ``autograd.grad(create_graph=True)``
    (the same rules on the differentiable Tensor ops), in values and dtypes."""
    rng = np.random.default_rng(len(op.name))
    n = 0
    for s in op.samples(device, dtype):
        if not s.grad:
            continue
        args, kwargs, leaves = _with_leaves(s)
        out = op.op(*args, **kwargs)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
                if isinstance(o, Tensor) and o.requires_grad]
        if not outs:
            continue
        loss = None
        for o in outs:  # distinct weights: every output element gets its own gradient
            w = plugrad.tensor(rng.uniform(0.5, 1.5, tuple(o.shape)), dtype=o.dtype,
                               device=o.device)
            term = (o * w).sum()
            loss = term if loss is None else loss + term
        where = _where(op, s, device, dtype)
        expected = plugrad.autograd.grad(loss, leaves, retain_graph=True, allow_unused=True,
                                         create_graph=True)
        for t in leaves:
            t.grad = None
        loss.backward(retain_graph=True)
        for i, (t, e) in enumerate(zip(leaves, expected)):
            got = t.grad
            at = f"{where}: input {i}"
            if e is None:
                assert got is None or not bool((got != 0).any()), \
                    f"{at}: backward() gave a gradient, autograd.grad none"
                continue
            assert got is not None, f"{at}: backward() gave no gradient"
            assert got.dtype is e.dtype, f"{at}: dtype {got.dtype} vs {e.dtype}"
            assert_close(got, e.detach(), rtol=0, atol=0, equal_nan=True,
                         msg=f"{at}: backward() and autograd.grad(create_graph=True) differ")
        n += 1
    return n


def check_variants(op: OpInfo, device: str, dtype: str) -> int:
    """Function, aliases, method, operators and in-place forms give the same result."""
    n = 0
    for s in op.samples(device, dtype):
        where = _where(op, s, device, dtype)
        expected = op.op(*s.args, **s.kwargs)
        for alias in op.aliases:
            _exactly(getattr(plugrad, alias)(*s.args, **s.kwargs), expected,
                     f"{where}: plugrad.{alias}")
            n += 1
        if not s.method or not isinstance(s.args[0], Tensor):
            continue
        x, rest = s.args[0], s.args[1:]
        if op.method is not None:
            got = op.method(s.args, s.kwargs) if callable(op.method) else \
                getattr(x, op.method)(*rest, **s.kwargs)
            _exactly(got, expected, f"{where}: Tensor.{op.method}")
            n += 1
        for name in op.method_aliases:
            if name in _AUGMENTED:
                if not isinstance(expected, Tensor) or expected.dtype is not x.dtype or \
                        tuple(expected.shape) != tuple(x.shape):
                    continue  # the result cannot be written into the input
                y = x.clone()
                got = getattr(y, name)(*rest, **s.kwargs)
                assert got is y, f"{where}: Tensor.{name} did not return self"
            else:
                got = getattr(x, name)(*rest, **s.kwargs)
            _exactly(got, expected, f"{where}: Tensor.{name}")
            n += 1
        for name in ((op.inplace,) if op.inplace else ()) + tuple(op.inplace_aliases):
            if not isinstance(expected, Tensor) or expected.dtype is not x.dtype or (
                    tuple(expected.shape) != tuple(x.shape) and name not in _RESHAPING_INPLACE):
                continue  # the result cannot be written into the input
            y = x.clone()
            got = getattr(y, name)(*rest, **s.kwargs)
            assert got is y, f"{where}: Tensor.{name} did not return self"
            _exactly(y, expected, f"{where}: Tensor.{name}")
            n += 1
    assert n, f"{op.name}: no variant applies in {dtype}"
    return n


def check_inputs_unchanged(op: OpInfo, device: str, dtype: str) -> int:
    """The op leaves every input tensor as it was (values, shape, dtype)."""
    n = 0
    for s in op.samples(device, dtype):
        where = _where(op, s, device, dtype)
        inputs = tensors_in((s.args, s.kwargs))
        before = [(_host(t), tuple(t.shape), t.dtype) for t in inputs]
        op.op(*s.args, **s.kwargs)
        for i, (t, (values, shape, dt)) in enumerate(zip(inputs, before)):
            assert tuple(t.shape) == shape and t.dtype is dt, \
                f"{where}: input {i} changed shape or dtype"
            _exactly(_host(t), values, f"{where}: input {i} was modified")
        n += 1
    return n


def check_unsupported_dtype(op: OpInfo, device: str, dtype: str) -> int:
    """Inputs of a dtype the op does not support raise an error that names the problem."""
    n = 0
    for s in op.samples(device, dtype):
        where = _where(op, s, device, dtype)
        try:
            op.op(*s.args, **s.kwargs)
        except (TypeError, ValueError, RuntimeError, NotImplementedError) as exc:
            message = str(exc).lower()
            words = {dtype, dtype.replace("int", "long") if dtype == "int64" else dtype,
                     "bool", "boolean", "integer", "int", "float", "floating", "dtype",
                     op.name.lower()}
            assert any(w in message for w in words), \
                f"{where}: the error does not say what is wrong: {type(exc).__name__}: {exc}"
        else:
            raise AssertionError(f"{where}: dtype {dtype} is declared unsupported, but the "
                                 f"op ran without an error")
        n += 1
    return n


def _result_dtype(rule: str, a: str, b: str) -> str:
    if rule == "bool":
        return "bool"
    out = _PROMOTE[(a, b)]
    if rule == "float" and not out.startswith(("float", "bfloat")):
        return plugrad.get_default_dtype().name
    return out


def check_promotion(op: OpInfo, device: str, dtype: str, others) -> int:
    """``op(a, b)`` for ``a`` of ``dtype`` and ``b`` of each dtype in ``others``: the result
    dtype follows PyTorch's table, and the values equal the op on both cast to it first."""
    from plugrad.testing.opdb import Maker
    n = 0
    for other in others:
        make = Maker(device, dtype, seed=n + 17)
        a = make(2, 3, low=1, high=3)
        b = make(3, low=1, high=3, dtype=other)
        want = _result_dtype(op.promotion, dtype, other)
        out = op.op(a, b)
        where = f"{op.name}({dtype}, {other}) on {device}"
        assert out.dtype.name == want, \
            f"{where}: result dtype {out.dtype.name}, PyTorch's promotion gives {want}"
        common = _PROMOTE[(dtype, other)]
        same = op.op(a.to(common), b.to(common))
        rtol, atol = tolerance(op, out.dtype.name)
        assert_close(out, same.to(out.dtype), rtol=rtol, atol=atol, equal_nan=True, msg=where)
        n += 1
    return n


# ---------------------------------------------------------------------- kernels
# The kernel-level checks live in :mod:`plugrad.testing._kernel_checks`.
from plugrad.testing._kernel_checks import (check_kernel_forward,  # noqa: E402,F401
                                            check_kernel_inputs_unchanged)
