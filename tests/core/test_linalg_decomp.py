"""plugrad.linalg's factorisations against PyTorch: values, gradients (torch's autograd),
errors, on every built-in backend.

Eigenvectors and singular vectors are defined up to sign, and LAPACK drivers differ in the
sign they pick, so those are compared after aligning each vector's sign with PyTorch's (a
locally constant factor: the gradient of the aligned loss is gauge-invariant), and through
reconstructions.
"""
import numpy as np
import pytest
import torch

import plugrad
from plugrad.autograd import gradcheck, gradgradcheck
from plugrad.backends.reference import ReferenceBackend
from plugrad.backends.hooks import hookimpl
from plugrad.backends.contract import Backend
from plugrad.core.registry import get_registry

RNG = np.random.default_rng(7)


def R(*shape):
    return RNG.standard_normal(shape)


def SPD(*shape):
    a = R(*shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def close(got, want, tol=1e-10):
    got = np.asarray(got.detach() if isinstance(got, plugrad.Tensor) else got)
    want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def both(fn_p, fn_t, arrays, device, weights=None, align=None, tol=1e-10):
    """Run ``fn_p`` on plugrad (``device``) and ``fn_t`` on torch; compare the outputs and
    the gradient of a random weighted sum of them. ``align(outs_p, outs_t)`` returns the
    plugrad outputs sign-aligned to torch's."""
    xp = [plugrad.tensor(a, device=device, requires_grad=True) for a in arrays]
    xt = [torch.tensor(a, requires_grad=True) for a in arrays]
    op, ot = fn_p(*xp), fn_t(*xt)
    op = list(op) if isinstance(op, tuple) else [op]
    ot = list(ot) if isinstance(ot, tuple) else [ot]
    if align is not None:
        op = align(op, ot)
    for a, b in zip(op, ot):
        close(a, b, tol)
    ws = [R(*b.shape) for b in ot]
    lp = sum((a * plugrad.tensor(w, device=device)).sum() for a, w in zip(op, ws))
    lt = sum((b * torch.tensor(w)).sum() for b, w in zip(ot, ws))
    for g, h in zip(plugrad.autograd.grad(lp, xp), torch.autograd.grad(lt, xt)):
        close(g, h, tol * 100)


def _signs(vp, vt, axis):
    """+-1 per vector (columns: axis -2 summed) making ``vp`` agree with ``vt``."""
    dot = (np.asarray(vp.detach()) * vt.detach().numpy()).sum(axis=axis, keepdims=True)
    return np.where(dot < 0, -1.0, 1.0)


def align_eigh(op, ot):
    L, V = op
    s = plugrad.tensor(_signs(V, ot[1], -2), device=V.device)
    return [L, V * s]


def align_svd(op, ot):
    U, S, Vh = op
    s = _signs(U[..., :, :S.shape[-1]], ot[0][..., :, :S.shape[-1]], -2)
    su = np.ones(U.shape[:-2] + (1, U.shape[-1]))
    su[..., :S.shape[-1]] = s
    sv = np.ones(Vh.shape[:-2] + (Vh.shape[-2], 1))
    sv[..., :S.shape[-1], :] = np.swapaxes(s, -1, -2)
    return [U * plugrad.tensor(su, device=U.device), S, Vh * plugrad.tensor(sv, device=U.device)]


# ---------------------------------------------------------------------- values and gradients
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 2, 2)])
def test_inv_det_slogdet_match_torch(device, shape):
    a = R(*shape)
    both(plugrad.linalg.inv, torch.linalg.inv, [a], device)
    both(plugrad.linalg.det, torch.linalg.det, [a], device)
    both(lambda x: plugrad.linalg.slogdet(x).logabsdet,
         lambda x: torch.linalg.slogdet(x).logabsdet, [a], device)
    sign = plugrad.linalg.slogdet(plugrad.tensor(a, device=device)).sign
    close(sign, torch.linalg.slogdet(torch.tensor(a)).sign)


@pytest.mark.parametrize("sa,sb", [((3, 3), (3, 2)), ((3, 3), (3,)), ((2, 3, 3), (2, 3)),
                                   ((3, 3), (2, 3, 1)), ((2, 1, 3, 3), (4, 3, 2))])
def test_solve_matches_torch_with_broadcasting(device, sa, sb):
    both(plugrad.linalg.solve, torch.linalg.solve, [R(*sa), R(*sb)], device)


def test_solve_left_false(device):
    both(lambda a, b: plugrad.linalg.solve(a, b, left=False),
         lambda a, b: torch.linalg.solve(a, b, left=False), [R(3, 3), R(2, 3)], device)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_matches_torch(device, upper):
    both(lambda a: plugrad.linalg.cholesky(a, upper=upper),
         lambda a: torch.linalg.cholesky(a, upper=upper), [SPD(2, 3, 3)], device)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 3, 5)])
def test_qr_matches_torch(device, shape):
    both(plugrad.linalg.qr, torch.linalg.qr, [R(*shape)], device)
    a = plugrad.tensor(R(*shape), device=device)
    q, r = plugrad.linalg.qr(a, mode="complete")
    m = shape[-2]
    assert q.shape[-2:] == (m, m) and r.shape[-2:] == (m, shape[-1])
    close(q @ r, a)
    close(q.mT @ q, np.broadcast_to(np.eye(m), q.shape))


def test_qr_gradient_refusals(device):
    a = plugrad.tensor(R(4, 3), device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        plugrad.linalg.qr(a, mode="complete").Q.sum().backward()
    q, r = plugrad.linalg.qr(a, mode="r")
    assert q.numel() == 0
    with pytest.raises(RuntimeError, match="not computed when mode='r'"):
        r.sum().backward()


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_torch(device, uplo):
    a = R(2, 4, 4)  # not symmetric: only the UPLO triangle may be read
    both(lambda x: plugrad.linalg.eigh(x, UPLO=uplo), lambda x: torch.linalg.eigh(x, UPLO=uplo),
         [a], device, align=align_eigh)
    both(lambda x: plugrad.linalg.eigvalsh(x, UPLO=uplo),
         lambda x: torch.linalg.eigvalsh(x, UPLO=uplo), [a], device)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
@pytest.mark.parametrize("full", [False, True])
def test_svd_matches_torch(device, shape, full):
    k = min(shape[-2:])

    def trimmed(fn):  # with full_matrices the extra vectors are arbitrary: compare k of them
        def run(x):
            u, s, vh = fn(x, full_matrices=full)
            assert u.shape[-1] == (shape[-2] if full else k)
            return u[..., :k], s, vh[..., :k, :]
        return run
    both(trimmed(plugrad.linalg.svd), trimmed(torch.linalg.svd), [R(*shape)], device,
         align=align_svd)
    both(plugrad.linalg.svdvals, torch.linalg.svdvals, [R(*shape)], device)


def test_svd_reconstructs_and_is_orthonormal(device):
    a = plugrad.tensor(R(2, 5, 3), device=device)
    u, s, vh = plugrad.linalg.svd(a)
    assert tuple(u.shape) == (2, 5, 5) and tuple(vh.shape) == (2, 3, 3)
    close((u[..., :3] * s.unsqueeze(-2)) @ vh, a)
    close(u.mT @ u, np.broadcast_to(np.eye(5), (2, 5, 5)))
    assert (np.diff(np.asarray(s), axis=-1) <= 0).all()


@pytest.mark.parametrize("shape,herm", [((4, 3), False), ((3, 5), False), ((2, 3, 3), True)])
def test_pinv_matches_torch(device, shape, herm):
    a = SPD(*shape) if herm else R(*shape)
    both(lambda x: plugrad.linalg.pinv(x, hermitian=herm),
         lambda x: torch.linalg.pinv(x, hermitian=herm), [a], device, tol=1e-9)


def test_pinv_cuts_small_singular_values(device):
    a = np.diag([3.0, 1e-3, 0.0])
    for kw in ({}, {"atol": 1e-2}, {"rtol": 1e-2}):
        close(plugrad.linalg.pinv(plugrad.tensor(a, device=device), **kw),
              torch.linalg.pinv(torch.tensor(a), **kw))


# ---------------------------------------------------------------------- higher order
_B = R(3, 2)


@pytest.mark.parametrize("fn,make", [
    (plugrad.linalg.inv, lambda: R(3, 3)),
    (plugrad.linalg.det, lambda: R(3, 3)),
    (lambda a: plugrad.linalg.solve(a, plugrad.tensor(_B, device=a.device)), lambda: R(3, 3)),
    # symmetric inputs: the kernels read one triangle, the rules (as PyTorch's) are symmetric
    (lambda a: plugrad.linalg.cholesky(a @ a.mT + plugrad.eye(3, dtype=a.dtype, device=a.device)),
     lambda: R(3, 3)),
    (lambda a: plugrad.linalg.qr(a).R, lambda: R(3, 2)),
    (lambda a: plugrad.linalg.eigvalsh(a + a.mT), lambda: R(3, 3)),
    (lambda a: plugrad.linalg.eigh(a + a.mT).eigenvectors.abs(), lambda: R(3, 3)),
    (lambda a: plugrad.linalg.svd(a, full_matrices=False).U.abs(), lambda: R(3, 2)),
    (plugrad.linalg.svdvals, lambda: R(3, 2)),
    (plugrad.linalg.pinv, lambda: R(2, 3)),
])
def test_gradgradcheck(device, fn, make):
    a = plugrad.tensor(make(), device=device, requires_grad=True)
    assert gradcheck(fn, (a,))
    assert gradgradcheck(fn, (a,))


# ---------------------------------------------------------------------- float32
def test_float32_stays_float32(device):
    a = plugrad.tensor(SPD(3, 3), dtype=plugrad.float32, device=device)
    for out in (plugrad.linalg.inv(a), plugrad.linalg.det(a), plugrad.linalg.cholesky(a),
                *plugrad.linalg.eigh(a), *plugrad.linalg.svd(a), *plugrad.linalg.qr(a)):
        assert out.dtype is plugrad.float32
    close(plugrad.linalg.inv(a), torch.linalg.inv(torch.tensor(SPD(3, 3) * 0 + np.asarray(a),
                                                              dtype=torch.float32)), 1e-5)


# ---------------------------------------------------------------------- errors
def _torch_error(fn, *arrays):
    with pytest.raises(Exception) as info:
        fn(*[torch.tensor(a) for a in arrays])
    return info.value


@pytest.mark.parametrize("name,args", [
    ("inv", [np.zeros((3, 3))]),
    ("inv", [np.stack([np.eye(3), [[1, 2, 3], [2, 4, 6], [1, 1, 1.0]]])]),
    ("solve", [np.stack([np.eye(3), np.zeros((3, 3))]), np.ones((2, 3))]),
    ("cholesky", [-np.eye(3)]),
    ("cholesky", [np.stack([np.eye(3), np.diag([1.0, -1.0, 1.0])])]),
])
def test_singular_input_raises_linalg_error_as_torch(device, name, args):
    want = _torch_error(getattr(torch.linalg, name), *args)
    with pytest.raises(plugrad.linalg.LinAlgError) as info:
        getattr(plugrad.linalg, name)(*[plugrad.tensor(a, device=device) for a in args])
    assert isinstance(info.value, RuntimeError)
    assert str(info.value) == str(want)


@pytest.mark.parametrize("a", [[[1.0, 2], [2, 4]], np.ones((3, 3)), np.zeros((3, 3)),
                               [[[1.0, 2], [2, 4]], [[1, 2], [3, 4]]]])
def test_det_gradient_at_singular_matrices_as_torch(device, a):
    """PyTorch: 0 for the singular matrices in a plain backward (its LU path), their
    cofactors under create_graph (then differentiable again)."""
    a = np.asarray(a)
    x = plugrad.tensor(a, device=device, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    plugrad.linalg.det(x).sum().backward()
    torch.linalg.det(t).sum().backward()
    close(x.grad, t.grad)
    g, = plugrad.autograd.grad(plugrad.linalg.det(x).sum(), x, create_graph=True)
    h, = torch.autograd.grad(torch.linalg.det(t).sum(), t, create_graph=True)
    close(g, h)
    if a.shape[-1] == 2:  # (rank <= n - 2: repeated zero singular values, no 2nd derivative)
        close(plugrad.autograd.grad(g.sum(), x)[0], torch.autograd.grad(h.sum(), t)[0])


def test_singular_det_is_zero_and_slogdet_minus_inf(device):
    a = plugrad.tensor(np.ones((3, 3)), device=device)
    assert float(plugrad.linalg.det(a)) == 0.0
    sign, logabs = plugrad.linalg.slogdet(a)
    assert float(sign) == 0.0 and float(logabs) == -np.inf
    assert float(plugrad.logdet(a)) == -np.inf
    assert np.isnan(float(plugrad.logdet(plugrad.tensor(-np.eye(3), device=device))))


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.inv(m.eye(3, dtype=m.int64)),
    lambda m: m.linalg.det(m.ones(3, 4)),
    lambda m: m.linalg.det(m.ones(3)),
    lambda m: m.linalg.svd(m.ones(3, dtype=m.int64)),
    lambda m: m.linalg.eigh(m.ones(3, 4)),
    lambda m: m.linalg.qr(m.ones(3)),
    lambda m: m.linalg.cholesky(m.ones(3, 4)),
    lambda m: m.linalg.solve(m.eye(3), m.ones(4)),
    lambda m: m.linalg.inv(m.eye(3, dtype=m.float16)),
])
def test_bad_input_errors_as_torch(call):
    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(plugrad)
    assert str(got.value) == str(want.value)


class _NoLinalg(ReferenceBackend):
    """The reference backend without its linear-algebra kernels."""
    name = "no-linalg"
    device_type = "nolinalg"
    linalg_solve = Backend.linalg_solve
    linalg_slogdet = Backend.linalg_slogdet
    linalg_cholesky = Backend.linalg_cholesky
    linalg_qr = Backend.linalg_qr
    linalg_eigh = Backend.linalg_eigh
    linalg_svd = Backend.linalg_svd


class _Plugin:
    @hookimpl
    def plugrad_backends(self):
        return [_NoLinalg()]


def test_backend_without_the_kernels_says_so():
    reg = get_registry()
    name = reg.register_plugin(_Plugin())
    try:
        a = plugrad.eye(3, dtype=plugrad.float64, device="nolinalg")
        for fn, op, kernel in [(plugrad.linalg.inv, "linalg.inv", "linalg_solve"),
                               (plugrad.linalg.det, "linalg.det", "linalg_slogdet"),
                               (plugrad.linalg.eigh, "linalg.eigh", "linalg_eigh"),
                               (plugrad.linalg.svd, "linalg.svd", "linalg_svd"),
                               (plugrad.linalg.qr, "linalg.qr", "linalg_qr"),
                               (plugrad.linalg.cholesky, "linalg.cholesky", "linalg_cholesky")]:
            with pytest.raises(NotImplementedError) as info:
                fn(a)
            assert op in str(info.value) and kernel in str(info.value)
            assert "no-linalg" in str(info.value)
        assert float((a @ a).sum()) == 3.0  # the rest of the backend works
    finally:
        reg.unregister_plugin(name)
