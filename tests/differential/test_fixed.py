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


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64"])
@pytest.mark.parametrize("reduction", ["none", "sum"])
def test_integer_hinge_embedding_loss_stays_integer(device, dtype, reduction):
    """PyTorch computes an integer input's hinge loss in its dtype (the margin cast to it,
    uint8 wrapping); the sum is int64. plugrad promoted to float32."""
    x, t = [[3, -2, 0], [1, 5, 2]], [[1, -1, 1], [-1, -1, 1]]
    if dtype == "uint8":
        x = [[3, 2, 0], [1, 5, 2]]
    got = F.hinge_embedding_loss(plugrad.tensor(x, dtype=getattr(plugrad, dtype), device=device),
                                 plugrad.tensor(t, device=device), margin=1.5,
                                 reduction=reduction)
    want = torch.nn.functional.hinge_embedding_loss(
        torch.tensor(x, dtype=getattr(torch, dtype)), torch.tensor(t), margin=1.5,
        reduction=reduction)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(host(got), want.numpy())


def _ints(shape, dtype, seed):
    """Small integers with the dtype's extremes at both ends (wraparound must agree)."""
    info = np.iinfo(dtype)
    v = np.random.default_rng(seed).integers(max(info.min, -5), 6, size=shape)
    v.flat[0], v.flat[-1] = info.max, info.min
    return v.astype(dtype)


_INTEGER_NN = {
    "conv1d": (lambda L, a: L.conv1d(a[0], a[1], a[2], stride=2, padding=1),
               [(1, 2, 7), (3, 2, 2), (3,)], ("uint8", "int8", "int32", "int64")),
    "conv2d": (lambda L, a: L.conv2d(a[0], a[1], None, padding=1, groups=2),
               [(1, 2, 5, 5), (4, 1, 3, 3)], ("uint8", "int16", "int32", "int64")),
    "conv3d": (lambda L, a: L.conv3d(a[0], a[1], a[2], stride=2, padding=1, groups=2),
               [(1, 2, 4, 4, 4), (2, 1, 2, 2, 2), (2,)], ("uint8", "int32", "int64")),
    "conv_transpose2d": (lambda L, a: L.conv_transpose2d(a[0], a[1], a[2], stride=2,
                                                         padding=1),
                         [(1, 2, 4, 4), (2, 3, 3, 3), (3,)], ("int64",)),
    "conv_transpose3d": (lambda L, a: L.conv_transpose3d(a[0], a[1], a[2], stride=2),
                         [(1, 2, 3, 3, 3), (2, 3, 2, 2, 2), (3,)], ("int64",)),
    "max_pool2d": (lambda L, a: L.max_pool2d(a[0], 3, 2, 1, return_indices=True),
                   [(1, 2, 5, 5)], ("uint8", "int8", "int32", "int64")),
    "avg_pool1d": (lambda L, a: L.avg_pool1d(a[0], 3, 2, 1), [(1, 2, 7)], ("int64",)),
    "avg_pool2d": (lambda L, a: L.avg_pool2d(a[0], 2, ceil_mode=True,
                                             count_include_pad=False), [(1, 2, 5, 5)],
                   ("int64",)),
    "avg_pool3d": (lambda L, a: L.avg_pool3d(a[0], 2, padding=1), [(1, 1, 3, 4, 4)],
                   ("int64",)),
    "l1_loss": (lambda L, a: L.l1_loss(a[0], a[1], reduction="sum"), [(2, 3), (2, 3)],
                ("uint8", "int32", "int64")),
}


@pytest.mark.parametrize("name", sorted(_INTEGER_NN))
def test_integer_convolutions_and_pools(device, name):
    """PyTorch's CPU kernels compute integer convolutions (GEMM in the dtype, wrapping),
    max pools (padding below the dtype's minimum), int64 average pools (C++ integer
    division) and integer l1 sums: the same values and dtypes (plugrad raised
    DTypeError)."""
    fn, shapes, dtypes = _INTEGER_NN[name]
    for dtype in dtypes:
        vals = [_ints(s, dtype, i) for i, s in enumerate(shapes)]
        want = fn(torch.nn.functional, [torch.from_numpy(v.copy()) for v in vals])
        got = fn(F, [plugrad.tensor(v, device=device) for v in vals])
        for w, g in zip(*((want, got) if isinstance(want, tuple) else ((want,), (got,)))):
            assert g.dtype.name == str(w.dtype).removeprefix("torch.")
            np.testing.assert_array_equal(host(g), w.numpy())


@pytest.mark.parametrize("dilation", [2, (1, 2)])
def test_dilated_integer_convolution_is_int64_only(device, dilation):
    """PyTorch's dilated convolution kernel (slow_conv_dilated) has no int32 kernel."""
    x, w = plugrad.ones(1, 2, 5, 5, dtype=plugrad.int32, device=device), \
        plugrad.ones(3, 2, 2, 2, dtype=plugrad.int32, device=device)
    with pytest.raises(plugrad.DTypeError, match="dilated"):
        F.conv2d(x, w, dilation=dilation)
    got = F.conv2d(x.long(), w.long(), dilation=dilation)
    want = torch.nn.functional.conv2d(torch.ones(1, 2, 5, 5, dtype=torch.int64),
                                      torch.ones(3, 2, 2, 2, dtype=torch.int64),
                                      dilation=dilation)
    np.testing.assert_array_equal(host(got), want.numpy())


def test_integer_trunc_division_is_exact(device):
    """div(rounding_mode='trunc') of int64 went through a float64 quotient (wrong past
    2**53, and a garbage value for a zero divisor instead of an error)."""
    a, b = [-9223372036854775805, 2 ** 62 + 1, -7, 7, -8, 0], [4, 3, 2, -2, -2, -3]
    got = plugrad.div(plugrad.tensor(a, device=device), plugrad.tensor(b, device=device),
                      rounding_mode="trunc")
    want = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode="trunc")
    np.testing.assert_array_equal(host(got), want.numpy())
    with pytest.raises(ZeroDivisionError):
        plugrad.div(plugrad.tensor([1, 2], device=device), 0, rounding_mode="trunc")


@pytest.mark.parametrize("x, t", [([0.5, math.nan], [0.0, 1.0]), ([0.5, 0.2], [math.nan, 1.0]),
                                  ([0.5, 0.2], [1.5, 1.0]), ([0.5, 0.2], [-0.5, 1.0])])
def test_binary_cross_entropy_checks_target_and_nan(device, x, t):
    """PyTorch's kernel checks 0 <= v <= 1 for the target as for the input, and NaN fails
    it; plugrad checked the input only, and NaN passed its min/max comparison."""
    with pytest.raises(RuntimeError, match="should be between 0 and 1"):
        torch.nn.functional.binary_cross_entropy(torch.tensor(x), torch.tensor(t))
    with pytest.raises(RuntimeError, match="should be between 0 and 1"):
        F.binary_cross_entropy(plugrad.tensor(x, device=device), plugrad.tensor(t, device=device))


@pytest.mark.parametrize("name, kw", [("smooth_l1_loss", {"beta": 0.5}),
                                      ("huber_loss", {"delta": 0.5})])
def test_smooth_l1_and_huber_gradients_at_overflow_and_kinks(device, name, kw):
    """PyTorch's piecewise gradient: +-slope where |x - t| > beta even when (x - t)**2
    overflows (the composed where sent 0 * inf = NaN there), s / beta for the second
    derivative at x == t (the |d| kink gave 0) and 0 at the joins and at NaN."""
    x = [1.0, 1.7e308, 2.0, math.inf, 0.25, math.nan, 1.5]
    t = [1.0, -1.0, 1.5, 0.0, -0.25, 0.0, 1.0]
    res = []
    for lib, fn in ((torch, getattr(torch.nn.functional, name)), (plugrad, getattr(F, name))):
        dev = {} if lib is torch else {"device": device}
        xs = lib.tensor(x, dtype=lib.float64, requires_grad=True, **dev)
        ts = lib.tensor(t, dtype=lib.float64, requires_grad=True, **dev)
        loss = fn(xs, ts, reduction="sum", **kw)
        gx, gt = lib.autograd.grad(loss, (xs, ts), create_graph=True)
        ggx, ggt = lib.autograd.grad((gx * lib.arange(7, dtype=lib.float64, **dev)).sum(),
                                     (xs, ts))
        res.append([np.asarray(v.detach().cpu().numpy()) for v in (loss, gx, gt, ggx, ggt)])
    for want, got in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_margin_losses_skip_nan_and_minus_inf_terms(device):
    """PyTorch's multi_margin / multilabel_margin kernels add a term only where
    ``z > 0``: a NaN or -inf ``z`` adds nothing (the composed ``where(z > 0, z, z * 0)``
    made it NaN), and an inf one gives inf, not ``inf * 0``."""
    x = [[0.2, math.nan, 0.03, 4e307], [4e307, 0.002, -0.18, math.nan],
         [0.1, -math.inf, math.inf, -0.1]]
    for name, target, kw in (("multi_margin_loss", [3, 3, 0], {"p": 2, "reduction": "none"}),
                             ("multi_margin_loss", [1, 0, 2], {}),
                             ("multilabel_margin_loss", [[3, -1, 0, 0], [1, 2, -1, 0],
                                                         [0, -1, 0, 0]],
                              {"reduction": "none"})):
        want = getattr(torch.nn.functional, name)(torch.tensor(x, dtype=torch.float64),
                                                  torch.tensor(target), **kw)
        xs = plugrad.tensor(x, dtype=plugrad.float64, device=device, requires_grad=True)
        got = getattr(F, name)(xs, plugrad.tensor(target, device=device), **kw)
        np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-12, equal_nan=True)


def test_poisson_nll_full_masks_the_stirling_term_as_pytorch(device):
    """PyTorch adds the Stirling term of the raw target masked_fill(target <= 1, 0): a -inf
    target adds 0 (the 0 * inf of plugrad's masking gave NaN), a NaN target keeps NaN, and
    the gradient at targets <= 0 is that term's own NaN."""
    x = [[0.5, 2.5, 1.0], [0.6, 1.2, 1.2]]
    t = [[2.5, -math.inf, math.nan], [-1e308, 4.9e-324, 3.0]]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        xs = lib.tensor(x, dtype=lib.float64, requires_grad=True, **dev)
        ts = lib.tensor(t, dtype=lib.float64, requires_grad=True, **dev)
        loss = lib.nn.functional.poisson_nll_loss(xs, ts, log_input=False, full=True,
                                                  reduction="none")
        gx, gt = lib.autograd.grad(loss.sum(), (xs, ts))
        res.append([np.asarray(v.detach().cpu().numpy()) for v in (loss, gx, gt)])
    for want, got in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", ["adaptive_avg_pool3d", "avg_pool3d"])
def test_avg_pools_3d_sum_as_pytorch_loop(device, dtype, name):
    """PyTorch's adaptive_avg_pool3d adds each window's taps one by one in the input's
    dtype (float16 too) and divides by kT, kH, kW in turn: a half window holding 65504 and
    16384 is inf there (plugrad's float32 sum gave 2048), and huge values cancel in its
    order."""
    big = {"float16": 65504.0, "float32": 3.4e38, "float64": 1.7e308}[dtype]
    v = np.random.default_rng(3).uniform(-2, 2, (1, 2, 3, 4, 3))
    v[0, 0, 1, 0, 0], v[0, 0, 2, 0, 0], v[0, 1, 0, 0, 0], v[0, 1, 0, 0, 1] = \
        big, big / 4, big, -big
    if name == "avg_pool3d":
        if dtype == "float16":
            pytest.skip("PyTorch has no float16 avg_pool3d on CPU")
        args, v[0, 1, 0, 1, 0] = ((2,), {"stride": 1, "padding": 1}), big / 2
    else:
        args = (((2, 3, 2),), {})
    want = getattr(torch.nn.functional, name)(torch.tensor(v, dtype=getattr(torch, dtype)),
                                              *args[0], **args[1])
    got = getattr(F, name)(plugrad.tensor(v, dtype=getattr(plugrad, dtype), device=device),
                           *args[0], **args[1])
    np.testing.assert_array_equal(host(got), want.numpy())


@pytest.mark.parametrize("name", ["batch_norm", "instance_norm", "group_norm"])
def test_half_norms_compute_statistics_in_float32(device, name):
    """PyTorch's CPU norms compute half tensors in float32: a variance of 1.8e8 (values
    16384 apart) overflowed plugrad's half statistics to inf, and every output was the bias."""
    v = [[[0.31, -1.06, 16384.0, 2.0], [-3.0, 0.5, -16376.0, 1.0]]] * 2
    w, b = [3.0, 0.73], [0.38, -1.5]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        x = lib.tensor(v, dtype=lib.float16, **dev)
        wt, bt = lib.tensor(w, dtype=lib.float16, **dev), lib.tensor(b, dtype=lib.float16, **dev)
        fn = getattr(lib.nn.functional, name)
        if name == "batch_norm":
            out = fn(x, None, None, wt, bt, training=True)
        elif name == "instance_norm":
            out = fn(x, weight=wt, bias=bt)
        else:
            out = fn(x, 1, wt, bt)
        res.append(np.asarray(out.detach().cpu().numpy(), dtype=np.float64))
    np.testing.assert_allclose(res[1], res[0], rtol=2e-3, atol=2e-3)


def test_batch_norm_is_x_times_alpha_plus_beta(device):
    """PyTorch's kernel computes x * alpha + beta (alpha = invstd * weight, beta = bias -
    mean * alpha): with an infinite weight beta is infinite too, so finite inputs give NaN
    (plugrad's (x - mean) * invstd * weight + bias gave -inf)."""
    v, w, b = [[-0.31, -0.41], [1.5, -0.5], [0.67, 0.98]], [0.5, -math.inf], [-1.0, 1.59]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        out = lib.nn.functional.batch_norm(lib.tensor(v, **dev), None, None,
                                           lib.tensor(w, **dev), lib.tensor(b, **dev),
                                           training=True)
        res.append(np.asarray(out.detach().cpu().numpy()))
    np.testing.assert_allclose(res[1], res[0], rtol=1e-5, equal_nan=True)


def test_prelu_second_derivatives_at_zero(device):
    """PyTorch's prelu double backward switches on x >= 0: at x == 0 the mixed second
    derivatives are 0 (the composed where gave the w * x branch's g)."""
    x, w = [[0.0, 1.0, -2.0], [0.0, -1.0, math.nan]], [0.25, -0.5, 1.5]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        xs = lib.tensor(x, dtype=lib.float64, requires_grad=True, **dev)
        ws = lib.tensor(w, dtype=lib.float64, requires_grad=True, **dev)
        y = lib.nn.functional.prelu(xs, ws)
        gx, gw = lib.autograd.grad((y * y).sum(), (xs, ws), create_graph=True)
        ggx, ggw = lib.autograd.grad((gx * 3).sum() + (gw * 2).sum(), (xs, ws))
        res.append([np.asarray(v.detach().cpu().numpy()) for v in (y, gx, gw, ggx, ggw)])
    for want, got in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_hardswish_gradient_at_infinities_and_nan(device):
    """PyTorch's hardswish gradient is 1 at inf and NaN and 0 at -inf; the composed where
    gave NaN (0 times the quadratic piece's gradient at inf)."""
    v = [-3.0, 3.0, math.inf, -math.inf, math.nan, 1.0, -4.0, 2.999]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        x = lib.tensor(v, dtype=lib.float64, requires_grad=True, **dev)
        y = lib.nn.functional.hardswish(x)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        res.append([np.asarray(t.detach().cpu().numpy()) for t in (y, g, gg)])
    for want, got in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_kl_div_target_gradient_is_xlogys(device):
    """PyTorch's kl_div is xlogy(t, t) - t * x: the target's gradient at t == 0 is xlogy's
    NaN (0 / 0), where plugrad's masked log gave -x."""
    x, t = [[-1.6, -1.2, 0.3], [-2.3, -1.0, -0.5]], [[0.5, 0.0, 1.5], [0.0, -0.0, 0.33]]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        xs = lib.tensor(x, dtype=lib.float64, requires_grad=True, **dev)
        ts = lib.tensor(t, dtype=lib.float64, requires_grad=True, **dev)
        loss = lib.nn.functional.kl_div(xs, ts, reduction="batchmean")
        res.append([np.asarray(v.detach().cpu().numpy())
                    for v in (loss, *lib.autograd.grad(loss, (xs, ts)))])
    for want, got in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_logsigmoid_kernel_values_and_gradients(device):
    """PyTorch's logsigmoid is min(x, 0) - log1p(exp(-|x|)) with its own backward and
    double backward: NaN gradients at NaN (-softplus(-x) gave 0) and +0.0 at large x."""
    v = [math.nan, math.inf, -math.inf, 0.0, -800.0, 800.0, 1.0, -2.5]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        x = lib.tensor(v, dtype=lib.float64, requires_grad=True, **dev)
        y = lib.nn.functional.logsigmoid(x)
        g, = lib.autograd.grad((y * 2).sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * 3).sum(), x)
        res.append([np.asarray(t.detach().cpu().numpy()) for t in (y, g, gg)])
    for want, got in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
        zero = want == 0
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
