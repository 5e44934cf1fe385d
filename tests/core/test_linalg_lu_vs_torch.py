"""``torch.linalg``'s LU family, matrix_exp, lstsq, the ``*_ex`` variants, tensorinv/
tensorsolve, householder_product and the Cholesky solves against PyTorch, on every backend:
values, pivots and infos, named-tuple fields, and the gradients of every floating input."""
import warnings

import numpy as np
import pytest

import plugrad
import plugrad.linalg as LA

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(154)


def _host(t):
    return np.asarray(t.tolist()) if isinstance(t, plugrad.Tensor) else t.detach().numpy()


def _flat(x):
    """The tensors of nested tuples (named tuples keep their fields checked by the caller)."""
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in _flat(item)]
    return [x]


def check(fn, arrays, device, rtol=1e-7, atol=1e-9, grad=True):
    po = [plugrad.tensor(a, device=device).requires_grad_(grad and a.dtype.kind == "f")
          for a in arrays]
    pt = [torch.tensor(a).requires_grad_(grad and a.dtype.kind == "f") for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o, t = fn(plugrad, LA, *po), fn(torch, torch.linalg, *pt)
    o, t = _flat(o), _flat(t)
    assert len(o) == len(t)
    for f in getattr(t, "_fields", ()):
        assert hasattr(o, f), f"no field {f}"
    loss_o = loss_t = 0
    for i, (a, b) in enumerate(zip(o, t)):
        assert tuple(a.shape) == tuple(b.shape), (i, tuple(a.shape), tuple(b.shape))
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (i, a.dtype, b.dtype)
        np.testing.assert_allclose(_host(a), _host(b), rtol=rtol, atol=atol,
                                   err_msg=f"output {i}")
        if grad and b.dtype.is_floating_point and b.requires_grad:
            w = RNG.uniform(0.5, 1.5, tuple(b.shape))
            loss_o = loss_o + (a * plugrad.tensor(w, device=device)).sum()
            loss_t = loss_t + (b * torch.tensor(w)).sum()
    if isinstance(loss_t, int):
        return
    loss_o.backward()
    loss_t.backward()
    for i, (a, b) in enumerate(zip(po, pt)):
        if b.requires_grad:
            got = _host(a.grad) if a.grad is not None else np.zeros(tuple(b.shape))
            np.testing.assert_allclose(got, _host(b.grad), rtol=1e-6, atol=1e-8,
                                       err_msg=f"grad of input {i}")


A = RNG.standard_normal((3, 4, 4))
B = RNG.standard_normal((3, 4, 2))
R = RNG.standard_normal((5, 3))
SPD = A @ A.transpose(0, 2, 1) + np.eye(4)
CHOL = np.linalg.cholesky(SPD)
SINGULAR = np.array([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]])
QA, TAU = (t.numpy() for t in torch.geqrf(torch.tensor(R)))

CASES = {
    "lu_factor": (lambda M, L, a: L.lu_factor(a), [A]),
    "lu_factor tall": (lambda M, L, a: L.lu_factor(a), [R]),
    "lu_factor wide": (lambda M, L, a: L.lu_factor(a), [R.T.copy()]),
    "lu_factor_ex singular": (lambda M, L, a: L.lu_factor_ex(a), [SINGULAR], {"grad": False}),
    "lu": (lambda M, L, a: L.lu(a), [A]),
    "lu tall": (lambda M, L, a: L.lu(a), [R]),
    "lu_unpack": (lambda M, L, a: M.lu_unpack(*L.lu_factor(a)), [A]),
    "torch.lu get_infos": (lambda M, L, a: M.lu(a, get_infos=True), [A]),
    "lu_solve": (lambda M, L, a, b: L.lu_solve(*L.lu_factor(a), b), [A, B]),
    "lu_solve adjoint": (lambda M, L, a, b: L.lu_solve(*L.lu_factor(a), b, adjoint=True),
                         [A, B]),
    "lu_solve right": (lambda M, L, a, b: L.lu_solve(*L.lu_factor(a), b.mT, left=False),
                       [A, B]),
    "torch.lu_solve": (lambda M, L, a, b: M.lu_solve(b, *L.lu_factor(a)), [A, B]),
    "matrix_exp": (lambda M, L, a: (L.matrix_exp(a), M.matrix_exp(a * 3), a.matrix_exp()),
                   [A], {"rtol": 1e-9}),
    "matrix_exp float32": (lambda M, L, a: L.matrix_exp(a.float()), [A],
                           {"rtol": 1e-5, "atol": 1e-5, "grad": False}),
    "lstsq": (lambda M, L, a, b: L.lstsq(a, b), [R, RNG.standard_normal((5, 2))],
              {"rtol": 1e-9}),
    "lstsq gels": (lambda M, L, a, b: L.lstsq(a, b, driver="gels"),
                   [R, RNG.standard_normal((5, 2))], {"rtol": 1e-9}),
    "lstsq gelsd": (lambda M, L, a, b: L.lstsq(a, b, driver="gelsd"),
                    [R, RNG.standard_normal((5, 2))], {"rtol": 1e-9}),
    "lstsq wide vector": (lambda M, L, a, b: L.lstsq(a, b, driver="gelss"),
                          [R.T.copy(), RNG.standard_normal(3)], {"rtol": 1e-9}),
    "inv_ex solve_ex": (lambda M, L, a, b: (L.inv_ex(a), L.solve_ex(a, b)), [A, B]),
    "inv_ex singular info": (lambda M, L, a: L.inv_ex(a).info, [SINGULAR], {"grad": False}),
    "cholesky_ex": (lambda M, L, a: (L.cholesky_ex(a), L.cholesky_ex(a, upper=True)), [SPD]),
    "cholesky_ex info": (lambda M, L, a: L.cholesky_ex(a * np.array([1, -1, 1])[:, None, None]
                                                       ).info, [SPD], {"grad": False}),
    "tensorinv": (lambda M, L, a: L.tensorinv(a.reshape(4, 3, 6, 2)),
                  [RNG.standard_normal((12, 12))]),
    "tensorsolve": (lambda M, L, a, b: (L.tensorsolve(a.reshape(2, 3, 6), b),
                                        L.tensorsolve(a.reshape(6, 2, 3), b, dims=(0,))),
                    [RNG.standard_normal((6, 6)), RNG.standard_normal((2, 3))]),
    "householder_product orgqr": (lambda M, L, a, t: (L.householder_product(a, t),
                                                       M.orgqr(a, t)), [QA, TAU]),
    "cholesky_solve": (lambda M, L, b, c: (M.cholesky_solve(b, c.tril()),
                                           b.cholesky_solve(c.tril().mT, True)), [B, CHOL]),
    "cholesky_inverse": (lambda M, L, c: (M.cholesky_inverse(c[0].tril()),
                                          c[1].tril().mT.cholesky_inverse(True)), [CHOL]),
    "triangular_solve": (lambda M, L, b, a: (M.triangular_solve(b, a),
                                             b.triangular_solve(a, False, True, True)),
                         [B, A]),
    "linalg.vander diagonal": (lambda M, L, x, a: (L.vander(x), L.diagonal(a, offset=1)),
                               [RNG.standard_normal((2, 3)), A]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg_vs_torch(name, device):
    fn, arrays, *kw = CASES[name]
    check(fn, arrays, device, **(kw[0] if kw else {}))


def test_errors(device):
    s = plugrad.tensor(SINGULAR, device=device)
    with pytest.raises(RuntimeError, match="not invertible|singular"):
        LA.lu_factor_ex(s, check_errors=True)
    with pytest.raises(RuntimeError, match="singular"):
        LA.inv_ex(s, check_errors=True)
    with pytest.raises(RuntimeError, match="without pivoting"):
        LA.lu_factor(s, pivot=False)
    with pytest.raises(RuntimeError, match="driver"):
        LA.lstsq(s, s, driver="nope")
