"""Regression cases for divergences the differential suite found and that were fixed: each
compares plugrad with torch directly, on every built-in device."""
from __future__ import annotations

import math

import numpy as np
import pytest

import plugrad
import plugrad.nn.functional as F

torch = pytest.importorskip("torch", reason="these cases compare with PyTorch, which is "
                            "not installed")
from .pairs import host, pair as _pair  # noqa: E402


@pytest.mark.parametrize("name, args", [("hardtanh", (-1.7, 2.9)), ("hardtanh", ()),
                                        ("relu6", ())])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_hardtanh_stays_integer(device, name, args, dtype):
    """F.hardtanh/relu6 of an integer tensor: integer values (bounds truncated), and the
    backend array holds the tensor's own dtype (it held float64 under an int32 tensor)."""
    values = [7, 3, -2, 0, 1, -5]
    got = getattr(F, name)(plugrad.tensor(values, dtype=getattr(plugrad, dtype),
                                          device=device), *args)
    want = getattr(torch.nn.functional, name)(torch.tensor(values, dtype=getattr(torch, dtype)),
                                              *args)
    assert got.dtype.name == dtype and host(got).dtype == np.dtype(dtype)
    np.testing.assert_array_equal(host(got), want.numpy())


def test_kl_div_negative_and_nan_targets_give_nan(device):
    """Only an exact zero target contributes 0 (xlogy); a negative or NaN target is NaN."""
    x, t = [0.3, 0.2, 0.1, 0.4], [0.0, -1.0, 0.5, math.nan]
    got = F.kl_div(plugrad.tensor(x, dtype=plugrad.float64, device=device),
                   plugrad.tensor(t, dtype=plugrad.float64, device=device), reduction="none")
    want = torch.nn.functional.kl_div(torch.tensor(x, dtype=torch.float64),
                                      torch.tensor(t, dtype=torch.float64), reduction="none")
    np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", ["fmod", "remainder", "floor_divide"])
def test_integer_division_of_empty_broadcasts(device, name):
    """An empty integer divisor of any shape (not only (0,)) needs no zero check: it
    crashed in NumPy's max of an empty array."""
    a = plugrad.zeros(0, dtype=plugrad.int32, device=device)
    b = plugrad.zeros(1, 0, 1, dtype=plugrad.int32, device=device)
    want = getattr(torch, name)(torch.zeros(0, dtype=torch.int32),
                                torch.zeros(1, 0, 1, dtype=torch.int32))
    got = getattr(plugrad, name)(a, b)
    assert tuple(got.shape) == tuple(want.shape) and got.dtype.name == "int32"


_BOOL_REJECTED = {
    "abs": lambda lib, b: lib.abs(b), "floor": lambda lib, b: lib.floor(b),
    "ceil": lambda lib, b: lib.ceil(b), "round": lambda lib, b: lib.round(b),
    "trunc": lambda lib, b: lib.trunc(b), "abs_": lambda lib, b: b.clone().abs_(),
    "argmax": lambda lib, b: lib.argmax(b), "argmin": lambda lib, b: lib.argmin(b, 1),
    "topk": lambda lib, b: lib.topk(b, 1), "matmul": lambda lib, b: lib.matmul(b, b),
    "mm": lambda lib, b: lib.mm(b, b), "mv": lambda lib, b: lib.mv(b, b[0]),
    "dot": lambda lib, b: lib.dot(b[0], b[1]), "bmm": lambda lib, b: lib.bmm(b[None], b[None]),
    "addmm": lambda lib, b: lib.addmm(b, b, b), "addcmul": lambda lib, b: lib.addcmul(b, b, b),
    "addcdiv": lambda lib, b: lib.addcdiv(b, b, b),
    "addcdiv of ints": lambda lib, b: lib.addcdiv(b.float(), b.long(), b.long()),
    "median": lambda lib, b: lib.median(b), "nanmedian": lambda lib, b: lib.nanmedian(b, 0),
    "kthvalue": lambda lib, b: lib.kthvalue(b, 1), "trace": lambda lib, b: lib.trace(b),
    "searchsorted": lambda lib, b: lib.searchsorted(b[0], b[1]),
    "bucketize": lambda lib, b: lib.bucketize(b[0], b[1]),
}


@pytest.mark.parametrize("name", sorted(_BOOL_REJECTED))
def test_bool_inputs_torch_rejects_are_rejected(device, name):
    """PyTorch has no kernel of these for bool (or, addcdiv, integer) operands; plugrad
    computed a result. Both must raise now (the message names the op)."""
    values = [[True, False], [False, True]]
    with pytest.raises(RuntimeError) as want:
        _BOOL_REJECTED[name](torch, torch.tensor(values))
    with pytest.raises(RuntimeError, match=name.split()[0].rstrip("_")) as got:
        _BOOL_REJECTED[name](plugrad, plugrad.tensor(values, device=device))
    # the same class as PyTorch's (NotImplementedError where it has no kernel)
    assert isinstance(got.value, want.type), (type(got.value), want.type)


def test_bool_products_that_torch_allows_still_work(device):
    """Only products of bool raise: outer (a broadcast multiply) and sign keep working."""
    b = plugrad.tensor([True, False], device=device)
    np.testing.assert_array_equal(host(plugrad.outer(b, b)),
                                  torch.outer(torch.tensor([True, False]),
                                              torch.tensor([True, False])).numpy())
    np.testing.assert_array_equal(host(plugrad.sign(b)), [True, False])


def test_searchsorted_nan_values_go_last(device):
    """PyTorch's search tests ``!(entry >= value)``: a NaN value lands after every entry
    (plugrad's ``entry < value`` counted none)."""
    values = [0.0, 1.5, 3.0, 5.0, math.nan, math.inf, -math.inf]
    (ps, ts), (pv, tv) = _pair(device, [1.0, 2.0, 3.0]), _pair(device, values)
    for right in (False, True):
        assert plugrad.searchsorted(ps, pv, right=right).tolist() == \
            torch.searchsorted(ts, tv, right=right).tolist()
        assert plugrad.bucketize(pv, ps, right=right).tolist() == \
            torch.bucketize(tv, ts, right=right).tolist()


@pytest.mark.parametrize("name", ["hypot", "logaddexp", "logaddexp2"])
def test_float_ops_take_an_integer_operand_beside_a_float_one(device, name):
    """The floating-only kernels are chosen by the promoted dtype: float32 with int64 is
    float32 (plugrad rejected the integer operand); two integer tensors still raise."""
    (pa, ta), (pb, tb) = _pair(device, [1.0, -2.5], "float32"), _pair(device, [3, 4], "int64")
    got, want = getattr(plugrad, name)(pb, pa), getattr(torch, name)(tb, ta)
    assert got.dtype.name == "float32"
    np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError):
        getattr(torch, name)(tb, tb)
    with pytest.raises(NotImplementedError, match=name):
        getattr(plugrad, name)(pb, pb)


@pytest.mark.parametrize("value", [-0.5, 255.5, -1.0, 2.5, -1, 255])
def test_float_fill_value_into_uint8_is_range_checked(device, value):
    """A float fill value must be in [0, 255] for uint8 (c10's overflow check; only an
    int wraps): index_fill and masked_fill accepted -0.5."""
    def run(lib, **kw):
        x = lib.zeros(3, dtype=lib.uint8, **kw)
        return x.index_fill(0, lib.tensor([1], **kw), value).tolist()
    try:
        want = run(torch)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="overflow"):
            run(plugrad, device=device)
    else:
        assert run(plugrad, device=device) == want


def test_masked_scatter_with_no_true_gives_source_a_zero_gradient(device):
    (px, tx), (ps, ts) = (_pair(device, [[1.0, 2.0]], requires_grad=True),
                          _pair(device, [3.0, 4.0, 5.0], requires_grad=True))
    grads = []
    for lib, x, src in ((torch, tx, ts), (plugrad, px, ps)):
        mask = lib.tensor([False, False], device=device) if lib is plugrad else \
            lib.tensor([False, False])
        grads.append(lib.autograd.grad(lib.masked_scatter(x, mask, src).sum(), [x, src]))
    for a, b in zip(*grads):
        assert b is not None
        np.testing.assert_array_equal(host(b), a.numpy())


def test_sinc_gradient_at_tiny_inputs(device):
    """The composite's quotient rule divided by (pi x)^2, which underflows: -inf or nan at
    subnormal x and cancellation at 1e-10; PyTorch gives 0 there."""
    values = [2.2250738585072014e-308, -5e-324, 1e-200, 1e-10, 0.0, 0.3, -2.5, 7.0]
    (p, t) = _pair(device, values, requires_grad=True)
    plugrad.sinc(p).sum().backward()
    torch.sinc(t).sum().backward()
    np.testing.assert_allclose(host(p.grad), t.grad.numpy(), rtol=1e-12, atol=1e-300)


def test_adaptive_avg_pool_windows_see_only_their_elements(device):
    """Uneven adaptive windows were an averaging matrix: a NaN or inf elsewhere in the row
    made every window NaN (0 * nan)."""
    x = np.arange(2 * 7 * 5, dtype=np.float64).reshape(1, 2, 7, 5)
    x[0, 0, 3, 2], x[0, 1, 0, 0] = math.nan, math.inf
    p, t = _pair(device, x.tolist())
    for size in ((3, 2), (4, 4), (2, 3), (5, 3)):
        np.testing.assert_allclose(
            host(F.adaptive_avg_pool2d(p, size)),
            torch.nn.functional.adaptive_avg_pool2d(t, size).numpy(), rtol=1e-12,
            equal_nan=True)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_polygamma_second_derivatives_are_polygamma(device, n):
    """create_graph differentiated the gradient's series composite (NaN at the poles);
    it is the polygamma op now, whose gradient is the next polygamma (PyTorch's)."""
    values = [-1.0, 0.0, 0.5, 2.5, -3.5, 7.25]
    p, t = _pair(device, values, requires_grad=True)
    got, want = [], []
    for lib, x, out in ((plugrad, p, got), (torch, t, want)):
        g, = lib.autograd.grad(lib.polygamma(n, x).sum(), x, create_graph=True)
        out.append(g.detach())
        out.append(lib.autograd.grad(g.sum(), x)[0])
    for a, b in zip(want, got):
        np.testing.assert_allclose(host(b), a.numpy(), rtol=1e-9, equal_nan=True)
