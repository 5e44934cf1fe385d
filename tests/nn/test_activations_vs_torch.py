"""The activations of issue 15 against PyTorch: values, gradients (at the kinks too),
in-place forms, modules and their reprs, on every built-in backend."""
import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F

from .helpers import host
from .torch_compare import compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional

#: values around and at every kink of the functions below
KINKS = np.array([-4.0, -3.0, -2.5, -1.0, -0.5, -0.3, 0.0, 0.3, 0.5, 1.0, 2.5, 3.0, 4.0,
                  25.0, -25.0])

CASES = [
    ("selu", {}), ("celu", {}), ("celu", {"alpha": 0.5}), ("hardswish", {}),
    ("hardsigmoid", {}), ("hardshrink", {}), ("hardshrink", {"lambd": 1.0}),
    ("softshrink", {}), ("softshrink", {"lambd": 1.0}), ("tanhshrink", {}),
    ("threshold", {"threshold": 0.5, "value": -2.0}), ("threshold", {"threshold": 0.0,
                                                                     "value": 0.0}),
    ("rrelu", {}), ("rrelu", {"lower": 0.2, "upper": 0.4}),
    ("softsign", {}), ("logsigmoid", {}), ("mish", {}), ("softplus", {}),
    ("softplus", {"beta": 2.0, "threshold": 1.0}), ("elu", {"alpha": 0.7}),
    ("hardtanh", {"min_val": -0.5, "max_val": 1.0}), ("leaky_relu", {"negative_slope": 0.2}),
    ("relu6", {}),
]


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_values_and_gradients_at_kinks(device, name, kw):
    compare(getattr(F, name), getattr(TF, name), (KINKS.copy(),), device, kwargs=kw)
    x = np.random.default_rng(1).uniform(-4, 4, (3, 4))
    compare(getattr(F, name), getattr(TF, name), (x,), device, kwargs=kw)


@pytest.mark.parametrize("name,kw", [c for c in CASES if c[0] not in (
    "hardshrink", "softshrink", "tanhshrink", "softsign", "logsigmoid", "softplus")],
    ids=lambda c: str(c))
def test_inplace_forms(device, name, kw):
    """``inplace=True`` writes into the input and backpropagates as PyTorch's form (through
    a non-leaf, since a leaf needing grad may not be changed in place)."""
    x = np.random.default_rng(2).uniform(-4, 4, (2, 5))
    ours = getattr(F, name)
    theirs = getattr(TF, name)
    compare(lambda t, **k: ours(t * 1.0, inplace=True, **k),
            lambda t, **k: theirs(t * 1.0, inplace=True, **k), (x,), device, kwargs=kw)
    base = plugrad.tensor(x, dtype=plugrad.float64, device=device)
    out = ours(base, inplace=True, **kw)
    assert out is base
    np.testing.assert_allclose(host(base), theirs(torch.from_numpy(x), **kw).numpy(),
                               atol=1e-12)


@pytest.mark.parametrize("name", ["threshold_", "elu_", "hardtanh_", "leaky_relu_", "selu_",
                                  "celu_", "rrelu_"])
def test_underscore_spellings(device, name):
    x = np.random.default_rng(3).uniform(-2, 2, (2, 3))
    args = (0.1, 5.0) if name == "threshold_" else ()
    ours = plugrad.tensor(x, dtype=plugrad.float64, device=device)
    theirs = torch.from_numpy(x.copy())
    assert getattr(F, name)(ours, *args) is ours
    getattr(TF, name)(theirs, *args)
    np.testing.assert_allclose(host(ours), theirs.numpy(), atol=1e-12)


def test_threshold_on_integers_and_nan(device):
    x = plugrad.tensor([-2, 0, 3], device=device)
    assert F.threshold(x, 0, 7).tolist() == TF.threshold(torch.tensor([-2, 0, 3]), 0, 7).tolist()
    y = F.threshold(plugrad.tensor([float("nan"), 1.0], device=device), 0.5, 0.0)
    assert np.isnan(host(y)[0]) and host(y)[1] == 1.0


def test_rrelu_training_draws_slopes_in_range(device):
    x = plugrad.full((2000,), -1.0, dtype=plugrad.float64, device=device, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -host(y)
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and slopes.std() > 0.03
    y.sum().backward()
    np.testing.assert_allclose(host(x.grad), slopes)  # the gradient is the drawn slope
    pos = F.rrelu(plugrad.ones(5, device=device), training=True)
    assert host(pos).tolist() == [1.0] * 5


@pytest.mark.parametrize("shape,n", [((3, 4), 4), ((2, 3, 5), 3), ((2, 3, 2, 2), 1), ((4,), 1),
                                     ((), 1)])
def test_prelu(device, shape, n):
    rng = np.random.default_rng(4)
    compare(F.prelu, TF.prelu, (rng.uniform(-2, 2, shape), rng.uniform(0, 0.5, (n,))), device)


def test_prelu_errors():
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        F.prelu(plugrad.ones(2, 3), plugrad.ones(2))
    with pytest.raises(RuntimeError, match="channel size = 1"):  # 1-D: one channel
        F.prelu(plugrad.ones(4), plugrad.ones(4))


def test_softmin(device):
    x = np.random.default_rng(5).standard_normal((3, 4))
    compare(F.softmin, TF.softmin, (x,), device, kwargs={"dim": 1})
    compare(F.softmin, TF.softmin, (x,), device, kwargs={"dim": 0})


def test_grad_fn_names():
    x = plugrad.randn(3, requires_grad=True)
    for name in ("selu", "celu", "hardswish", "hardsigmoid", "hardshrink", "softshrink",
                 "rrelu"):
        ours = type(getattr(F, name)(x).grad_fn).__name__
        theirs = type(getattr(TF, name)(torch.randn(3, requires_grad=True)).grad_fn).__name__
        assert ours == theirs, name


MODULES = [("SELU", ()), ("CELU", (0.5,)), ("Hardswish", ()), ("Hardsigmoid", ()),
           ("Hardshrink", (0.7,)), ("Softshrink", (0.7,)), ("Tanhshrink", ()),
           ("Threshold", (0.1, 20.0)), ("Softmin", (1,)), ("Softsign", ()), ("GLU", ()),
           ("LogSigmoid", ()), ("Hardtanh", (-0.5, 0.5)), ("Softmax2d", ()),
           ("RReLU", (0.1, 0.3))]


@pytest.mark.parametrize("name,args", MODULES, ids=[m[0] for m in MODULES])
def test_modules(device, name, args):
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    ours.eval()
    theirs.eval()
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(6).uniform(-3, 3, (2, 4, 3, 2))
    compare(ours, theirs, (x,), device)


def test_prelu_module_matches_torch_state_dict(device):
    ours, theirs = nn.PReLU(3, init=0.1), torch.nn.PReLU(3, init=0.1)
    assert repr(ours) == repr(theirs)
    sd = ours.state_dict()
    assert list(sd) == list(theirs.state_dict()) == ["weight"]
    np.testing.assert_allclose(host(sd["weight"]), theirs.weight.detach().numpy())
    ours.to(device).double()
    x = np.random.default_rng(7).uniform(-2, 2, (2, 3, 4))
    y = ours(plugrad.tensor(x, device=device))
    y.sum().backward()
    t = theirs.double()(torch.from_numpy(x))
    t.sum().backward()
    np.testing.assert_allclose(host(y), t.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(host(ours.weight.grad), theirs.weight.grad.numpy(), atol=1e-12)
