"""Numerical edge cases pinned on every backend; any floating-point warning is an error.

plugrad's conventions (see docs/errors.md, "Numerics") follow PyTorch; where PyTorch is
itself inconsistent, the choice is written down there and pinned here.
"""
import math
import warnings

import pytest

import plugrad as pg
import plugrad.nn.functional as F

INF = math.inf


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def value_and_grad(fn, values, device, dtype=pg.float32):
    x = pg.tensor(values, device=device, dtype=dtype, requires_grad=True)
    y = fn(x)
    y.sum().backward()
    return y.tolist(), x.grad.tolist()


def close(a, b, tol=1e-5):
    if isinstance(a, list):
        return len(a) == len(b) and all(close(u, v, tol) for u, v in zip(a, b))
    if math.isnan(b):
        return math.isnan(a)
    if math.isinf(b):
        return a == b
    return abs(a - b) <= tol * max(1.0, abs(b))


# ---------------------------------------------------------------------- large logits
def test_log_softmax_with_logits_pm1000(device):
    y, g = value_and_grad(lambda x: F.log_softmax(x, dim=1), [[1000.0, -1000.0, 0.0]], device)
    assert close(y, [[0.0, -2000.0, -1000.0]])
    assert close(g, [[-2.0, 1.0, 1.0]])


def test_cross_entropy_with_logits_pm1000(device):
    logits = pg.tensor([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 0.0]], device=device,
                       requires_grad=True)
    loss = F.cross_entropy(logits, pg.tensor([1, 1], device=device))
    loss.backward()
    assert close(loss.item(), 1000.0)  # (2000 + 0) / 2
    assert close(logits.grad.tolist(), [[0.5, -0.5, 0.0], [0.0, 0.0, 0.0]])


def test_logsumexp_with_pm1000(device):
    y, g = value_and_grad(lambda x: x.logsumexp(0), [1000.0, -1000.0, 1000.0], device)
    assert close(y, 1000.0 + math.log(2.0))
    assert close(g, [0.5, 0.0, 0.5], tol=1e-4)
    y, g = value_and_grad(lambda x: x.logsumexp(0), [-1000.0, -1000.0], device)
    assert close(y, -1000.0 + math.log(2.0))
    assert close(g, [0.5, 0.5], tol=1e-4)  # exp(x - lse): float32 spacing at 1000 is 6e-5


def test_logsumexp_of_all_minus_inf_is_minus_inf(device):
    assert pg.tensor([-INF, -INF], device=device).logsumexp(0).item() == -INF


def test_softmax_with_minus_inf_entries(device):
    y, g = value_and_grad(lambda x: F.softmax(x, dim=0), [-INF, 0.0, 0.0], device)
    assert close(y, [0.0, 0.5, 0.5])
    assert close(g, [0.0, 0.0, 0.0])
    masked = pg.tensor([[0.0, -INF], [-INF, 0.0]], device=device)
    assert close(F.softmax(masked, dim=1).tolist(), [[1.0, 0.0], [0.0, 1.0]])
    assert close(F.log_softmax(masked, dim=1).tolist(), [[0.0, -INF], [-INF, 0.0]])


def test_softmax_of_all_minus_inf_row_is_nan(device):
    # As PyTorch: a fully masked row has no distribution.
    out = F.softmax(pg.tensor([-INF, -INF], device=device), dim=0).tolist()
    assert all(math.isnan(v) for v in out)


def test_sigmoid_pm1000_without_overflow_warning(device):
    y, g = value_and_grad(lambda x: x.sigmoid(), [1000.0, -1000.0, 0.0], device)
    assert y == [1.0, 0.0, 0.5]
    assert g == [0.0, 0.0, 0.25]
    assert F.logsigmoid(pg.tensor([-1000.0], device=device)).item() == -1000.0


def test_bce_with_logits_extreme(device):
    loss = F.binary_cross_entropy_with_logits(pg.tensor([-200.0], device=device),
                                              pg.tensor([1.0], device=device))
    assert loss.item() == 200.0
    y, g = value_and_grad(
        lambda x: F.binary_cross_entropy_with_logits(
            x, pg.tensor([1.0, 0.0, 1.0], device=device), reduction="none"),
        [-200.0, 200.0, 1000.0], device)
    assert y == [200.0, 200.0, 0.0]
    assert close(g, [-1.0, 1.0, 0.0])


def test_bce_clamps_log_at_minus_100(device):
    y, _ = value_and_grad(
        lambda x: F.binary_cross_entropy(x, pg.tensor([1.0, 0.0, 1.0], device=device),
                                         reduction="none"), [0.0, 1.0, 1.0], device)
    assert y == [100.0, 100.0, 0.0]


def test_softplus_large_and_small(device):
    y, g = value_and_grad(F.softplus, [1000.0, -1000.0, 0.0], device)
    assert y[0] == 1000.0 and y[1] == 0.0 and close(y[2], math.log(2.0))
    assert g == [1.0, 0.0, 0.5]


# ---------------------------------------------------------------------- kinks
@pytest.mark.parametrize("name, fn, grad", [
    ("sqrt", lambda x: x.sqrt(), INF),
    ("log", lambda x: x.log(), INF),
    ("abs", lambda x: x.abs(), 0.0),
    ("relu", lambda x: x.relu(), 0.0),
    ("sign", lambda x: x.sign(), 0.0),
    ("F.relu", lambda x: F.relu(x), 0.0),
])
def test_gradient_at_zero_kink(device, name, fn, grad):
    _, g = value_and_grad(fn, [0.0], device)
    assert g == [grad]


def test_norm_of_zeros_has_zero_gradient(device):
    y, g = value_and_grad(lambda x: x.norm(), [0.0, 0.0, 0.0], device)
    assert y == 0.0 and g == [0.0, 0.0, 0.0]


def test_clamp_at_the_boundary_passes_gradient(device):
    # plugrad's convention (PyTorch's clamp): min <= x <= max is "inside", boundaries included.
    y, g = value_and_grad(lambda x: x.clamp(0.0, 1.0), [0.0, 1.0, 0.5, -1.0, 2.0], device)
    assert y == [0.0, 1.0, 0.5, 0.0, 1.0]
    assert g == [1.0, 1.0, 1.0, 0.0, 0.0]


@pytest.mark.parametrize("name, fn, xs, grads", [
    ("clamp_min", lambda x: x.clamp_min(0.0), [-1.0, 0.0, 1.0], [0.0, 1.0, 1.0]),
    ("clamp_max", lambda x: x.clamp_max(1.0), [0.0, 1.0, 2.0], [1.0, 1.0, 0.0]),
])
def test_bounded_activations_pass_gradient_at_the_boundary(device, name, fn, xs, grads):
    _, g = value_and_grad(fn, xs, device)
    assert g == grads


@pytest.mark.parametrize("name, fn, xs, grads", [
    ("hardtanh", lambda x: F.hardtanh(x), [-2.0, -1.0, 0.5, 1.0, 2.0], [0.0, 0.0, 1.0, 0.0, 0.0]),
    ("relu6", lambda x: F.relu6(x), [-1.0, 0.0, 3.0, 6.0, 7.0], [0.0, 0.0, 1.0, 0.0, 0.0]),
])
def test_hardtanh_relu6_pass_gradient_only_strictly_inside(device, name, fn, xs, grads):
    # PyTorch's hardtanh_backward, unlike its clamp: 0 at the bounds (docs/conventions.md)
    _, g = value_and_grad(fn, xs, device)
    assert g == grads


def test_max_min_full_reduction_split_ties_evenly(device):
    _, g = value_and_grad(lambda x: x.max(), [1.0, 3.0, 3.0], device)
    assert g == [0.0, 0.5, 0.5]
    _, g = value_and_grad(lambda x: x.min(), [2.0, 2.0, 2.0, 5.0], device)
    assert close(g, [1 / 3, 1 / 3, 1 / 3, 0.0])
    _, g = value_and_grad(lambda x: x.amax(0), [3.0, 1.0, 3.0], device)
    assert g == [0.5, 0.0, 0.5]


def test_max_with_dim_sends_gradient_to_one_index(device):
    x = pg.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], device=device, requires_grad=True)
    values, indices = x.max(1)
    values.sum().backward()
    assert values.tolist() == [3.0, 2.0]
    assert indices.tolist() == [1, 0]  # the first of the ties
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]


def test_zero_to_the_zero(device):
    a = pg.tensor(0.0, device=device, requires_grad=True)
    b = pg.tensor(0.0, device=device, requires_grad=True)
    y = a ** b
    y.backward()
    assert y.item() == 1.0 and a.grad.item() == 0.0 and b.grad.item() == 0.0
    for fn in (lambda x: x ** 0, lambda x: x ** 0.0, lambda x: 0.0 ** x):
        y, g = value_and_grad(fn, [0.0], device)
        assert y == [1.0] and g == [0.0]


# ---------------------------------------------------------------------- empty reductions
def test_empty_sum_is_zero(device):
    assert pg.zeros(0, device=device).sum().item() == 0.0
    assert pg.zeros(0, 3, device=device).sum(0).tolist() == [0.0, 0.0, 0.0]


def test_empty_mean_is_nan(device):
    assert math.isnan(pg.zeros(0, device=device).mean().item())


def test_empty_max_raises(device):
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified "
                                           r"for input.numel\(\) == 0"):
        pg.zeros(0, device=device).max()
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero "
                                         r"size"):
        pg.zeros(0, 3, device=device).max(0)


# ---------------------------------------------------------------------- float16
N16 = 70_000


def test_float16_sum_accumulates_in_float32(device):
    # Partial sums stay exact: summing in float16 stalls at 2048 along a strided axis.
    ones = pg.ones(60_000, 2, dtype=pg.float16, device=device)
    assert ones.sum(0).tolist() == [60000.0, 60000.0]
    assert ones.sum().item() == INF  # 120000 does not fit float16 (max 65504): inf, as PyTorch
    small = pg.full((N16, 2), 0.01, dtype=pg.float16, device=device).sum(0)
    assert small.dtype is pg.float16
    assert close(small.tolist(), [700.5, 700.5], tol=1e-3)


def test_float16_sum_of_70000_ones(device):
    ones = pg.ones(N16, dtype=pg.float16, device=device)
    # The exact total 70000 needs a wider result dtype; in float16 it overflows to inf.
    assert ones.sum(dtype=pg.float32).item() == 70000.0
    assert ones.sum().item() == INF
    assert ones.mean().item() == 1.0  # mean sums and divides in float32
    assert ones.mean().dtype is pg.float16


def test_float16_max_over_70000(device):
    x = pg.full((N16,), -65504.0, dtype=pg.float16, device=device)
    x[N16 - 7] = 65504.0
    assert x.max().item() == 65504.0
    assert x.min().item() == -65504.0
    assert x.argmax().item() == N16 - 7


def test_float16_mean_gradient(device):
    x = pg.ones(N16, dtype=pg.float16, device=device, requires_grad=True)
    x.mean().backward()
    assert x.grad.dtype is pg.float16
    assert close(x.grad[0].item(), 1 / N16, tol=1e-3)
