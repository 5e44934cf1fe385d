"""plugrad.linalg's compositions (norms, matrix_power, multi_dot, cross, vecdot) and PyTorch's
top-level spellings and Tensor methods (det, inverse, svd with V, ...) against PyTorch."""
import math

import numpy as np
import pytest
import torch

import plugrad

RNG = np.random.default_rng(11)


def R(*shape):
    return RNG.standard_normal(shape)


def run(fn_p, fn_t, arrays, device, tol=1e-10, grad=True):
    """Outputs and the gradient of a weighted sum of them, plugrad vs PyTorch."""
    xp = [plugrad.tensor(a, device=device, requires_grad=grad) for a in arrays]
    xt = [torch.tensor(a, requires_grad=grad) for a in arrays]
    op, ot = fn_p(*xp), fn_t(*xt)
    op = list(op) if isinstance(op, tuple) else [op]
    ot = list(ot) if isinstance(ot, tuple) else [ot]
    for a, b in zip(op, ot):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(np.asarray(a.detach()), b.detach().numpy(), rtol=tol,
                                   atol=tol)
    if not grad:
        return
    ws = [R(*b.shape) for b in ot]
    lp = sum((a * plugrad.tensor(w, device=device)).sum() for a, w in zip(op, ws))
    lt = sum((b * torch.tensor(w)).sum() for b, w in zip(ot, ws))
    for g, h in zip(plugrad.autograd.grad(lp, xp), torch.autograd.grad(lt, xt)):
        np.testing.assert_allclose(np.asarray(g), h.numpy(), rtol=tol * 100, atol=tol * 100)


@pytest.mark.parametrize("kw", [{}, {"ord": 1}, {"ord": math.inf}, {"ord": -math.inf},
                                {"ord": 0.5, "dim": 1}, {"ord": 3, "dim": (0, 2)},
                                {"dim": -1, "keepdim": True}])
def test_vector_norm(device, kw):
    run(lambda x: plugrad.linalg.vector_norm(x, **kw),
        lambda x: torch.linalg.vector_norm(x, **kw), [R(2, 3, 4)], device)


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf])
@pytest.mark.parametrize("dim,keepdim", [((-2, -1), False), ((0, 2), True), ((2, 0), False)])
def test_matrix_norm(device, ord, dim, keepdim):
    run(lambda x: plugrad.linalg.matrix_norm(x, ord, dim, keepdim),
        lambda x: torch.linalg.matrix_norm(x, ord, dim, keepdim), [R(3, 2, 4)], device)


@pytest.mark.parametrize("shape,kw", [((2, 3, 4), {}), ((4,), {"ord": 3}),
                                      ((3, 4), {"ord": "nuc"}), ((3, 4), {"ord": 2}),
                                      ((2, 3, 4), {"dim": 1}), ((2, 3, 4), {"dim": (0, 1)})])
def test_norm_dispatch(device, shape, kw):
    run(lambda x: plugrad.linalg.norm(x, **kw), lambda x: torch.linalg.norm(x, **kw),
        [R(*shape)], device)


def test_norm_dtype_argument(device):
    x = plugrad.tensor(R(3, 3), dtype=plugrad.float32, device=device)
    assert plugrad.linalg.vector_norm(x, dtype=plugrad.float64).dtype is plugrad.float64


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(device, n):
    a = R(2, 3, 3) + 3 * np.eye(3)
    run(lambda x: plugrad.linalg.matrix_power(x, n), lambda x: torch.linalg.matrix_power(x, n),
        [a], device, grad=n != 0)
    run(lambda x: x.matrix_power(n), lambda x: x.matrix_power(n), [a], device, grad=n != 0)


def test_matrix_power_of_integers():
    a = np.array([[1, 2], [3, 4]])
    got = plugrad.matrix_power(plugrad.tensor(a), 3)
    assert got.dtype is plugrad.int64
    np.testing.assert_array_equal(np.asarray(got), np.linalg.matrix_power(a, 3))


@pytest.mark.parametrize("shapes", [[(3,), (3, 4), (4, 2)], [(2, 3), (3, 4), (4,)],
                                    [(5, 2), (2, 6), (6, 3), (3, 1)], [(3,), (3,)]])
def test_multi_dot(device, shapes):
    run(lambda *xs: plugrad.linalg.multi_dot(xs), lambda *xs: torch.linalg.multi_dot(xs),
        [R(*s) for s in shapes], device)


@pytest.mark.parametrize("sa,sb,dim", [((4, 3), (4, 3), -1), ((3, 2), (3, 1), 0),
                                       ((2, 1, 3), (1, 4, 3), -1)])
def test_cross_and_vecdot(device, sa, sb, dim):
    run(lambda a, b: plugrad.linalg.cross(a, b, dim=dim),
        lambda a, b: torch.linalg.cross(a, b, dim=dim), [R(*sa), R(*sb)], device)
    run(lambda a, b: plugrad.linalg.vecdot(a, b, dim=dim),
        lambda a, b: torch.linalg.vecdot(a, b, dim=dim), [R(*sa), R(*sb)], device)


@pytest.mark.parametrize("kw", [{}, {"hermitian": True}, {"atol": 1.0}, {"rtol": 0.3},
                                {"atol": 0.5, "rtol": 0.1}])
def test_matrix_rank(device, kw):
    a = R(2, 4, 4)
    a[1] = np.outer(R(4), R(4)) + np.outer(R(4), R(4))  # rank 2
    if kw.get("hermitian"):
        a = a @ np.swapaxes(a, -1, -2)
    got = plugrad.linalg.matrix_rank(plugrad.tensor(a, device=device), **kw)
    want = torch.linalg.matrix_rank(torch.tensor(a), **kw)
    assert got.dtype is plugrad.int64 and got.tolist() == want.tolist()


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf])
def test_cond(device, p):
    """(PyTorch cannot differentiate its cond for the non-spectral norms: values only.)"""
    run(lambda x: plugrad.linalg.cond(x, p), lambda x: torch.linalg.cond(x, p), [R(2, 3, 3)],
        device, tol=1e-9, grad=p in (None, 2, -2))


def test_cond_of_singular_matrices_is_inf(device):
    a = np.stack([np.eye(3) * 2, np.ones((3, 3))])
    for p in ("fro", 1):
        got = plugrad.linalg.cond(plugrad.tensor(a, device=device), p)
        np.testing.assert_array_equal(np.asarray(got), torch.linalg.cond(torch.tensor(a), p))


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular(device, upper, left, unit):
    kw = dict(upper=upper, left=left, unitriangular=unit)
    run(lambda a, b: plugrad.linalg.solve_triangular(a, b, **kw),
        lambda a, b: torch.linalg.solve_triangular(a, b, **kw),
        [R(2, 3, 3) + 3 * np.eye(3), R(2, 3, 2) if left else R(2, 2, 3)], device, tol=1e-9)


def test_linalg_matmul_is_matmul():
    assert plugrad.linalg.matmul is plugrad.matmul


# ---------------------------------------------------------------------- torch.* spellings
@pytest.mark.parametrize("name", ["det", "logdet", "inverse", "pinverse"])
def test_top_level_and_methods(device, name):
    a = R(2, 3, 3)
    a = a @ np.swapaxes(a, -1, -2) + np.eye(3)  # logdet: a positive determinant
    run(getattr(plugrad, name), getattr(torch, name), [a], device, tol=1e-9)
    run(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), [a], device, tol=1e-9)


def test_slogdet_and_cholesky_spellings(device):
    a = R(3, 3)
    spd = a @ a.T + np.eye(3)
    run(lambda x: plugrad.slogdet(x).logabsdet, lambda x: torch.slogdet(x).logabsdet, [a],
        device)
    run(lambda x: x.slogdet()[1], lambda x: x.slogdet()[1], [a], device)
    for upper in (False, True):
        run(lambda x: plugrad.cholesky(x, upper), lambda x: torch.cholesky(x, upper), [spd],
            device)
        run(lambda x: x.cholesky(upper=upper), lambda x: x.cholesky(upper=upper), [spd], device)


@pytest.mark.filterwarnings("ignore:torch.qr is deprecated")
@pytest.mark.parametrize("some", [True, False])
def test_torch_qr_and_svd_conventions(device, some):
    a = R(4, 3)
    q, r = plugrad.qr(plugrad.tensor(a, device=device), some)
    tq, tr = torch.qr(torch.tensor(a), some)
    assert tuple(q.shape) == tuple(tq.shape) and tuple(r.shape) == tuple(tr.shape)
    np.testing.assert_allclose(np.asarray(q @ r), a, atol=1e-12)
    u, s, v = plugrad.svd(plugrad.tensor(a, device=device), some=some)
    tu, ts, tv = torch.svd(torch.tensor(a), some=some)
    assert [tuple(x.shape) for x in (u, s, v)] == [tuple(x.shape) for x in (tu, ts, tv)]
    np.testing.assert_allclose(np.asarray(s), ts.numpy(), atol=1e-12)
    # V, not V^H: A = U diag(S) V^T
    np.testing.assert_allclose(np.asarray((u[:, :3] * s) @ v[:, :3].mT), a, atol=1e-12)
    u0, s0, v0 = plugrad.svd(plugrad.tensor(a, device=device), compute_uv=False)
    assert tuple(u0.shape) == (4, 4) and tuple(v0.shape) == (3, 3)
    assert float(u0.abs().sum()) == 0.0 and float(v0.abs().sum()) == 0.0


def test_named_results():
    a = plugrad.tensor(R(3, 3))
    assert plugrad.linalg.slogdet(a)._fields == ("sign", "logabsdet")
    assert plugrad.linalg.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert plugrad.linalg.svd(a)._fields == ("U", "S", "Vh")
    assert plugrad.linalg.qr(a)._fields == ("Q", "R")
    assert plugrad.svd(a)._fields == ("U", "S", "V")


def test_linalg_error_is_a_runtime_error():
    assert issubclass(plugrad.linalg.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError):
        plugrad.inverse(plugrad.zeros(2, 2))


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.vector_norm(m.ones(3, dtype=m.int64)),
    lambda m: m.linalg.matrix_norm(m.ones(3)),
    lambda m: m.linalg.norm(m.ones(3, 3, 3), ord=2),
    lambda m: m.linalg.cross(m.ones(4), m.ones(4)),
    lambda m: m.linalg.cross(m.ones(2, 3), m.ones(3)),
    lambda m: m.linalg.matrix_power(m.ones(3, 4), 2),
    lambda m: m.linalg.multi_dot([m.ones(3)]),
])
def test_errors_as_torch(call):
    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(plugrad)
    assert str(got.value) == str(want.value)
