"""Special values, kinks and broadcast gradients of core ops against PyTorch: values, first
and second derivatives (float64) where the inputs are nan / ±inf / ±0 / huge / subnormal or
sit on a kink. Each case is one the differential suite (``tests/differential``) found."""
import math

import numpy as np
import pytest

import plugrad

torch = pytest.importorskip("torch")

NAN, INF, BIG, TINY = math.nan, math.inf, 1.7976931348623157e308, 2.2250738585072014e-308


class Num(float):
    """A Python number argument (not made a tensor)."""


def _grads(lib, out, leaves, seed, create_graph):
    """Gradients of a weighted sum, the weights of both signs (as the differential suite's:
    a broadcast gradient's order of summing matters where ``inf - inf`` may arise)."""
    rng = np.random.default_rng(seed)
    shape = tuple(out.shape)
    w = rng.uniform(0.5, 1.5, shape)
    if seed % 10 == 0:  # signs of a checkerboard: neighbours along every axis differ
        w *= (-1.0) ** sum(np.indices(shape)) if shape else -1.0
    else:
        w *= np.where(rng.random(shape) < 0.5, -1, 1)
    loss = (out * lib.tensor(w, dtype=out.dtype, device=getattr(out, "device", None))).sum()
    return lib.autograd.grad(loss, leaves, allow_unused=True, create_graph=create_graph)


def _np(t):
    return None if t is None else np.asarray(t.detach().cpu() if hasattr(t, "cpu") else t,
                                             dtype=np.float64)


def _same(want, got, what, rtol, atol=1e-300):
    if want is None or got is None:
        assert want is None and got is None, what
        return
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def compare(name, arrays, device, *, kwargs=None, order=2, rtol=1e-10, atol=1e-300,
            grad_of=None, seeds=(0, 1, 2)):
    """``name(*arrays, **kwargs)`` (``torch.name`` / ``plugrad.name``, or a dotted path such
    as ``nn.functional.mish``) in float64: value, then ``order`` levels of gradients of
    weighted sums (one set of weights per seed), for the inputs ``grad_of`` (indices;
    default all)."""
    for seed in seeds:
        _compare(name, arrays, device, kwargs or {}, order, (rtol, atol), grad_of, seed)


def _compare(name, arrays, device, kwargs, order, tol, grad_of, seed):
    grad_of = [i for i, a in enumerate(arrays) if not isinstance(a, Num)] if grad_of is None \
        else grad_of
    res = {}
    for lib in (torch, plugrad):
        fn = lib
        for part in name.split("."):
            fn = getattr(fn, part)
        dev = {} if lib is torch else {"device": device}
        args = [float(a) if isinstance(a, Num) else lib.tensor(np.asarray(a), **dev)
                for a in arrays]
        leaves = []
        for i in grad_of:
            args[i] = args[i].requires_grad_(True)
            leaves.append(args[i])
        out = fn(*args, **kwargs)
        got = [_np(out)]
        outs = [out]
        for k in range(order):
            gs = _grads(lib, outs[0], leaves, seed * 10 + k, create_graph=k + 1 < order) if \
                outs[0] is not None and outs[0].requires_grad else [None] * len(leaves)
            got += [_np(g) for g in gs]
            live = [g for g in gs if g is not None and g.requires_grad]
            outs = [sum((g * (i + 1)).sum() for i, g in enumerate(live))] if live else [None]
        res[lib] = got
    for i, (want, got) in enumerate(zip(res[torch], res[plugrad])):
        what = f"{name} seed {seed} " + ("value" if i == 0 else
                                         f"order-{1 + (i - 1) // len(grad_of)} grad")
        _same(want, got, what, *tol)


@pytest.mark.parametrize("arrays", [
    # a broadcast result: PyTorch multiplies g by 1/t2 before summing (inf - inf is NaN)
    ([[0.0], [-1.0]], [1.0, 2.0, 0.33], [2.0, 0.0, -1.66]),
    ([[1.19], [-1.81], [-0.94]], 0.99, [0.0, 2.0, 0.56]),
])
def test_addcdiv_broadcast_gradients(device, arrays):
    compare("addcdiv", arrays, device)
    compare("addcdiv", arrays, device, kwargs={"value": -0.5})


def test_atan2_gradient_where_the_squares_vanish(device):
    """``1 / (a^2 + b^2)`` is 0 where the sum is 0 (PyTorch's masked reciprocal)."""
    a = [5e-324, 0.0, TINY, -4.49e307, 1e200, 1e-200, 1e-160, NAN, -INF, 2.0]
    b = [-TINY, 0.41, 0.0, -BIG, 1e200, 1e-200, 0.0, 1.0, -4.49e307, -3.0]
    compare("atan2", (a, b), device)


def test_atanh_double_backward_at_huge_inputs(device):
    """``g * (1 - x.pow(2)).reciprocal()``: ``2 * x`` overflows in the double backward."""
    compare("atanh", ([-0.27, -BIG, 0.61, 1e200, -1.0, 1.0, NAN, INF, 0.0],), device)


@pytest.mark.parametrize("name", ["pow", "float_power"])
@pytest.mark.parametrize("a, b", [
    ([0.0, 1.72, 0.5, -0.0, 2.5], [1.83, 0.0, 0.0, 2.0, 1.0]),          # b == 0, a == 0
    ([-5e-324, 0.68, TINY, -5e-324, 0.0], [5e-324, 2.47, -5e-324, TINY, 0.0]),
    ([0.39, NAN, INF, 0.64, -BIG], [4.49e307, 1.2, 0.5, 8.99e307, 1.97]),
])
def test_pow_gradients_at_special_values(device, name, a, b):
    """PyTorch's terms: ``g * (b * a**(b-1))`` masked where ``b == 0`` (NaN in the double
    backward where ``a**(b-1)`` is infinite), ``g * (a**b * log(a))``."""
    compare(name, (a, b), device)
    compare(name, (a, Num(2.0)), device)
    compare(name, (a, Num(0.5)), device)
    compare(name, (Num(2.0), b), device)


def test_fmod_and_trunc_division_double_backward(device):
    """``d fmod / d b = -div(a, b, rounding_mode='trunc')``, whose own gradient is 0 (not
    ``0 * d(a / b)``, NaN at ``b == 0``)."""
    a = [-3.76, 2.95, -4.46, 1.61, INF, -INF, 0.0, 5e-324]
    b = [-0.77, 0.0, 0.0, 1.0, -1.46, 4.49e307, -5e-324, 2.37]
    compare("fmod", (a, b), device)
    compare("div", (a, b), device, kwargs={"rounding_mode": "trunc"})


def test_div_gradient_of_the_divisor(device):
    """``-g * ((a / b) / b)`` as PyTorch: ``b * b`` under/overflows first."""
    a = [-TINY, -0.58, 0.0, BIG, -BIG, -0.11, 0.0, -1.77]
    b = [TINY, 1.32, TINY, 4.49e307, -1.99, 5e-324, 5e-324, -INF]
    compare("div", (a, b), device)


def test_sinc_gradients_and_half_values(device):
    """PyTorch's rule masked where ``x x pi`` is 0 (NaN double backward there), and half
    inputs in float32 (``pi x`` overflows float16 near its maximum)."""
    compare("sinc", ([-1.55, 0.0, -0.0, 5e-324, TINY, 1e-160, 0.1, INF, NAN, 1e300],), device)
    x = [1.707, -0.418, 65504.0, 32752.0, -16376.0, -INF, 0.0]
    want = torch.sinc(torch.tensor(x, dtype=torch.float16)).float().numpy()
    got = plugrad.sinc(plugrad.tensor(x, dtype=plugrad.float16, device=device))
    np.testing.assert_allclose(np.asarray(got.float()), want, rtol=1e-3, equal_nan=True)


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8])
def test_searchsorted_is_torchs_binary_search_with_nan(device, n, right):
    """NaN entries (sorted last) send a probe right, so the result follows the probes."""
    rng = np.random.default_rng(n)
    seq = np.concatenate([np.sort(rng.standard_normal(n)), [NAN]])
    vals = np.array([NAN, -1.0, 0.0, 1.0, 5.0, -BIG, BIG, INF, -INF])
    for s in (seq, seq[:-1]):
        want = torch.searchsorted(torch.tensor(s), torch.tensor(vals), right=right).numpy()
        got = plugrad.searchsorted(plugrad.tensor(s, device=device),
                                   plugrad.tensor(vals, device=device), right=right)
        np.testing.assert_array_equal(np.asarray(got), want)
    batch = np.stack([seq, seq[::-1]])
    want = torch.searchsorted(torch.tensor(batch), torch.tensor(np.stack([vals, vals])),
                              right=right).numpy()
    got = plugrad.searchsorted(plugrad.tensor(batch, device=device),
                               plugrad.tensor(np.stack([vals, vals]), device=device),
                               right=right)
    np.testing.assert_array_equal(np.asarray(got), want)
