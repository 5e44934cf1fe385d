"""softmax / log_softmax / logsumexp: values, extreme logits, dtypes, first and second
derivatives; and double backward of a few core ops."""
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

import plugrad
from plugrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 4))
INF = math.inf


def T(a, device, requires_grad=False, dtype=None):
    return plugrad.tensor(np.asarray(a), dtype=dtype, device=device,
                          requires_grad=requires_grad)


def check(got, want, dtype=None, rtol=1e-12):
    want = np.asarray(want)
    assert tuple(got.shape) == want.shape
    if dtype is not None:
        assert got.dtype is dtype
    assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol, equal_nan=True)


def np_log_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_values(device, dim):
    x = T(X, device)
    want = np_log_softmax(X, dim)
    check(x.softmax(dim), np.exp(want))
    check(plugrad.log_softmax(x, dim), want)
    check(x.log_softmax(dim=dim), want)


def test_large_logits_do_not_overflow(device):
    x = np.array([[1000.0, -1000.0, 0.0], [1000.0, 1000.0, 999.0], [-1000.0, -1000.0, -1000.0]])
    s = T(x, device).softmax(1)
    ls = T(x, device).log_softmax(1)
    assert np.isfinite(np.asarray(s)).all() and np.isfinite(np.asarray(ls)).all()
    check(s, np.exp(np_log_softmax(x, 1)))
    check(ls, np_log_softmax(x, 1))
    check(s.sum(1), np.ones(3))


def test_minus_inf_entries(device):
    x = np.array([[-INF, 0.0, 1.0], [-INF, -INF, 2.0]])
    check(T(x, device).softmax(1), [[0.0, 1 / (1 + math.e), math.e / (1 + math.e)],
                                    [0.0, 0.0, 1.0]])
    check(T(x, device).log_softmax(1), np_log_softmax(x, 1))
    check(T([-INF, -INF], device).softmax(0), [math.nan, math.nan])  # as PyTorch


def test_dtype_argument_and_int_input(device):
    x32 = T(X, device, dtype=plugrad.float32)
    check(x32.softmax(-1, dtype=plugrad.float64), np.exp(np_log_softmax(
        X.astype(np.float32).astype(np.float64), -1)), plugrad.float64)
    xi = T([[1, 2, 3]], device)
    check(xi.log_softmax(1, dtype=plugrad.float32), np_log_softmax(np.array([[1.0, 2, 3]]), 1),
          plugrad.float32, rtol=1e-6)
    assert x32.softmax(0).dtype is plugrad.float32


def test_zero_dim_and_empty(device):
    check(T(2.5, device).softmax(0), 1.0)
    check(T(2.5, device).log_softmax(-1), 0.0)
    check(T(np.zeros((0, 3)), device).softmax(0), np.zeros((0, 3)))
    check(T(np.zeros((0, 3)), device).log_softmax(1), np.zeros((0, 3)))


def test_bad_dim_raises(device):
    with pytest.raises(IndexError, match="softmax"):
        T(X, device).softmax(3)


def test_logsumexp_with_minus_inf_rows(device):
    x = np.array([[-INF, -INF, -INF], [-INF, 0.0, 0.0], [1000.0, 1000.0, -INF]])
    check(T(x, device).logsumexp(1), [-INF, math.log(2.0), 1000.0 + math.log(2.0)])
    check(T(x, device).logsumexp(0, keepdim=True),
          [[1000.0, 1000.0, 0.0]])


def test_logsumexp_gradient_is_softmax(device):
    x = T(X, device, requires_grad=True)
    x.logsumexp(-1).sum().backward()
    check(x.grad, np.exp(np_log_softmax(X, -1)))


# ---------------------------------------------------------------------- derivatives
SMALL = RNG.standard_normal((2, 3))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, -1])
def test_gradcheck_and_gradgradcheck(device, fn, dim):
    x = T(SMALL, device, requires_grad=True)
    f = lambda a: getattr(a, fn)(dim)  # noqa: E731
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_gradient_with_large_logits_is_finite(device):
    x = T([[1000.0, -1000.0, 0.0]], device, requires_grad=True)
    (x.log_softmax(1) * T([[1.0, 2.0, 3.0]], device)).sum().backward()
    assert np.isfinite(np.asarray(x.grad)).all()
    check(x.grad, [[1.0 - 6.0, 2.0, 3.0]])


DOUBLE = {
    "mul": (lambda a, b: a * b, 2),
    "exp": (lambda a: a.exp(), 1),
    "tanh": (lambda a: a.tanh(), 1),
    "matmul": (lambda a, b: a @ b.mT, 2),
    "sum": (lambda a: (a * a).sum(1), 1),
    "softmax": (lambda a: a.softmax(1), 1),
    "chain": (lambda a, b: (a.exp() @ b.mT).tanh().softmax(0).sum(), 2),
}


@pytest.mark.parametrize("name", sorted(DOUBLE))
def test_double_backward(device, name):
    fn, n = DOUBLE[name]
    inputs = [T(RNG.standard_normal((2, 3)), device, requires_grad=True) for _ in range(n)]
    assert gradgradcheck(fn, inputs)


def test_create_graph_second_derivative_values(device):
    x = T([0.5, -1.0], device, requires_grad=True)
    (g,) = plugrad.autograd.grad(x.tanh().sum(), x, create_graph=True)
    (h,) = plugrad.autograd.grad(g.sum(), x)
    t = np.tanh([0.5, -1.0])
    check(g, 1 - t ** 2)
    check(h, -2 * t * (1 - t ** 2))


def test_numpy_softmax_all_minus_inf_row_does_not_warn():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        T([[-INF, -INF]], "cpu").softmax(1)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("v", [INF, -INF, math.nan, 1e308, 0.0])
def test_zero_dim_special_values_as_torch(device, fn, v):
    """A 0-d input is a one-element slice: NaN (and a NaN gradient) for nan / ±inf."""
    torch = pytest.importorskip("torch")
    t = torch.tensor(v, dtype=torch.float64, requires_grad=True)
    ty = getattr(torch, fn)(t, 0)
    tg, = torch.autograd.grad(ty * 1.5, t)
    x = T(v, device, requires_grad=True)
    y = getattr(plugrad, fn)(x, 0)
    g, = plugrad.autograd.grad(y * 1.5, x)
    check(y, ty.detach().numpy())
    check(g, tg.numpy())


def test_log_softmax_near_the_maximum_as_torch(device):
    """``(x - m) - log(sum)`` as PyTorch: ``x - (m + log 2)`` would round to 0 there."""
    torch = pytest.importorskip("torch")
    big = np.finfo(np.float64).max
    a = np.array([[big, 1.5, -big], [big, 0.25, -big]])
    want = torch.log_softmax(torch.tensor(a), 0).numpy()
    check(plugrad.log_softmax(T(a, device), 0), want)
    assert want[0, 0] == pytest.approx(-math.log(2))
