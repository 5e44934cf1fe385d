"""Reductions against NumPy (float64), their edge cases, errors and gradients."""
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import plugrad
from plugrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 4))
DIMS = [0, -1, (0, 2), (-1, 0), [1]]


def T(a, device, requires_grad=False, dtype=None):
    return plugrad.tensor(np.asarray(a), dtype=dtype, device=device,
                          requires_grad=requires_grad)


def check(got, want, dtype=None):
    want = np.asarray(want)
    assert tuple(got.shape) == want.shape
    if dtype is not None:
        assert got.dtype is dtype
    assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12, equal_nan=True)


def np_axes(dim):
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


# ---------------------------------------------------------------------- values
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin"])
def test_reductions_with_dim(device, name, dim, keepdim):
    fn = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min}[name]
    got = getattr(T(X, device), name)(dim, keepdim=keepdim)
    check(got, fn(X, axis=np_axes(dim), keepdims=keepdim), plugrad.float64)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, -1, 1])
def test_prod(device, dim, keepdim):
    check(T(X, device).prod(dim, keepdim=keepdim), np.prod(X, axis=dim, keepdims=keepdim))
    check(T(X, device).prod(), np.prod(X))


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "max", "min"])
def test_full_reductions(device, name):
    fn = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "amax": np.max, "amin": np.min,
          "max": np.max, "min": np.min}[name]
    check(getattr(T(X, device), name)(), fn(X))


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 1, (0, 2)])
def test_var_std_corrections(device, dim, keepdim):
    x = T(X, device)
    ax = np_axes(dim)
    for kw, ddof in [({}, 1), ({"unbiased": False}, 0), ({"correction": 0}, 0),
                     ({"correction": 2}, 2), ({"unbiased": True}, 1)]:
        check(x.var(dim, keepdim=keepdim, **kw), np.var(X, axis=ax, ddof=ddof, keepdims=keepdim))
        check(x.std(dim, keepdim=keepdim, **kw), np.std(X, axis=ax, ddof=ddof, keepdims=keepdim))


def test_var_std_positional_overloads(device):
    x = T(X, device)
    check(x.std(False), np.std(X))                        # std(x, unbiased)
    check(plugrad.var(x, 1, False, True), np.var(X, axis=1, keepdims=True))
    v, m = plugrad.var_mean(x, 2, correction=0)
    check(v, np.var(X, axis=2))
    check(m, np.mean(X, axis=2))
    s, m = plugrad.std_mean(x, (0, 1), keepdim=True)
    check(s, np.std(X, axis=(0, 1), ddof=1, keepdims=True))
    check(m, np.mean(X, axis=(0, 1), keepdims=True))


def test_var_with_too_few_elements(device):
    check(T([1.0, 2.0], device).var(correction=2), math.inf)  # spread over zero dof
    check(T([1.0, 1.0], device).var(correction=2), math.nan)  # 0 / 0
    check(T(2.5, device).var(), math.nan)
    check(T(np.zeros((0, 3)), device).var(0), np.full(3, math.nan))


def test_var_of_int_raises(device):
    with pytest.raises(TypeError, match=r"var\(\).*floating point.*int64 input of shape \[2\]"):
        T([1, 2], device).var()


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, -1, 1])
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_with_dim_namedtuple(device, name, dim, keepdim):
    x = T(X, device)
    r = getattr(x, name)(dim, keepdim=keepdim)
    values, indices = r
    assert r.values is values and r.indices is indices
    arg = np.argmax if name == "max" else np.argmin
    idx = arg(X, axis=dim, keepdims=True)
    check(values, np.take_along_axis(X, idx, dim) if keepdim else
          np.squeeze(np.take_along_axis(X, idx, dim), dim))
    check(indices, idx if keepdim else np.squeeze(idx, dim), plugrad.int64)


def test_max_of_two_tensors_is_elementwise(device):
    a, b = T([1.0, 5.0], device), T([3.0, 2.0], device)
    check(plugrad.max(a, b), [3.0, 5.0])
    check(a.min(b), [1.0, 2.0])


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 2, -2])
def test_argmax_argmin_first_tie(device, dim, keepdim):
    x = RNG.integers(-2, 2, (2, 3, 4)).astype(np.float64)  # many ties
    for name, fn in [("argmax", np.argmax), ("argmin", np.argmin)]:
        got = getattr(T(x, device), name)(dim, keepdim=keepdim)
        want = fn(x, axis=dim, keepdims=keepdim)
        check(got, want, plugrad.int64)


def test_logsumexp(device):
    for dim in [1, (0, 2), -1]:
        want = np.log(np.sum(np.exp(X), axis=np_axes(dim)))
        check(T(X, device).logsumexp(dim), want)
    check(plugrad.logsumexp(T(X, device), 0, keepdim=True),
          np.log(np.sum(np.exp(X), axis=0, keepdims=True)))


def test_logsumexp_large_and_infinite(device):
    x = np.array([[1000.0, 1000.0, -1000.0], [-math.inf, -math.inf, -math.inf],
                  [-math.inf, 0.0, 0.0], [math.inf, 1.0, 2.0]])
    got = T(x, device).logsumexp(1)
    check(got, [1000.0 + math.log(2.0), -math.inf, math.log(2.0), math.inf])


def test_logsumexp_int_input_uses_default_float(device):
    got = T([[1, 2], [3, 4]], device).logsumexp(1)
    assert got.dtype is plugrad.get_default_dtype()
    assert_allclose(np.asarray(got), np.log(np.exp([1, 3]) + np.exp([2, 4])), rtol=1e-6)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_cumprod(device, dim):
    check(T(X, device).cumsum(dim), np.cumsum(X, axis=dim))
    check(T(X, device).cumprod(dim), np.cumprod(X, axis=dim))
    x = np.array([[2.0, 0.0, 3.0, -1.0, 0.5], [1.0, 2.0, 3.0, 4.0, 5.0]])
    check(T(x, device).cumprod(-1), np.cumprod(x, axis=-1))  # zeros


def test_cumsum_cumprod_dtypes_and_edges(device):
    xi = T([[1, 2, 3], [4, 5, 6]], device, dtype=plugrad.int32)
    check(xi.cumsum(1), [[1, 3, 6], [4, 9, 15]], plugrad.int64)
    check(xi.cumprod(1), [[1, 2, 6], [4, 20, 120]], plugrad.int64)
    check(T([True, True], device).cumsum(0), [1, 2], plugrad.int64)
    check(plugrad.cumprod(xi, 0, dtype=plugrad.float64), [[1, 2, 3], [4, 10, 18]],
          plugrad.float64)
    check(T(2.5, device).cumsum(0), 2.5)
    check(T(2.5, device).cumprod(0), 2.5)
    check(T(np.zeros((0, 3)), device).cumprod(0), np.zeros((0, 3)))
    check(T(np.zeros((0, 3)), device).cumsum(1), np.zeros((0, 3)))


@pytest.mark.parametrize("p", [2, "fro", 1, 3, 0.5, math.inf, -math.inf, 0])
def test_norm(device, p, ):
    x = T(X, device)
    q = 2 if p == "fro" else p
    flat = X.reshape(-1)
    check(x.norm(p), np.linalg.norm(flat, ord=q))
    check(x.norm(p, dim=1), np.linalg.norm(X, ord=q, axis=1))
    check(x.norm(p, dim=(0, 2), keepdim=True),
          np.linalg.norm(np.moveaxis(X, 1, 0).reshape(3, -1), ord=q, axis=1).reshape(1, 3, 1))


def test_norm_rejects_ints_and_unknown_p(device):
    with pytest.raises(TypeError, match=r"norm\(\).*floating point.*int64"):
        T([3, 4], device).norm()
    with pytest.raises(ValueError, match="p='nuc' is not supported"):
        T([3.0, 4.0], device).norm("nuc")


def test_all_any(device):
    xi = np.array([[0, 1, 2], [3, 4, 5]])
    x = T(xi, device)
    assert bool(x.any()) and not bool(x.all())
    check(x.all(1), [False, True], plugrad.bool)
    check(x.any(0, keepdim=True), [[True, True, True]], plugrad.bool)
    check(T(X > 0, device).all((0, 1)), np.all(X > 0, axis=(0, 1)))
    check(T(X, device).any(-1), np.any(X != 0, axis=-1))


def test_all_any_empty_is_the_identity(device):
    e = T(np.zeros((0, 3)), device)
    check(e.all(), True, plugrad.bool)
    check(e.any(), False, plugrad.bool)
    check(e.all(0), [True] * 3)
    check(e.any(0, keepdim=True), [[False] * 3])
    check(e.any(1), np.zeros(0, bool))


def test_count_nonzero_and_nansum(device):
    x = np.array([[0.0, 1.0, math.nan], [2.0, 0.0, 3.0]])
    check(T(x, device).count_nonzero(), 4, plugrad.int64)
    check(T(x, device).count_nonzero(1), [2, 2])
    check(T(x, device).nansum(1), [1.0, 5.0])


# ---------------------------------------------------------------------- dtypes, 0-d, empty
def test_sum_of_ints_and_bools_is_int64(device):
    xi = T([[1, 2], [3, 4]], device, dtype=plugrad.int32)
    check(xi.sum(), 10, plugrad.int64)
    check(xi.sum(0), [4, 6], plugrad.int64)
    check(xi.prod(), 24, plugrad.int64)
    check(T([True, False, True], device).sum(), 2, plugrad.int64)
    check(xi.sum(dtype=plugrad.float64), 10.0, plugrad.float64)
    check(xi.amax(), 4, plugrad.int32)
    check(xi.max(1).values, [2, 4], plugrad.int32)


def test_mean_of_int_raises_like_pytorch(device):
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype.*Int32"):
        T([1, 2], device, dtype=plugrad.int32).mean()
    check(T([1, 2], device).mean(dtype=plugrad.float64), 1.5, plugrad.float64)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "logsumexp"])
def test_zero_dim_input(device, name):
    s = T(2.5, device)
    want = {"logsumexp": 2.5, "prod": 2.5}.get(name, 2.5)
    check(getattr(s, name)(0), want)
    check(getattr(s, name)(-1, keepdim=True), want)


def test_zero_dim_max_with_dim(device):
    v, i = T(2.5, device).max(0)
    check(v, 2.5)
    check(i, 0, plugrad.int64)
    check(T(2.5, device).argmax(0), 0, plugrad.int64)


def test_empty_sum_prod_mean_logsumexp(device):
    e = T(np.zeros((0, 3)), device)
    check(e.sum(), 0.0)
    check(e.prod(), 1.0)
    check(e.sum(0), np.zeros(3))
    check(e.sum(1), np.zeros(0))
    check(e.mean(), math.nan)
    check(e.mean(0), np.full(3, math.nan))
    check(e.logsumexp(0), np.full(3, -math.inf))
    check(e.logsumexp((0, 1), keepdim=True), [[-math.inf]])
    check(e.amax(1), np.zeros(0))


@pytest.mark.parametrize("name", ["max", "min", "amax", "argmax", "argmin"])
def test_empty_max_raises_clearly(device, name):
    e = T(np.zeros((0, 3)), device)
    with pytest.raises(RuntimeError, match=rf"{name}\(\): Expected reduction dim to be "
                                           r"specified.*input shape \[0, 3\]"):
        getattr(e, name)()
    with pytest.raises(IndexError, match=rf"{name}\(\): Expected reduction dim 0 to have "
                                         r"non-zero size \(input shape \[0, 3\]\)"):
        getattr(e, name)(0)


def test_bad_dims_raise(device):
    x = T(X, device)
    with pytest.raises(IndexError, match="sum"):
        x.sum(3)
    with pytest.raises(RuntimeError, match=r"dim \[0, 0\] appears multiple times"):
        x.sum((0, 0))


# ---------------------------------------------------------------------- gradients
def leaf(a, device):
    return T(np.asarray(a, dtype=np.float64), device, requires_grad=True)


SMALL = RNG.standard_normal((2, 3))

GRAD_CASES = {
    "sum": lambda x: x.sum(),
    "sum_dim": lambda x: x.sum(-1, keepdim=True),
    "mean": lambda x: x.mean((0, 1)),
    "mean_dim": lambda x: x.mean(0),
    "prod": lambda x: x.prod(),
    "prod_dim": lambda x: x.prod(1),
    "var": lambda x: x.var(1),
    "std": lambda x: x.std(correction=0),
    "amax": lambda x: x.amax(1),
    "amin": lambda x: x.amin(0, keepdim=True),
    "max": lambda x: x.max(),
    "max_dim": lambda x: x.max(1),
    "min_dim": lambda x: x.min(0, keepdim=True),
    "logsumexp": lambda x: x.logsumexp(1),
    "cumsum": lambda x: x.cumsum(1),
    "cumprod": lambda x: x.cumprod(1),
    "norm": lambda x: x.norm(),
    "norm_dim": lambda x: x.norm(dim=0),
    "norm_1": lambda x: x.norm(1, dim=1),
    "norm_3": lambda x: x.norm(3),
    "sum_f32_to_f64": lambda x: x.sum(1, dtype=plugrad.float64),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradcheck(device, name):
    assert gradcheck(GRAD_CASES[name], (leaf(SMALL, device),))


@pytest.mark.parametrize("name", ["prod", "prod_dim", "cumprod", "logsumexp", "norm", "var"])
def test_gradgradcheck(device, name):
    assert gradgradcheck(GRAD_CASES[name], (leaf(SMALL, device),))


def test_prod_gradient_with_zeros(device):
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.5, -2.0, 0.5]])
    for fn in [lambda a: a.prod(1), lambda a: a.prod(), lambda a: a.prod(0, keepdim=True),
               lambda a: a.cumprod(1)]:
        assert gradcheck(fn, (leaf(x, device),))
        assert gradgradcheck(fn, (leaf(x, device),))
    g = leaf(x, device)
    g.prod(1).sum().backward()
    check(g.grad, [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-1.0, 0.75, -3.0]])


def test_full_max_splits_ties_evenly(device):
    x = leaf([[1.0, 3.0], [3.0, 3.0]], device)
    x.max().backward()
    check(x.grad, [[0.0, 1 / 3], [1 / 3, 1 / 3]])
    y = leaf([[1.0, 3.0], [3.0, 3.0]], device)
    y.amax(1).sum().backward()
    check(y.grad, [[0.0, 1.0], [0.5, 0.5]])


def test_max_with_dim_sends_gradient_to_one_index(device):
    x = leaf([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], device)
    values, indices = x.max(1)
    check(indices, [1, 0])
    values.sum().backward()
    check(x.grad, [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    y = leaf([[1.0, 2.0], [1.0, 5.0]], device)  # a tie in column 0: the first wins
    y.min(0).values.sum().backward()
    check(y.grad, [[1.0, 1.0], [0.0, 0.0]])


def test_norm_gradient_at_zero_is_zero(device):
    x = leaf([[0.0, 0.0], [3.0, 4.0]], device)
    x.norm(dim=1).sum().backward()
    check(x.grad, [[0.0, 0.0], [0.6, 0.8]])
    assert gradgradcheck(lambda a: a.norm(dim=1), (leaf([[0.5, 0.0], [3.0, 4.0]], device),))


def test_sum_with_wider_dtype_gives_input_dtype_gradient(device):
    x = T([1.0, 2.0], device, requires_grad=True, dtype=plugrad.float32)
    x.sum(dtype=plugrad.float64).backward()
    assert x.grad.dtype is plugrad.float32
    assert_array_equal(np.asarray(x.grad), [1.0, 1.0])


def test_torch_min_function_exists(device):
    check(plugrad.min(T([3.0, 1.0], device)), 1.0)
