"""``out=`` as PyTorch does it, on the ops programs use it with: the same call in both
libraries must give the same values, dtype and shape, return ``out`` itself, and fail (or
warn) where PyTorch fails (or warns)."""
import warnings

import numpy as np
import pytest

import plugrad

torch = pytest.importorskip("torch")

A = np.arange(6, dtype=np.float64).reshape(2, 3) / 4 - 0.5
B = np.linspace(1.0, 2.0, 6).reshape(2, 3)


def _calls(lib, device=None):
    """name -> (call taking ``out``, out's shape, out's dtype name) for one library."""
    kw = {"device": device} if device else {}
    a = lib.tensor(A, dtype=lib.float32, **kw)
    b = lib.tensor(B, dtype=lib.float32, **kw)
    i = lib.tensor([[1, 2, 3], [4, 5, 6]], **kw)
    return {
        "add": (lambda out: lib.add(a, b, out=out), (2, 3), "float32"),
        "add_alpha": (lambda out: lib.add(a, b, alpha=2, out=out), (2, 3), "float32"),
        "sub": (lambda out: lib.sub(a, b, out=out), (2, 3), "float32"),
        "mul": (lambda out: lib.mul(a, 3.0, out=out), (2, 3), "float32"),
        "div": (lambda out: lib.div(a, b, out=out), (2, 3), "float32"),
        "add_int_into_float": (lambda out: lib.add(i, i, out=out), (2, 3), "float32"),
        "add_into_float64": (lambda out: lib.add(a, b, out=out), (2, 3), "float64"),
        "matmul": (lambda out: lib.matmul(a, b.t(), out=out), (2, 2), "float32"),
        "mm": (lambda out: lib.mm(a, b.t(), out=out), (2, 2), "float32"),
        "cat": (lambda out: lib.cat([a, b], out=out), (4, 3), "float32"),
        "cat_into_float64": (lambda out: lib.cat([a, b], 1, out=out), (2, 6), "float64"),
        "stack": (lambda out: lib.stack([a, b], out=out), (2, 2, 3), "float32"),
        "sum_dim": (lambda out: lib.sum(a, 1, out=out), (2,), "float32"),
        "sum_into_int": (lambda out: lib.sum(a + 0.75, 1, out=out), (2,), "int64"),
        "cumsum_into_int": (lambda out: lib.cumsum(a + 0.75, 1, out=out), (2, 3), "int64"),
        "mean_dim": (lambda out: lib.mean(a, 0, out=out), (3,), "float64"),
        "max": (lambda out: lib.max(a, out=out), (), "float32"),
        "maximum": (lambda out: lib.max(a, b, out=out), (2, 3), "float32"),
        "clamp": (lambda out: lib.clamp(a, -0.2, 0.3, out=out), (2, 3), "float32"),
        "exp": (lambda out: lib.exp(a, out=out), (2, 3), "float32"),
        "log": (lambda out: lib.log(b, out=out), (2, 3), "float64"),
        "where": (lambda out: lib.where(a > 0, a, b, out=out), (2, 3), "float32"),
        "sqrt": (lambda out: lib.sqrt(b, out=out), (2, 3), "float32"),
        "pow": (lambda out: lib.pow(a, 2, out=out), (2, 3), "float32"),
        "zeros": (lambda out: lib.zeros(2, 3, out=out), (2, 3), "float32"),
        "ones_int": (lambda out: lib.ones(2, 3, out=out), (2, 3), "int64"),
        "full": (lambda out: lib.full((2, 2), 7.0, out=out), (2, 2), "float64"),
        "arange": (lambda out: lib.arange(5, out=out), (5,), "float32"),
        "arange_int": (lambda out: lib.arange(1, 7, 2, out=out), (3,), "int64"),
    }


def _new(lib, shape, dtype, device=None):
    kw = {"device": device} if device else {}
    return lib.full(shape, -9, dtype=getattr(lib, dtype), **kw)


@pytest.mark.parametrize("case", sorted(_calls(plugrad)))
def test_out_as_torch(device, case):
    ours, shape, dtype = _calls(plugrad, device)[case]
    theirs, _, _ = _calls(torch)[case]
    o, t = _new(plugrad, shape, dtype, device), _new(torch, shape, dtype)
    version = o._version
    assert ours(o) is o
    assert theirs(t) is t
    assert o.dtype.name == str(t.dtype).split(".")[1]
    assert tuple(o.shape) == tuple(t.shape)
    np.testing.assert_allclose(o.cpu().numpy(), t.numpy(), rtol=1e-6)
    assert o._version > version


@pytest.mark.parametrize("case", ["add", "matmul", "cat", "stack", "sum_dim", "exp",
                                  "where", "zeros", "arange"])
@pytest.mark.parametrize("start", [(0,), (7,), (3, 3, 3)])
def test_out_resized_as_torch(device, case, start):
    """An ``out`` of another shape takes the result's; PyTorch warns where it held values."""
    ours, _, dtype = _calls(plugrad, device)[case]
    theirs, _, _ = _calls(torch)[case]
    o, t = _new(plugrad, start, dtype, device), _new(torch, start, dtype)
    with warnings.catch_warnings(record=True) as wo:
        warnings.simplefilter("always")
        ours(o)
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        theirs(t)
    assert tuple(o.shape) == tuple(t.shape)
    np.testing.assert_allclose(o.cpu().numpy(), t.numpy(), rtol=1e-6)
    assert [type(w.message) for w in wo] == [type(w.message) for w in wt]
    assert all(w.filename == __file__ for w in wo)  # the warning names the caller's line


BAD_DTYPE = [("add", "int64"), ("add", "bool"), ("exp", "int32"), ("mean_dim", "int64"),
             ("cat", "int64"), ("matmul", "float64"), ("mm", "float64"), ("where", "float64"),
             ("clamp", "float64")]


@pytest.mark.parametrize("case,dtype", BAD_DTYPE)
def test_out_dtype_refused_as_torch(device, case, dtype):
    ours, shape, _ = _calls(plugrad, device)[case]
    theirs, _, _ = _calls(torch)[case]
    with pytest.raises((RuntimeError, TypeError)) as want:
        theirs(_new(torch, shape, dtype))
    o = _new(plugrad, shape, dtype, device)
    before = o.cpu().numpy().copy()
    with pytest.raises(type(want.value) if case != "cat" else RuntimeError, match=case.split("_")[0]):
        ours(o)
    np.testing.assert_array_equal(o.cpu().numpy(), before)  # untouched


def test_out_and_autograd_as_torch(device):
    """``out=`` records no graph: refused while grad mode records and an input or ``out``
    requires grad (PyTorch's message), allowed under ``no_grad``."""
    msg = "functions with out=... arguments don't support automatic differentiation"
    for lib, kw in ((torch, {}), (plugrad, {"device": device})):
        a = lib.ones(2, 3, requires_grad=True, **kw)
        b = lib.ones(2, 3, **kw)
        with pytest.raises(RuntimeError, match=msg):
            lib.add(a, b, out=lib.zeros(2, 3, **kw))
        with pytest.raises(RuntimeError, match=msg):
            lib.mul(b, b, out=lib.zeros(2, 3, requires_grad=True, **kw))
        with lib.no_grad():
            o = lib.zeros(2, 3, requires_grad=True, **kw)
            assert lib.add(a, b, out=o) is o
            assert o.tolist() == [[2.0] * 3] * 2 and o.grad_fn is None


def test_out_writes_through_views_and_aliases(device):
    base = plugrad.zeros(6, device=device)
    plugrad.add(plugrad.ones(3, device=device), 1, out=base[::2])
    like = plugrad.zeros(6, device=device)  # the backend's in-place write through a view
    like[::2].copy_(plugrad.full((3,), 2.0, device=device))
    assert base.tolist() == like.tolist()
    if device == "cpu":
        assert base.tolist() == [2.0, 0.0, 2.0, 0.0, 2.0, 0.0]
    a = plugrad.tensor([1.0, 2.0], device=device)
    assert plugrad.mul(a, a, out=a) is a and a.tolist() == [1.0, 4.0]
    o = plugrad.zeros(0, device=device)
    plugrad.cat([a, a], out=o)  # resized: a new array, not one of a's
    o.add_(1)
    assert a.tolist() == [1.0, 4.0]


def test_out_of_several_results_and_bad_out():
    a = plugrad.tensor(A, dtype=plugrad.float32)
    t = torch.tensor(A, dtype=torch.float32)
    v, i = plugrad.empty(0), plugrad.empty(0, dtype=plugrad.int64)
    tv, ti = torch.empty(0), torch.empty(0, dtype=torch.int64)
    r = plugrad.max(a, 1, out=(v, i))
    torch.max(t, 1, out=(tv, ti))
    assert r.values is v and r.indices is i
    assert v.tolist() == tv.tolist() and i.tolist() == ti.tolist()
    with pytest.raises(TypeError, match="out"):
        plugrad.add(a, a, out=5)
    with pytest.raises(TypeError, match="out"):
        plugrad.reshape(a, (6,), out=a)  # a view op: no out= (as in PyTorch)


def test_random_factories_take_out(device):
    o = plugrad.zeros(3, 2, dtype=plugrad.float64, device=device)
    plugrad.manual_seed(3)
    assert plugrad.randn(3, 2, out=o) is o
    plugrad.manual_seed(3)
    want = plugrad.randn(3, 2, dtype=plugrad.float64, device=device)
    assert o.dtype is plugrad.float64 and o.tolist() == want.tolist()
    u = plugrad.zeros(4, device=device)
    assert plugrad.rand(4, out=u) is u and ((u.cpu().numpy() >= 0) & (u.cpu().numpy() < 1)).all()
