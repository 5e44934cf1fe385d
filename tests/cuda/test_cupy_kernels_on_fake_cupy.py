"""The ``cuda`` backend's share of the one implementation, on the FAKE CuPy (NumPy underneath).

The new fused backward kernels run through plugrad's CuPy backend -- the shared ``xp`` code
on ``array_api_compat.cupy`` plus the ``KernelSpec`` fusions, whose C++ the fake compiles
with g++ -- and must agree with the ``cpu`` backend; the backend itself stays small.
"""
import numpy as np
import pytest

import fake_cupy  # tests/cuda is on the path (pytest puts it there)
from fake_cuda_fixtures import fake_cuda  # noqa: F401 - a fixture
from plugrad.backends.array_api import ArrayAPIBackend
from plugrad.backends.cupy import CuPyBackend
from plugrad.backends.numpy import NumPyBackend

CPU = NumPyBackend()


def redefined(cls) -> list[str]:
    """The methods of the shared implementation that ``cls`` defines again."""
    return sorted(n for n, v in vars(cls).items() if hasattr(ArrayAPIBackend, n)
                  and (callable(v) or isinstance(v, (staticmethod, property)))
                  and n != "_abc_impl")


def test_cupy_redefines_at_most_20_methods_of_the_shared_implementation():
    got = redefined(CuPyBackend)
    assert len(got) <= 20, got
    # what it does re-define is CuPy's own business (devices, host transfer, atomics, RNG)
    assert {"sum", "exp", "add", "matmul", "reshape", "where", "softmax", "layer_norm",
            "gelu", "conv2d"}.isdisjoint(got)


def on_both(backend, fn, *arrays):
    """``fn(backend, *arrays)`` on the fake GPU (arrays moved there) and on the cpu backend,
    results brought back to the host."""
    def host(v):
        if isinstance(v, tuple):
            return tuple(host(a) for a in v)
        return None if v is None else backend.to_numpy(v)
    dev = [backend.from_numpy(a, a.dtype.name, None) if isinstance(a, np.ndarray) else a
           for a in arrays]
    return host(fn(backend, *dev)), fn(CPU, *arrays)


def agree(got, want, dtype):
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            agree(g, w, dtype)
        return
    if want is None:
        assert got is None
        return
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 1e-12 if dtype == "float64" else 2e-5 if dtype == "float32" else 2e-2
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_fake_cuda_backward_kernels_match_cpu(fake_cuda, dtype):
    rng = np.random.default_rng(0)

    def r(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(dtype)
    x, g = r(3, 4, 5, scale=2), r(3, 4, 5)
    y = CPU.softmax(x, 2)
    cases = [
        (lambda b, g, x: b.gelu_backward(g, x, "none"), g, x),
        (lambda b, g, x: b.gelu_backward(g, x, "tanh"), g, x),
        (lambda b, g, y: b.softmax_backward(g, y, 2), g, y),
        (lambda b, g, y: b.log_softmax_backward(g, y, 2), g, CPU.log_softmax(x, 2)),
    ]
    w = r(4, 5)
    _, mean, rstd = CPU.layer_norm(x, w, None, 2, 1e-5)
    cases.append((lambda b, g, x, w, m, s: b.layer_norm_backward(g, x, w, m, s, 2,
                                                                 (True, True, True)),
                  g, x, w, mean, rstd))
    img = r(2, 3, 6, 6)
    out, idx = CPU.max_pool2d(img, (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1))
    cases.append((lambda b, g, i: b.max_pool2d_backward(g, i, (2, 3, 6, 6)), r(*out.shape),
                  idx))
    target, valid = rng.integers(0, 4, (3, 5)), rng.random((3, 5)) < 0.6
    cases.append((lambda b, g, x, t, v: b.cross_entropy_backward(g, x, t, v, 0.1),
                  np.array(2.0, dtype), x, np.where(valid, target, 0), valid))
    q, k, v = r(2, 3, 4), r(2, 5, 4), r(2, 5, 3)
    mask = np.where(rng.random((3, 5)) < 0.5, 0.0, -np.inf).astype(dtype)
    mask[1] = -np.inf  # a query with nothing to attend to: zeros
    cases.append((lambda b, *a: b.scaled_dot_product_attention(*a, 0.5), q, k, v, mask))
    _, attn = CPU.scaled_dot_product_attention(q, k, v, mask, 0.5)
    cases.append((lambda b, *a: b.scaled_dot_product_attention_backward(*a, 0.5),
                  r(2, 3, 3), q, k, v, attn))
    fake_cupy.stats()["elementwise"].clear()
    for fn, *arrays in cases:
        agree(*on_both(fake_cuda, fn, *arrays), dtype)
    used = set(fake_cupy.stats()["elementwise"])
    fused = {"plugrad_gelu_erf_backward", "plugrad_gelu_tanh_backward",
             "plugrad_softmax_backward", "plugrad_log_softmax_backward",
             "plugrad_standardize", "plugrad_layer_norm_grad_input"}
    if dtype == "float16":
        assert not used & fused  # float16 takes the xp expressions
    else:
        assert fused <= used, used


def test_fake_cuda_scatter_add_of_an_embedding_gradient_matches_cpu(fake_cuda):
    rng = np.random.default_rng(1)
    rows = rng.integers(0, 7, 300)
    index = np.broadcast_to(rows[:, None], (300, 64))  # the core's embedding gradient
    src = rng.standard_normal((300, 64)).astype("float32")
    zeros = np.zeros((7, 64), "float32")
    got, want = on_both(fake_cuda, lambda b, z, i, s: b.scatter_add(z, 0, i, s), zeros,
                        np.ascontiguousarray(index), src)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    ref = zeros.copy()
    np.add.at(ref, rows, src)
    np.testing.assert_array_equal(CPU.scatter_add(zeros, 0, index, src), ref)  # bit-identical
