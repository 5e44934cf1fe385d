"""The linear-algebra kernels (contract_linalg.py) of the reference backend and the shared
NumPy/CuPy form, against NumPy's LAPACK: reconstructions and invariants (vectors are defined
up to sign), failures as LinAlgKernelError, and the contract's body (no composite) raising."""
import numpy as np
import pytest

from plugrad.backends.contract import Backend, optional_kernels
from plugrad.backends.contract_linalg import LinAlgKernelError
from plugrad.backends.numpy import NumPyBackend
from plugrad.backends.reference import ReferenceBackend

RNG = np.random.default_rng(3)
BACKENDS = {"ref": ReferenceBackend(), "numpy": NumPyBackend()}
LINALG = [k for k in optional_kernels() if k.startswith("linalg_")]


def R(*shape):
    return RNG.standard_normal(shape)


@pytest.fixture(params=sorted(BACKENDS))
def k(request):
    return BACKENDS[request.param]


def arr(k, a, dtype="float64"):
    return k.from_numpy(np.asarray(a), dtype, None)


def host(k, x):
    return np.asarray(k.to_numpy(x), dtype=np.float64)


def T(a):
    return np.swapaxes(a, -1, -2)


def test_the_linalg_kernels_are_the_contracts():
    assert sorted(LINALG) == ["linalg_cholesky", "linalg_eigh", "linalg_qr", "linalg_slogdet",
                              "linalg_solve", "linalg_svd"]


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2), (1, 1)])
def test_solve_slogdet(k, shape):
    a, b = R(*shape), R(*shape[:-1], 2)
    np.testing.assert_allclose(host(k, k.linalg_solve(arr(k, a), arr(k, b))),
                               np.linalg.solve(a, b), rtol=1e-10, atol=1e-12)
    sign, logabs = k.linalg_slogdet(arr(k, a))
    want = np.linalg.slogdet(a)
    np.testing.assert_array_equal(host(k, sign), want[0])
    np.testing.assert_allclose(host(k, logabs), want[1], rtol=1e-12, atol=1e-12)


def test_float32_results_are_float32(k):
    a = R(3, 3)
    spd = a @ a.T + 3 * np.eye(3)
    outs = [k.linalg_solve(arr(k, a, "float32"), arr(k, a, "float32")),
            *k.linalg_slogdet(arr(k, a, "float32")), k.linalg_cholesky(arr(k, spd, "float32")),
            *k.linalg_qr(arr(k, a, "float32"), False), *k.linalg_eigh(arr(k, spd, "float32"), False),
            *k.linalg_svd(arr(k, a, "float32"), False, True)]
    assert {k.dtype_of(o) for o in outs} == {"float32"}


def test_singular_solve_names_batch_and_pivot(k):
    z = np.stack([np.eye(3), [[1, 2, 3], [2, 4, 6], [1, 1, 1.0]]])
    with pytest.raises(LinAlgKernelError) as info:
        k.linalg_solve(arr(k, z), arr(k, np.ones((2, 3, 1))))
    assert (info.value.batch, info.value.order) == (1, 3)
    with pytest.raises(LinAlgKernelError) as info:
        k.linalg_solve(arr(k, np.zeros((2, 2))), arr(k, np.ones((2, 1))))
    assert (info.value.batch, info.value.order) == (None, 1)
    sign, logabs = k.linalg_slogdet(arr(k, z))
    assert host(k, sign)[1] == 0 and host(k, logabs)[1] == -np.inf


def test_cholesky(k):
    a = R(2, 3, 3)
    spd = a @ T(a) + np.eye(3)
    upper_garbage = spd + np.triu(R(3, 3), 1)  # only the lower triangle is read
    np.testing.assert_allclose(host(k, k.linalg_cholesky(arr(k, upper_garbage))),
                               np.linalg.cholesky(spd), rtol=1e-10, atol=1e-12)
    bad = np.stack([np.eye(3), np.diag([1.0, -1.0, 1.0])])
    with pytest.raises(LinAlgKernelError) as info:
        k.linalg_cholesky(arr(k, bad))
    assert (info.value.batch, info.value.order) == (1, 2)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (0, 2)])
@pytest.mark.parametrize("complete", [False, True])
def test_qr(k, shape, complete):
    a = R(*shape)
    q, r = (host(k, x) for x in k.linalg_qr(arr(k, a), complete))
    want_q, want_r = np.linalg.qr(a, mode="complete" if complete else "reduced")
    assert q.shape == want_q.shape and r.shape == want_r.shape
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(T(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), T(q).shape[:-1]
                                                          + (q.shape[-1],)), atol=1e-12)
    assert np.all(np.tril(r, -1) == 0)
    n = min(shape[-2:])  # unique up to the signs of R's diagonal
    np.testing.assert_allclose(np.abs(r[..., :n, :]), np.abs(want_r[..., :n, :]), atol=1e-12)


@pytest.mark.parametrize("upper", [False, True])
def test_eigh(k, upper):
    a = R(2, 4, 4)
    w, v = (host(k, x) for x in k.linalg_eigh(arr(k, a), upper))
    tri = np.triu(a) if upper else np.tril(a)
    sym = tri + T(tri) - a * np.eye(4)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(sym), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose((v * w[..., None, :]) @ T(v), sym, atol=1e-12)
    np.testing.assert_allclose(T(v) @ v, np.broadcast_to(np.eye(4), (2, 4, 4)), atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (3, 0)])
@pytest.mark.parametrize("full", [False, True])
def test_svd(k, shape, full):
    a = R(*shape)
    u, s, vh = k.linalg_svd(arr(k, a), full, True)
    u, s, vh = host(k, u), host(k, s), host(k, vh)
    want_u, want_s, want_vh = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (want_u.shape, want_s.shape, want_vh.shape)
    np.testing.assert_allclose(s, want_s, rtol=1e-12, atol=1e-12)
    n = s.shape[-1]
    np.testing.assert_allclose((u[..., :n] * s[..., None, :]) @ vh[..., :n, :], a, atol=1e-12)
    for m in (u, T(vh)):
        np.testing.assert_allclose(T(m) @ m, np.broadcast_to(np.eye(m.shape[-1]), T(m).shape[:-1]
                                                              + (m.shape[-1],)), atol=1e-12)
    none_u, only_s, none_vh = k.linalg_svd(arr(k, a), full, False)
    assert none_u is None and none_vh is None
    np.testing.assert_allclose(host(k, only_s), want_s, rtol=1e-12, atol=1e-12)


def test_rank_deficient_svd_still_orthonormal(k):
    a = np.outer(R(4), R(3))
    u, s, vh = (host(k, x) for x in k.linalg_svd(arr(k, a), True, True))
    np.testing.assert_allclose(T(u) @ u, np.eye(4), atol=1e-12)
    np.testing.assert_allclose((u[:, :3] * s) @ vh, a, atol=1e-12)


@pytest.mark.parametrize("name", LINALG)
def test_contract_body_raises_naming_kernel_and_backend(name):
    """No composite: a backend without the kernel refuses instead of answering wrongly."""
    with pytest.raises(NotImplementedError, match=f"'reference'.*'{name}'"):
        getattr(Backend, name)(BACKENDS["ref"], None, None, None)[0] if name == "linalg_svd" \
            else _call_body(name)


def _call_body(name):
    args = {"linalg_solve": 2, "linalg_slogdet": 1, "linalg_cholesky": 1, "linalg_qr": 2,
            "linalg_eigh": 2}[name]
    return getattr(Backend, name)(BACKENDS["ref"], *([None] * args))
