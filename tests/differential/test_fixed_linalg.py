"""Regression cases for divergences of the linear-algebra ops that the differential suite
found and that were fixed (issue 16): each compares plugrad with torch directly, on every
built-in device, at special values (NaN, inf, subnormal and overflowing entries)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import plugrad

torch = pytest.importorskip("torch", reason="these cases compare with PyTorch, which is "
                            "not installed")
from .pairs import host, pair as _pair  # noqa: E402


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


def _grads_as_torch(device, fn, values, order=1, rtol=1e-6, atol=1e-9):
    """The gradients (to ``order``) of ``sum(w * fn(lib, *inputs))`` (the floating outputs
    that require grad, fixed weights) in plugrad and torch, compared NaN for NaN (with
    the differential suite's gradient tolerances)."""
    ps, ts = zip(*(_pair(device, v, requires_grad=True) for v in values))
    outs = {}
    for lib, xs in ((plugrad, ps), (torch, ts)):
        out = fn(lib, *xs)
        out = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
               if o.requires_grad]
        for k in range(order):
            kw = {"device": device} if lib is plugrad else {}
            loss = sum((o * lib.tensor(np.cos(np.arange(o.numel()) + k).reshape(
                tuple(o.shape)), **kw)).sum() for o in out)
            gs = lib.autograd.grad(loss, xs, create_graph=k + 1 < order, allow_unused=True)
            out = [g for g in gs if g is not None and (k + 1 == order or g.requires_grad)]
        outs[lib.__name__] = out
    assert len(outs["plugrad"]) == len(outs["torch"])
    for got, want in zip(outs["plugrad"], outs["torch"]):
        np.testing.assert_allclose(host(got), want.detach().numpy(), rtol=rtol, atol=atol,
                                   equal_nan=True)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("case", [
    ("solve_triangular", dict(upper=False, left=False),
     [[-_BIG / 4, _BIG, 0.68], [_INF, -_INF, -0.19], [_BIG / 4, 0.17, _BIG / 2]],
     [[-0.11, -1.79, _NAN], [1.70, _BIG / 4, 1.75]]),
    ("triangular_solve", dict(upper=True),
     [[_NAN, 1.93], [-1.35, -_BIG / 4], [_BIG / 2, 1.80]],
     [[1.09, -1.93, -0.50], [-1.03, _NAN, _INF], [-_BIG, 1.67, 3.24]]),
    ("triangular_solve", dict(upper=False, transpose=True),
     [[-_INF], [1.49], [-0.91]], [[3.73, 0.81, -5e-324], [0.72, 4.0, 1.0], [0.5, 2.5, 3.0]]),
    ("solve_triangular", dict(upper=True, unitriangular=True),
     [[1.0, 2.0, _INF], [0.0, 3.0, 1.0], [1e300, 1.0, 2.0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
])
def test_triangular_solve_gradients_as_torch(device, case, order):
    """PyTorch's rule (linalg_solve_triangular_backward: gB = A^-T g by the other
    triangle's solve, gA = -gB X^T in A's triangle) gives its NaN / inf at special values,
    also twice differentiated."""
    name, kw, first, second = case

    def fn(lib, x, y):
        if name == "triangular_solve":
            return lib.triangular_solve(x, y, **kw)[0]
        return lib.linalg.solve_triangular(x, y, **kw)

    _grads_as_torch(device, fn, [first, second], order)


def _lu_factor(lib, A):
    return lib.linalg.lu_factor(A)[0]


def _linalg_lu(lib, A):
    return lib.linalg.lu(A)[1:]


def _lu_solve(lib, A, B):
    return lib.linalg.lu_solve(*lib.linalg.lu_factor(A), B)


def _lu_solve_old(lib, A, B):
    return lib.lu_solve(B, *lib.linalg.lu_factor(A))


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("fn, values", [
    (_lu_factor, [[[[-_INF, -0.04, 0.74], [-1.5, 2.30, -1.08], [0.50, 0.21, 4.95]],
                   [[1.78, 0.49, 1.0], [0.60, 3.69, -1.62], [-0.93, 0.0, 3.0]]]]),
    (_lu_factor, [[[3.69, -_INF, _BIG / 2], [_BIG / 4, 4.79, _BIG / 4],
                   [-0.56, _BIG / 4, 2.57]]]),
    (_lu_factor, [[[_INF, 2.5, 0.79], [1.07, 1.43, 1000.0], [2.5, -1.18, -0.23],
                   [0.87, -0.29, -0.0]]]),                               # tall
    (_lu_factor, [[[0.36, -1.28, 0.39], [_INF, 1.17, -0.76]]]),          # wide
    (_linalg_lu, [[[[_BIG / 4, _BIG / 4, 0.34], [_BIG / 2, 2.79, 1.57], [_BIG, -0.75, 2.66]],
                   [[_BIG / 2, _BIG, -0.65], [0.48, 4.79, 1.48], [_INF, -0.26, 4.72]]]]),
    (_linalg_lu, [[[_NAN, 1.0, 2.0], [0.5, 3.0, 1.0], [4.0, 1.0, 0.5], [1.0, 2.0, 3.0]]]),
    (_linalg_lu, [[[1.0, _INF, 2.0, 0.5], [3.0, 1.0, 1.0, -1.0]]]),
    (_lu_solve, [[[2.99, -0.27, _BIG], [0.0, 3.44, -1.46], [1.82, 2.2e-308, 3.34]],
                 [[_NAN, 1.0], [-0.01, 0.5], [0.96, 1.61]]]),
    (_lu_solve_old, [[[1003.0, -0.39, -0.5], [1.65, 2.59, -_BIG], [1.34, 1.15, 4.60]],
                     [[1.73, 1.99], [5e-324, 0.0], [1.04, 1.99]]]),
])
def test_lu_family_gradients_as_torch(device, fn, values, order):
    """PyTorch's rules (lu_factor_ex_backward / linalg_lu_backward: triangular solves with the
    unpacked factors; linalg_lu_solve_LU) give its NaN / inf at non-finite and huge
    factors, also twice differentiated."""
    _grads_as_torch(device, fn, values, order)


@pytest.mark.parametrize("A, tau", [
    ([[-0.10, 1.63, -1.15], [1.33, 0.78, 2.5], [1.43, -_INF, -1.68], [0.78, 0.57, 0.0]],
     [-0.0, 0.86, 1.19]),                                   # tau == 0: H_1 not applied
    ([[1.0, 0.0], [_INF, 1.0], [2.0, 3.0]], [0.0, 0.5]),   # ... its column still scaled
    ([[1.0, 0.0], [2.0, 1.0], [0.0, _INF]], [0.5, 0.5]),   # v's trailing zero row
    ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, _INF, 2.0], [0.0, 0.0, 0.0]], [0.5, 0.3, 0.0]),
    ([[1.0, 0.0, 0.0], [2.0, 1.0, 0.0], [_NAN, 0.0, 2.0], [0.0, 0.0, 0.0]], [0.5, 0.3, 0.2]),
])
def test_householder_product_special_values_as_lapack(device, A, tau):
    """LAPACK's dorg2r/dlarf skip a reflector with tau == 0 and the rows after v's last
    nonzero and the columns after C's last nonzero one: an inf there leaves 0, not NaN."""
    (pa, ta), (pt, tt) = _pair(device, A), _pair(device, tau)
    np.testing.assert_allclose(host(plugrad.linalg.householder_product(pa, pt)),
                               torch.linalg.householder_product(ta, tt).numpy(), rtol=1e-12,
                               equal_nan=True)


@pytest.mark.parametrize("A, n", [
    ([[[3.47, 1000.0], [1.0, -4.5]], [[-_INF, -0.81], [0.41, 3.0]]], 3),
    ([[[-_INF, _INF], [_INF, 3.12]], [[-3.02, -0.13], [_INF, 3.44]]], 3),
    ([[1.0, _INF], [_NAN, 2.0]], 1),
])
def test_matrix_power_association_as_torch(device, A, n):
    """PyTorch multiplies A^3 as (A A) A (A (A A) gives -inf where it has NaN); n == 1 is a
    copy, not the input itself."""
    p, t = _pair(device, A)
    got = plugrad.linalg.matrix_power(p, n)
    np.testing.assert_allclose(host(got), torch.linalg.matrix_power(t, n).numpy(),
                               rtol=1e-12, equal_nan=True)
    assert n != 1 or got is not p


@pytest.mark.parametrize("fn, values", [
    (lambda lib, A, B: lib.linalg.tensorsolve(A, B),
     [[[[4.18, -0.07, -0.44, -1.22], [-1.5, 2.19, _INF, 1.44]],
       [[5e-324, -0.07, -_BIG, 1.16], [-2.2e-308, -5e-324, 0.18, -_INF]]],
      [[-0.02, 0.0], [-5e-324, -0.43]]]),
    (lambda lib, A, B: lib.linalg.solve(A, B),
     [[[4.18, -0.07, -0.44, -1.22], [-1.5, 2.19, _INF, 1.44],
       [5e-324, -0.07, -_BIG, 1.16], [-2.2e-308, -5e-324, 0.18, -_INF]],
      [[-0.02], [0.0], [-5e-324], [-0.43]]]),
])
def test_solve_gradient_at_special_values_as_torch(device, fn, values):
    """PyTorch's backward solves A^T gB = g with the forward's LU factors of A (P L^-T U^-T
    g): a fresh factorisation of A^T spreads a NaN into other entries."""
    _grads_as_torch(device, fn, values, 1)


@pytest.mark.parametrize("A, B, dtype", [
    ([[-_BIG, -1.07], [_BIG / 2, -1.59], [-1.73, 1.41], [-1.52, 1.25]],
     [[-1.23], [1.0], [-0.04], [1.12]], "float64"),         # scaled: rank 1
    ([[-0.98, 0.47], [-1.72, -3.4e38], [-3.4e38, 1.16], [-8.5e37, -0.24]],
     [[1.7e38], [1.75], [-1.15], [-1.98]], "float32"),      # sv overflow unscaled: rank 2
    ([[1.61, -0.50], [-0.0018, 1.0], [_INF, 0.20], [1.88, 100.0]],
     [[1.0], [-1.66], [0.0], [0.16]], "float32"),           # an inf: gelsy's rank 1
    ([[-1.46, _INF], [-1.46, -_INF], [-_INF, -1.80], [1.66, -1.33]],
     [[-1.0], [2.0], [-1.58], [1.22]], "float64"),
    ([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]], [[1.0], [2.0], [3.0]], "float64"),  # rank 1
])
def test_lstsq_rank_as_gelsy(device, A, B, dtype):
    """gelsy scales a matrix near the overflow threshold before its rank-revealing QR (the
    unscaled singular values overflowed: rank 0), and reports rank 1 at inf / NaN."""
    (pa, ta), (pb, tb) = _pair(device, A, dtype), _pair(device, B, dtype)
    assert int(plugrad.linalg.lstsq(pa, pb).rank) == int(torch.linalg.lstsq(ta, tb).rank)
