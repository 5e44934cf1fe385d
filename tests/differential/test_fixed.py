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


def host(t):
    return np.asarray(t.detach().cpu().numpy())


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


def _pair(device, values, dtype="float64", requires_grad=False):
    p = plugrad.tensor(values, dtype=getattr(plugrad, dtype), device=device,
                       requires_grad=requires_grad)
    t = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    return p, t


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


_NAN, _INF, _BIG = math.nan, math.inf, 1.7976931348623157e+308


@pytest.mark.parametrize("A", [
    [[2.0, 1.0, 0.0], [_NAN, 3.0, 1.0], [5.0, 1.0, 1.0]],       # a NaN below: not the pivot
    [[_NAN, 1.0, 0.0], [_NAN, 3.0, 1.0], [5.0, 1.0, 1.0]],      # a NaN on top: kept
    [[4.77, -0.81, 0.41], [-1.78, 3.5, _INF], [-1.26, -5e-324, 1.41]],  # inf right of a pivot
    [[5e-324, 1.0, 2.0], [0.0, 1.0, 1.0], [5e-324, 3.0, 1.0]],  # subnormal pivot: reciprocal
    [[5e-324, 1.0], [5e-324, 3.0]],                              # one row below: a division
    [[-_BIG / 4, -_BIG / 4, _BIG], [1.0, 2.0, -1.4], [_BIG / 2, _INF, _INF]],
    [[0.0, 1.0], [_NAN, 3.0]],                                   # zero pivot, NaN kept below
])
def test_lu_factor_special_values_as_mkl(device, A):
    """The LU composite follows MKL's getrf at NaN / inf / subnormal pivots (pivots, factors
    and info), which also gives det/slogdet their PyTorch values there."""
    p, t = _pair(device, A)
    got, want = plugrad.linalg.lu_factor_ex(p), torch.linalg.lu_factor_ex(t)
    np.testing.assert_allclose(host(got.LU), want.LU.numpy(), rtol=1e-12, equal_nan=True)
    assert got.pivots.tolist() == want.pivots.tolist() and got.info.tolist() == want.info.tolist()
    if len(A) == len(A[0]):
        for x_p, x_t in ((p, t), (p.mT, t.mT)):  # contiguous: factors of A^T; else of A
            (gs, gl), (ws, wl) = plugrad.linalg.slogdet(x_p), torch.linalg.slogdet(x_t)
            np.testing.assert_allclose(host(gs), ws.numpy(), equal_nan=True)
            np.testing.assert_allclose(host(gl), wl.numpy(), rtol=1e-12, equal_nan=True)
            np.testing.assert_allclose(host(plugrad.linalg.det(x_p)),
                                       torch.linalg.det(x_t).numpy(), rtol=1e-12,
                                       equal_nan=True)


def test_slogdet_sign_requires_grad(device):
    p, t = _pair(device, [[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    (gs, gl), (ws, wl) = plugrad.linalg.slogdet(p), torch.linalg.slogdet(t)
    assert gs.requires_grad == ws.requires_grad is True
    g, = plugrad.autograd.grad(gs + gl, p)
    w, = torch.autograd.grad(ws + wl, t)
    np.testing.assert_allclose(host(g), w.numpy(), rtol=1e-12)


@pytest.mark.parametrize("A, dtype", [
    ([[1.0, 2.0], [3.0, _INF]], "float64"), ([[1.0, 2.0], [3.0, _NAN]], "float64"),
    ([[1.0, 2.0], [3.0, 1e300]], "float64"), ([[1.0, 2.0], [3.0, -1e20]], "float64"),
    ([[[1.0, 2.0], [3.0, _NAN]], [[1.0, 2.0], [3.0, 4.0]]], "float64"),
    ([[[1.0, 2.0], [3.0, 1e300]], [[1.0, 2.0], [3.0, 4.0]]], "float64"),  # s per matrix
    ([[3.4e38, 1.0], [3.4e38, 1.0]], "float32"),   # the norm overflows: identity
    ([[1.0, 2.0], [3.0, 3e38]], "float32"), ([[1.0, 2.0], [3.0, 4.0]], "float32"),
])
def test_matrix_exp_scaling_as_torch(device, A, dtype):
    """The scaling is per matrix, by PyTorch's theta (an OverflowError at an infinite norm;
    a batch took its largest norm for every matrix; float32 scaled by an overflowing 2**s)."""
    p, t = _pair(device, A, dtype)
    np.testing.assert_allclose(host(plugrad.linalg.matrix_exp(p)),
                               torch.linalg.matrix_exp(t).numpy(),
                               rtol=1e-12 if dtype == "float64" else 1e-5, equal_nan=True)


@pytest.mark.parametrize("name", ["linalg.cholesky", "cholesky"])
@pytest.mark.parametrize("A, upper", [
    ([[_NAN, 0.0], [0.0, 1.0]], False), ([[1.0, 0.0], [0.0, _NAN]], False),
    ([[1.0, _NAN], [_NAN, 1.0]], False), ([[1.0, 0.0], [_NAN, 1.0]], True),
    ([[[1.0, 0.0], [0.0, 1.0]], [[_NAN, 0.0], [0.0, 1.0]]], False),
])
def test_cholesky_nan_pivot_raises_as_torch(device, name, A, upper):
    """LAPACK's potrf stops at a NaN pivot: PyTorch raises LinAlgError naming the batch
    element and the order (NumPy's driver returned NaN); with upper, the upper triangle is
    read, the lower one ignored."""
    p, t = _pair(device, A)
    fn = {"linalg.cholesky": lambda lib, x: lib.linalg.cholesky(x, upper=upper),
          "cholesky": lambda lib, x: lib.cholesky(x, upper=upper)}[name]
    try:
        want = fn(torch, t)
    except RuntimeError as e:
        with pytest.raises(plugrad.linalg.LinAlgError) as got:
            fn(plugrad, p)
        assert str(got.value) == str(e) and isinstance(e, torch.linalg.LinAlgError)
    else:
        np.testing.assert_allclose(host(fn(plugrad, p)), want.numpy(), equal_nan=True)


@pytest.mark.parametrize("name", ["addmm", "baddbmm"])
@pytest.mark.parametrize("beta, alpha", [(0.5, 2.0), (1.5, 2.5), (1, 1), (0, 3)])
def test_integer_addmm_truncates_float_scalars(device, name, beta, alpha):
    """PyTorch casts float alpha/beta to an integral result's dtype (0.5 becomes 0): the
    result stays int64 (plugrad promoted it to float32)."""
    M, a, b = [-2, 0, -1, 1], [[0, 1, 2], [1, 1, 0]], [[0, 2, -1, -1], [-1, 0, 0, 0],
                                                      [-1, 1, 0, 0]]
    outs = []
    for lib, kw in ((torch, {}), (plugrad, {"device": device})):
        T = lambda v: lib.tensor(v, **kw)  # noqa: E731
        x, y = (T(a), T(b)) if name == "addmm" else (T([a, a]), T([b, b]))
        outs.append(getattr(lib, name)(T(M), x, y, beta=beta, alpha=alpha))
    assert outs[1].dtype.name == "int64" and outs[1].tolist() == outs[0].tolist()


def test_addmm_beta_zero_ignores_nan_bias(device):
    (pb, tb), (pa, ta) = _pair(device, [math.nan, 1.0]), _pair(device, [[1.0, 2.0]])
    (pm, tm) = _pair(device, [[1.0, 2.0], [3.0, 4.0]])
    assert plugrad.addmm(pb, pa, pm, beta=0).tolist() == \
        torch.addmm(tb, ta, tm, beta=0).tolist()


def test_lu_factor_of_a_singular_matrix_raises_as_torch(device):
    """linalg.lu_factor refuses an exactly zero pivot (PyTorch's message, batch element
    included); lu_factor_ex and linalg.lu factor it."""
    A = [[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]
    p, t = _pair(device, A)
    with pytest.raises(RuntimeError) as want:
        torch.linalg.lu_factor(t)
    with pytest.raises(RuntimeError) as got:
        plugrad.linalg.lu_factor(p)
    assert str(got.value) == str(want.value)
    assert plugrad.linalg.lu_factor_ex(p).info.tolist() == [0, 2]
    for x, y in zip(plugrad.linalg.lu(p), torch.linalg.lu(t)):
        np.testing.assert_allclose(host(x), y.numpy())


@pytest.mark.parametrize("name", ["inv_ex", "solve_ex"])
def test_inv_ex_of_a_singular_matrix_gives_the_substitutions(device, name):
    """PyTorch's inv_ex/solve_ex of a singular matrix are getrs' inf/NaN (plugrad gave
    NaN everywhere)."""
    A = [[4.077273368835449, 0.0, -0.0], [-_INF, 2.6696455478668213, -1.3061716556549072],
         [-1.5, 0.11363384127616882, 3.5]]
    p, t = _pair(device, A, "float32")
    pe, te = plugrad.eye(3, device=device), torch.eye(3)
    got = plugrad.linalg.inv_ex(p) if name == "inv_ex" else plugrad.linalg.solve_ex(p, pe)
    want = torch.linalg.inv_ex(t) if name == "inv_ex" else torch.linalg.solve_ex(t, te)
    np.testing.assert_allclose(host(got[0]), want[0].numpy(), equal_nan=True)
    assert got[1].tolist() == want[1].tolist()


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8"])
def test_lu_unpack_takes_any_dtype(device, dtype):
    data, piv = np.arange(9).reshape(3, 3), [1, 3, 3]
    want = torch.lu_unpack(torch.tensor(data).to(getattr(torch, dtype)),
                           torch.tensor(piv, dtype=torch.int32))
    got = plugrad.lu_unpack(plugrad.tensor(data, device=device).to(getattr(plugrad, dtype)),
                            plugrad.tensor(piv, dtype=plugrad.int32, device=device))
    for x, y in zip(got, want):
        assert x.dtype.name == dtype and x.tolist() == y.tolist()


def test_cdist_matrix_product_gradient_at_zero_distance(device):
    """cdist's matrix-product path has PyTorch's rule (_euclidean_dist_backward): 0 at a
    zero distance (the composite's sqrt'(0) * 0 was NaN), its double backward too."""
    X, Y = [[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]], [[0.0, 0.0], [1.0, 2.5]]
    outs = []
    for lib, kw in ((torch, {}), (plugrad, {"device": device})):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True, **kw)
        y = lib.tensor(Y, dtype=lib.float64, requires_grad=True, **kw)
        d = lib.cdist(x, y, compute_mode="use_mm_for_euclid_dist")
        w = lib.tensor([[1.0, -2.0], [0.5, 3.0], [1.0, 1.0]], dtype=lib.float64, **kw)
        g = lib.autograd.grad((d * w).sum(), [x, y], create_graph=True)
        h = lib.autograd.grad(g[0].sum() + (g[1] * g[1]).sum(), [x, y])
        outs.append([t.detach().cpu().numpy() if lib is plugrad else t.detach().numpy()
                     for t in (d, *g, *h)])
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p", [1, -1, _INF, -_INF, "fro", "nuc"])
@pytest.mark.parametrize("A", [[[1.0, _NAN], [0.0, 1.0]], [[1.0, _INF], [0.0, 1.0]],
                               [[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]],
                               [[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]]]])
def test_cond_special_values_as_torch(device, p, A):
    """cond's norms of A and A^-1 give inf where PyTorch's do (NaN of non-finite input);
    'nuc' is sum(s) sum(1/s) (finite at a singular matrix), NaN at inf, LinAlgError at NaN."""
    pa, ta = _pair(device, A)
    try:
        want = torch.linalg.cond(ta, p)
    except RuntimeError as e:
        with pytest.raises(plugrad.linalg.LinAlgError) as got:
            plugrad.linalg.cond(pa, p)
        assert str(got.value) == str(e)
    else:
        got = host(plugrad.linalg.cond(pa, p))
        if p == "nuc":  # a singular matrix: 1 / (its smallest singular value's rounding)
            big = want.numpy() > 1e15
            assert (got[big] > 1e15).all()
            got, want = np.where(big, 0.0, got), torch.where(want > 1e15, 0.0, want)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-9, equal_nan=True)


@pytest.mark.parametrize("A", [[[1.0, _NAN], [_NAN, 1.0]], [[1.0, _INF], [_INF, 1.0]],
                               [[_INF, 0.0], [0.0, 1.0]],
                               [[[1.0, 0.0], [0.0, 2.0]], [[_INF, 0.0], [0.0, 1.0]]],
                               [[[1.0, 0.0], [0.0, 2.0]], [[_NAN, 0.0], [0.0, 1.0]]]])
def test_svd_of_non_finite_matrices(device, A):
    """PyTorch's svd refuses a NaN (LinAlgError naming the batch element; NumPy raised its
    own error) and gives NaN singular values for an infinity (the reference backend
    computed values)."""
    p, t = _pair(device, A)
    try:
        want = torch.linalg.svdvals(t)
    except RuntimeError as e:
        with pytest.raises(plugrad.linalg.LinAlgError) as got:
            plugrad.linalg.svdvals(p)
        assert str(got.value) == str(e)
    else:
        np.testing.assert_allclose(host(plugrad.linalg.svdvals(p)), want.numpy(),
                                   equal_nan=True)
