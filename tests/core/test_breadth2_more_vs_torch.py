"""More of issue 15's round 2 against PyTorch: ``torch.special``'s Bessel and normal-tail
functions, PyTorch's keyword names (``input=``, ``other=``) on the ``torch.*`` functions,
the random fills (``cauchy_``, ``log_normal_``, ``geometric_``), ``angle``/``fill``/
``nonzero_static`` and ``F.embedding(scale_grad_by_freq=True)``."""
import math

import numpy as np
import pytest

import plugrad
import plugrad.special

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(155)


def _host(t):
    return np.asarray(t.tolist()) if isinstance(t, plugrad.Tensor) else t.detach().numpy()


X = np.array([-80.0, -51.0, -49.0, -12.0, -3.0, -0.5, 0.0, 0.25, 1.0, 4.0, 20.0, 49.5, 50.5,
              120.0, 700.0])


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e"])
def test_bessel(name, device):
    x = X if name.endswith("e") else X[np.abs(X) < 700]
    ours = getattr(plugrad.special, name)(plugrad.tensor(x, device=device, requires_grad=True))
    want = getattr(torch.special, name)(torch.tensor(x, requires_grad=True))
    np.testing.assert_allclose(_host(ours), _host(want), rtol=1e-12, atol=1e-300)
    small = np.array([-3.0, -0.5, 0.25, 1.0, 4.0, 12.0])
    a = plugrad.tensor(small, device=device, requires_grad=True)
    b = torch.tensor(small, requires_grad=True)
    getattr(plugrad.special, name)(a).sum().backward()
    getattr(torch.special, name)(b).sum().backward()
    np.testing.assert_allclose(_host(a.grad), _host(b.grad), rtol=1e-10)


def test_normal_tails(device):
    x = np.array([-60.0, -30.0, -21.0, -19.0, -5.0, -1.0, 0.0, 0.5, 3.0, 5.5, 9.0, 30.0])
    ours = plugrad.special.log_ndtr(plugrad.tensor(x, device=device))
    np.testing.assert_allclose(_host(ours), torch.special.log_ndtr(torch.tensor(x)).numpy(),
                               rtol=1e-9)
    x = np.array([-5.0, -1.0, 0.0, 0.5, 3.0, 10.0, 24.0, 26.0, 50.0, 1e4])
    ours = plugrad.special.erfcx(plugrad.tensor(x, device=device))
    np.testing.assert_allclose(_host(ours), torch.special.erfcx(torch.tensor(x)).numpy(),
                               rtol=1e-9)
    p = np.array([0.01, 0.2, 0.5, 0.75, 0.99, 0.0, 1.0])
    ours = plugrad.special.ndtri(plugrad.tensor(p, device=device))
    np.testing.assert_allclose(_host(ours), torch.special.ndtri(torch.tensor(p)).numpy(),
                               rtol=1e-9)


def test_torch_keyword_names(device):
    x = plugrad.tensor([[1.0, -2.0], [3.0, 4.0]], device=device)
    t = torch.tensor([[1.0, -2.0], [3.0, 4.0]])
    pairs = [(lambda M, a: M.add(input=a, other=a * 2), "add"),
             (lambda M, a: M.sum(input=a, dim=1), "sum"),
             (lambda M, a: M.abs(input=a), "abs"),
             (lambda M, a: M.matmul(input=a, other=a), "matmul"),
             (lambda M, a: M.clamp(input=a, min=0.0), "clamp"),
             (lambda M, a: M.mul(a, other=a), "mul (other only)"),
             (lambda M, a: M.cumsum(input=a, dim=0), "cumsum")]
    for fn, name in pairs:
        np.testing.assert_allclose(_host(fn(plugrad, x)), _host(fn(torch, t)), err_msg=name)
    with pytest.raises(TypeError):
        plugrad.add(x, input=x)  # given twice, as in PyTorch


def test_random_fills():
    plugrad.manual_seed(0)
    n = 20000
    c = plugrad.empty(n, dtype=plugrad.float64).cauchy_(1.0, 2.0)
    assert abs(float(c.median()) - 1.0) < 0.1  # median, and quartiles at median -+ sigma
    q = np.quantile(_host(c), [0.25, 0.75])
    np.testing.assert_allclose(q, [-1.0, 3.0], atol=0.15)
    ln = plugrad.empty(n, dtype=plugrad.float64).log_normal_(0.5, 0.25)
    np.testing.assert_allclose(float(ln.log().mean()), 0.5, atol=0.01)
    np.testing.assert_allclose(float(ln.log().std()), 0.25, atol=0.01)
    g = plugrad.empty(n).geometric_(0.25)
    assert float(g.min()) >= 1 and g.dtype is plugrad.float32
    np.testing.assert_allclose(float(g.mean()), 4.0, rtol=0.05)
    with pytest.raises(RuntimeError, match="floating point"):
        plugrad.zeros(3, dtype=plugrad.int64).cauchy_()


def test_angle_fill_nonzero_static(device):
    x = np.array([-2.0, 0.0, -0.0, 3.0, float("nan")])
    got = plugrad.angle(plugrad.tensor(x, device=device))
    np.testing.assert_array_equal(_host(got), torch.angle(torch.tensor(x)).numpy())
    assert plugrad.tensor([-1, 2]).angle().dtype is plugrad.float32
    f = plugrad.fill(plugrad.zeros(2, 3, device=device), 1.5)
    assert _host(f).tolist() == [[1.5] * 3] * 2
    m = np.array([[0, 1, 0], [2, 0, 3]])
    for size in (1, 3, 5):
        ours = plugrad.tensor(m, device=device).nonzero_static(size=size, fill_value=-7)
        want = torch.tensor(m).nonzero_static(size=size, fill_value=-7)
        np.testing.assert_array_equal(_host(ours), want.numpy())
        np.testing.assert_array_equal(
            _host(plugrad.nonzero_static(plugrad.tensor(m, device=device), size=size)),
            torch.nonzero_static(torch.tensor(m), size=size).numpy())


def test_embedding_scale_grad_by_freq(device):
    w = RNG.standard_normal((6, 3))
    idx = np.array([[0, 2, 2], [5, 2, 0]])
    a = plugrad.tensor(w, device=device, requires_grad=True)
    b = torch.tensor(w, requires_grad=True)
    g = RNG.standard_normal((2, 3, 3))
    out_a = plugrad.nn.functional.embedding(plugrad.tensor(idx, device=device), a,
                                            padding_idx=5, scale_grad_by_freq=True)
    out_b = torch.nn.functional.embedding(torch.tensor(idx), b, padding_idx=5,
                                          scale_grad_by_freq=True)
    np.testing.assert_allclose(_host(out_a), _host(out_b))
    (out_a * plugrad.tensor(g, device=device)).sum().backward()
    (out_b * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(_host(a.grad), _host(b.grad), rtol=1e-12)
    layer = plugrad.nn.Embedding(6, 3, scale_grad_by_freq=True)
    assert layer(plugrad.tensor(idx)).shape == (2, 3, 3)
    with pytest.raises(NotImplementedError, match="sparse"):
        plugrad.nn.functional.embedding(plugrad.tensor(idx), a, sparse=True)
    assert math.isfinite(float(_host(a.grad).sum()))
