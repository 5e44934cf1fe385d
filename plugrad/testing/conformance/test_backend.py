"""Per-backend checks that are not about one op: promotion, random streams, dtypes, and
the coverage of the op database itself."""
import numpy as np
import pytest

import plugrad
from plugrad.backends.contract import DTYPE_NAMES
from plugrad.core.registry import get_registry
from plugrad.testing import _checks, assert_close, opdb
from plugrad.testing.conformance._params import pytest_generate_tests  # noqa: F401


# ---------------------------------------------------------------------- coverage
def test_every_public_op_has_an_entry():
    """Every public op (function or Tensor method) is in the op database or in NOT_OPS."""
    missing = opdb.missing_public_entries()
    assert not missing, f"public ops without an op-database entry: {missing}"


def test_every_kernel_has_an_entry():
    """Every required primitive and optional kernel of the contract has an entry."""
    missing = opdb.missing_kernel_entries()
    assert not missing, f"contract kernels without an op-database entry: {missing}"


def test_not_ops_are_really_public_and_not_covered_twice():
    public = opdb.public_op_names()
    stale = sorted(set(opdb.NOT_OPS) - public)
    assert not stale, f"NOT_OPS names that are no longer public: {stale}"
    both = sorted(set(opdb.NOT_OPS) & opdb.covered_public_names())
    assert not both, f"names both skipped and covered: {both}"


def test_every_differentiable_entry_is_gradchecked():
    for op in opdb.ops("public"):
        if op.differentiable:
            assert "float64" in op.dtypes, f"{op.name} is differentiable but not in float64"


# ---------------------------------------------------------------------- promotion
_FIXED = [
    # (a dtype, a 0-d?, b: dtype name or Python scalar, b 0-d?, result) -- PyTorch's rules
    ("int32", False, 2.5, None, "float32"),
    ("float16", False, 2.5, None, "float16"),
    ("bool", False, 1, None, "int64"),
    ("int32", False, 1, None, "int32"),
    ("bool", False, True, None, "bool"),
    ("int32", False, "float64", True, "float64"),
    ("float32", False, "float64", True, "float32"),
    ("int32", False, "int64", True, "int32"),
    ("bool", False, "int32", True, "int32"),
    ("int64", True, "int32", True, "int64"),
    ("float16", False, "int64", True, "float16"),
    ("float16", True, "float32", False, "float32"),
]


def test_promotion_table():
    """``plugrad.promote_types`` is PyTorch's table for every pair of dtypes."""
    table = _checks.promotion_table()
    for a in DTYPE_NAMES:
        for b in DTYPE_NAMES:
            got = plugrad.promote_types(getattr(plugrad, a if a != "bool" else "bool"),
                                        getattr(plugrad, b if b != "bool" else "bool"))
            assert got.name == table[(a, b)], f"promote_types({a}, {b}) = {got.name}, " \
                                              f"PyTorch gives {table[(a, b)]}"
            assert table[(a, b)] == table[(b, a)]


def test_promotion_on_backend(backend):
    """Tensors of every pair of supported dtypes add to the table's dtype on the backend."""
    table = _checks.promotion_table()
    have = sorted(get_registry().table(backend).dtypes)
    for a in have:
        for b in have:
            x = plugrad.ones(2, dtype=getattr(plugrad, a), device=backend)
            y = plugrad.ones(2, dtype=getattr(plugrad, b), device=backend)
            out = x + y
            assert out.dtype.name == table[(a, b)], f"{a} + {b} on {backend}: {out.dtype.name}"
            assert out.device.type == backend


def test_scalar_and_zero_dim_promotion(backend):
    """Python scalars and 0-d tensors only raise the category, as in PyTorch."""
    have = get_registry().table(backend).dtypes
    for a, a0, b, b0, want in _FIXED:
        if a not in have or (isinstance(b, str) and b not in have) or want not in have:
            continue
        x = plugrad.ones(() if a0 else (2,), dtype=getattr(plugrad, a), device=backend)
        y = b if not isinstance(b, str) else plugrad.ones(() if b0 else (2,),
                                                          dtype=getattr(plugrad, b),
                                                          device=backend)
        out = x + y if a != "bool" or not isinstance(y, bool) else x | y
        assert out.dtype.name == want, f"{a}{'(0-d)' if a0 else ''} + {b!r}" \
                                       f"{'(0-d)' if b0 else ''}: {out.dtype.name}, want {want}"


# ---------------------------------------------------------------------- dtypes
def test_unsupported_backend_dtype_raises(backend):
    """Making a tensor of a dtype the backend lacks is a DTypeError naming both."""
    k = get_registry().table(backend)
    missing = [d for d in DTYPE_NAMES if d not in k.dtypes]
    for name in missing:
        with pytest.raises(plugrad.DTypeError) as info:
            plugrad.zeros(2, dtype=getattr(plugrad, name), device=backend)
        assert name in str(info.value) and k.name in str(info.value), str(info.value)
    for name in sorted(k.dtypes):
        t = plugrad.zeros(2, dtype=getattr(plugrad, name), device=backend)
        assert t.dtype.name == name


# ---------------------------------------------------------------------- random streams
def test_same_seed_same_stream(backend):
    """``manual_seed`` restarts the backend's stream; another seed gives another one."""
    def draw():
        return (plugrad.rand(3, 4, device=backend), plugrad.randn(5, device=backend),
                plugrad.randint(0, 100, (6,), device=backend))
    plugrad.manual_seed(2024)
    first = draw()
    plugrad.manual_seed(2024)
    again = draw()
    for a, b in zip(first, again):
        assert a.device.type == backend
        assert_close(a, b, rtol=0.0, atol=0.0)
    plugrad.manual_seed(2025)
    other = draw()
    assert not np.array_equal(first[0].numpy(force=True), other[0].numpy(force=True))
    u = first[0].numpy(force=True)
    assert u.dtype == np.float32 and ((u >= 0) & (u < 1)).all()
    plugrad.manual_seed(0)


def test_stream_continues_within_a_seed(backend):
    """Consecutive draws differ (the generator advances)."""
    plugrad.manual_seed(7)
    a = plugrad.rand(8, device=backend).numpy(force=True)
    b = plugrad.rand(8, device=backend).numpy(force=True)
    assert not np.array_equal(a, b)
    plugrad.manual_seed(0)
