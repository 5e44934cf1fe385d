"""PyTorch's conventions in the math and linalg ops where the differential suite found
plugrad differing (special values, gradient rules, refusals, dtypes), checked against torch
on every backend; each case is one the suite's random draws reach only by chance, or that
its samples leave out (``put``'s repeated places have no gradcheck)."""
import math
import warnings

import numpy as np
import pytest

import plugrad

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf


def _np(t):
    if isinstance(t, plugrad.Tensor):
        return np.asarray(t.detach().cpu().tolist(), dtype=np.float64).reshape(tuple(t.shape))
    return t.detach().double().numpy()


def _same(ours, theirs, where, rtol=1e-7):
    assert tuple(ours.shape) == tuple(theirs.shape), f"{where}: shape"
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], \
        f"{where}: dtype {ours.dtype} vs {theirs.dtype}"
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=1e-12, equal_nan=True,
                               err_msg=where)


def _pair(device, *arrays, grad=False, dtype="float64"):
    ours = [plugrad.tensor(a, dtype=getattr(plugrad, dtype) if a.dtype.kind == "f" else None,
                           device=device, requires_grad=grad and a.dtype.kind == "f")
            for a in arrays]
    theirs = [torch.tensor(a, dtype=getattr(torch, dtype) if a.dtype.kind == "f" else None,
                           requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    return ours, theirs


def _grads(M, out, leaves, order=1):
    w = M.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)),
                 dtype=out.dtype, device=getattr(out, "device", None))
    gs = M.autograd.grad((out * w).sum(), leaves, create_graph=order > 1)
    if order == 1:
        return gs
    return M.autograd.grad(sum((g * g).sum() for g in gs), leaves, allow_unused=True)


# ---------------------------------------------------------------------- math
def test_trapezoid_special_values_and_integer_sums(device):
    y = np.array([[INF, 1.0, -INF], [1.0, NAN, 2.0], [INF, INF, INF]])
    (yo,), (yt,) = _pair(device, y)
    for f in (lambda M, a: M.trapezoid(a), lambda M, a: M.trapezoid(a, dx=0.5),
              lambda M, a: M.trapz(a, M.tensor([0.0, 1.0, 3.0], dtype=a.dtype,
                                                device=getattr(a, "device", None))),
              lambda M, a: M.cumulative_trapezoid(a)):
        _same(f(plugrad, yo), f(torch, yt), "trapezoid specials")
    big = np.array([[2 ** 31 - 1, 2 ** 31 - 1, 5]], dtype=np.int32)  # int32 wrap-around
    (bo,), (bt,) = _pair(device, big)
    _same(plugrad.trapezoid(bo), torch.trapezoid(bt), "trapezoid int32")
    _same(plugrad.trapezoid(bo, dx=0.5), torch.trapezoid(bt, dx=0.5), "trapezoid int32 dx")


def test_mvlgamma_outside_the_old_domain(device):
    x = np.array([0.0, -0.0, -1.0, 0.5, 1.2, -2.5, INF])
    (xo,), (xt,) = _pair(device, x, grad=True)
    for p in (1, 3):
        yo, yt = plugrad.mvlgamma(xo, p), torch.mvlgamma(xt, p)
        _same(yo, yt, f"mvlgamma p={p}")
        _same(_grads(plugrad, yo, [xo])[0], _grads(torch, yt, [xt])[0], f"grad p={p}")


def test_i0_half_overflows_to_inf(device):
    (xo,), (xt,) = _pair(device, np.array([65504.0, 100.0, -12.0]), dtype="float16")
    _same(plugrad.i0(xo), torch.i0(xt), "i0 float16", rtol=1e-3)


def test_put_repeated_place_gradient_is_pytorchs(device):
    x, src = np.arange(6.0).reshape(2, 3), np.array([10.0, 20.0, 30.0])
    for accumulate in (False, True):
        (xo, so), (xt, st) = _pair(device, x, src, grad=True)
        io, it = plugrad.tensor([0, 5, -1], device=device), torch.tensor([0, 5, -1])
        yo, yt = xo.put(io, so, accumulate), xt.put(it, st, accumulate)
        _same(yo, yt, "put forward")
        for go, gt in zip(_grads(plugrad, yo, [xo, so]), _grads(torch, yt, [xt, st])):
            _same(go, gt, f"put grad accumulate={accumulate}")


def test_renorm_gradient_of_an_unscaled_nan_slice(device):
    x = np.array([[3.0, 4.0, 0.5], [NAN, 1.0, 2.0], [0.1, 0.2, 0.3]])
    (xo,), (xt,) = _pair(device, x, grad=True)
    yo, yt = plugrad.renorm(xo, 2, 0, 1.0), torch.renorm(xt, 2, 0, 1.0)
    _same(yo, yt, "renorm")
    _same(_grads(plugrad, yo, [xo])[0], _grads(torch, yt, [xt])[0], "renorm grad")


def test_cov_of_integers_sums_in_int64_first(device):
    big = np.array([[-1, -2, -2 ** 63, 0, -2 ** 63], [2, -2 ** 63, 2, 0, -2 ** 63]])
    (xo,), (xt,) = _pair(device, big)
    _same(plugrad.cov(xo), torch.cov(xt), "cov int64", rtol=1e-6)


def test_scalars_of_integral_products(device):
    i, b = np.ones((2, 2), dtype=np.int32), np.ones((3, 2, 2), dtype=np.int32)
    (io, bo), (it, bt) = _pair(device, i, b)
    for kw in ({}, {"beta": 0.5}, {"alpha": 0.5}):  # cast to the integral dtype
        _same(plugrad.addbmm(io, bo, bo, **kw), torch.addbmm(it, bt, bt, **kw), f"addbmm {kw}")
    with pytest.raises(RuntimeError, match="addr.*beta must not be a floating point"):
        plugrad.addr(io, bo[0, 0], bo[0, 0], beta=0.5)


def test_histogram_refuses_non_finite_ranges(device):
    for x in ([0.0, INF, 1.0], [NAN, 1.0]):
        with pytest.raises(RuntimeError, match="range .* is not finite"):
            plugrad.histogram(plugrad.tensor(x, device=device), 3)
        with pytest.raises(RuntimeError, match="is not finite"):
            torch.histogram(torch.tensor(x), 3)


# ---------------------------------------------------------------------- linalg
def _spd_factor(n, upper):
    a = np.random.default_rng(n).standard_normal((n, n))
    L = np.linalg.cholesky(a @ a.T + n * np.eye(n))
    return L.T.copy() if upper else L


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_gradients_are_pytorchs(device, upper):
    """PyTorch's rules give the factor's other triangle a gradient too (first and second
    order)."""
    L = _spd_factor(3, upper)
    B = np.random.default_rng(1).standard_normal((3, 2))
    for order in (1, 2):
        (bo, lo), (bt, lt) = _pair(device, B, L, grad=True)
        yo, yt = plugrad.cholesky_solve(bo, lo, upper), torch.cholesky_solve(bt, lt, upper)
        _same(yo, yt, "cholesky_solve")
        for go, gt in zip(_grads(plugrad, yo, [bo, lo], order),
                          _grads(torch, yt, [bt, lt], order)):
            _same(go, gt, f"cholesky_solve grad order {order}", rtol=1e-6)
        (lo,), (lt,) = _pair(device, L, grad=True)
        yo, yt = plugrad.cholesky_inverse(lo, upper), torch.cholesky_inverse(lt, upper)
        _same(yo, yt, "cholesky_inverse")
        _same(_grads(plugrad, yo, [lo], order)[0], _grads(torch, yt, [lt], order)[0],
              f"cholesky_inverse grad order {order}", rtol=1e-6)


def test_triangular_solves_read_only_their_triangle(device):
    A = np.array([[2.0, INF, NAN], [1.0, 3.0, INF], [0.5, -1.0, 4.0]])
    B = np.array([[NAN, 1.0], [2.0, -1.0], [1.0, 0.5]])
    (ao, bo), (at, bt) = _pair(device, A, B)
    _same(plugrad.linalg.solve_triangular(ao, bo, upper=False),
          torch.linalg.solve_triangular(at, bt, upper=False), "lower, NaN in b's first row")
    _same(plugrad.triangular_solve(bo, ao.mT.contiguous(), upper=True)[0],
          torch.triangular_solve(bt, at.mT.contiguous(), upper=True)[0], "upper")


def test_orgqr_with_an_infinite_reflector_entry(device):
    A = np.array([[0.5, 1.0], [INF, 0.3], [0.2, -0.4]])
    tau = np.array([1.2, 0.7])
    (ao, to), (at, tt) = _pair(device, A, tau)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(plugrad.orgqr(ao, to), torch.orgqr(at, tt), "orgqr")


def test_lstsq_residuals_require_grad(device):
    A = np.random.default_rng(2).standard_normal((4, 2))
    B = np.random.default_rng(3).standard_normal((4, 1))
    for driver in (None, "gelsd"):
        (ao, bo), (at, bt) = _pair(device, A, B, grad=True)
        ro = plugrad.linalg.lstsq(ao, bo, driver=driver)
        rt = torch.linalg.lstsq(at, bt, driver=driver)
        assert [t.requires_grad for t in ro] == [t.requires_grad for t in rt], driver
        _same(ro.residuals, rt.residuals, f"residuals {driver}")


def test_half_renorm_and_addbmm_compute_in_float32(device):
    """PyTorch's norms and products of float16 accumulate in float32, rounded once."""
    x = np.array([[300.0, 400.0, -250.0], [0.5, 0.25, 0.125]])  # a row norm over 65504
    (xo,), (xt,) = _pair(device, x, dtype="float16")
    _same(plugrad.renorm(xo, 2, 0, 1.0), torch.renorm(xt, 2, 0, 1.0), "renorm f16", rtol=1e-3)
    i = np.array([[-INF, 1.0], [2.0, 3.0]])
    b1, b2 = np.full((2, 2, 2), 300.0), np.full((2, 2, 2), 200.0)  # 120000 overflows f16
    (io, b1o, b2o), (it, b1t, b2t) = _pair(device, i, b1, b2, dtype="float16")
    _same(plugrad.addbmm(io, b1o, b2o, alpha=0.25), torch.addbmm(it, b1t, b2t, alpha=0.25),
          "addbmm f16", rtol=1e-3)
