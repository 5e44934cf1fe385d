"""nn.functional helpers, nn.init and nn.utils against closed forms."""
import copy
import math

import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F
from plugrad.nn import init
from plugrad.nn.utils import (clip_grad_norm_, clip_grad_value_, parameters_to_vector,
                              vector_to_parameters)

from .helpers import host, on


def test_one_hot_normalize_pad(device):
    idx = plugrad.tensor([0, 2, 1], device=device)
    assert F.one_hot(idx).tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert tuple(F.one_hot(idx, 5).shape) == (3, 5)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(idx, 2)
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(host(F.normalize(on(x, device))), [[0.6, 0.8], [0.0, 0.0]])
    p = F.pad(on(np.ones((1, 2)), device), (1, 2))
    assert p.tolist() == [[0.0, 1.0, 1.0, 0.0, 0.0]]


def test_unfold_fold_round_trip(device):
    x = on(np.arange(16.0).reshape(1, 1, 4, 4), device)
    cols = F.unfold(x, 2, stride=2)
    assert tuple(cols.shape) == (1, 4, 4)
    assert cols.tolist()[0][0] == [0.0, 2.0, 8.0, 10.0]
    np.testing.assert_allclose(host(F.fold(cols, (4, 4), 2, stride=2)), host(x))


def test_softplus_leaky_relu_silu_grads(device):
    x = on(np.array([-3.0, -0.2, 0.4, 25.0]), device, requires_grad=True)
    assert plugrad.autograd.gradcheck(lambda x: F.softplus(x), (x,))
    assert plugrad.autograd.gradcheck(lambda x: F.leaky_relu(x, 0.2), (x,))
    assert plugrad.autograd.gradcheck(lambda x: F.silu(x), (x,))
    assert host(F.softplus(x))[-1] == 25.0  # linear above the threshold


def test_linear_double_backward(device):
    rng = np.random.default_rng(0)
    x = on(rng.standard_normal((2, 3)), device, requires_grad=True)
    w = on(rng.standard_normal((4, 3)), device, requires_grad=True)
    b = on(rng.standard_normal(4), device, requires_grad=True)
    assert plugrad.autograd.gradgradcheck(F.linear, (x, w, b))


def test_dropout_inplace_and_p_one():
    x = plugrad.ones(10)
    assert F.dropout(x, 1.0).tolist() == [0.0] * 10
    y = plugrad.ones(1000)
    F.dropout(y, 0.5, inplace=True)
    assert 0.3 < (host(y) == 0).mean() < 0.7


def test_calculate_gain_and_fans():
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("tanh") == 5 / 3
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swishy")
    assert init._calculate_fan_in_and_fan_out(plugrad.empty(8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError, match="fewer than 2"):
        init._calculate_fan_in_and_fan_out(plugrad.empty(3))


def test_initialisers_in_place_and_not_recorded():
    w = nn.Parameter(plugrad.empty(200, 300))
    for fn, check in [
        (lambda t: init.uniform_(t, -2, 3), lambda a: a.min() >= -2 and a.max() < 3),
        (lambda t: init.normal_(t, 1.0, 0.5), lambda a: abs(a.mean() - 1) < 0.01
         and abs(a.std() - 0.5) < 0.01),
        (lambda t: init.constant_(t, 0.3), lambda a: np.allclose(a, 0.3)),
        (init.zeros_, lambda a: not a.any()), (init.ones_, lambda a: (a == 1).all()),
        (init.eye_, lambda a: np.array_equal(a, np.eye(200, 300))),
        (init.xavier_uniform_, lambda a: abs(a).max() <= math.sqrt(6 / 500)),
        (init.xavier_normal_, lambda a: abs(a.std() - math.sqrt(2 / 500)) < 0.002),
        (lambda t: init.kaiming_uniform_(t, nonlinearity="relu"),
         lambda a: abs(a).max() <= math.sqrt(6 / 300)),
        (lambda t: init.kaiming_normal_(t, mode="fan_out"),
         lambda a: abs(a.std() - math.sqrt(2 / 200)) < 0.002),
        (lambda t: init.trunc_normal_(t, std=1.0, a=-1.0, b=2.0),
         lambda a: a.min() >= -1 and a.max() <= 2 and abs(a.mean() - 0.2296) < 0.02),
    ]:
        out = fn(w)
        assert out is w and w.is_leaf and w.grad_fn is None and w.requires_grad
        assert check(host(w)), fn


def test_clip_grad_norm_and_value(device):
    a = nn.Parameter(on(np.zeros(2), device))
    b = nn.Parameter(on(np.zeros(1), device))
    a.grad, b.grad = on(np.array([3.0, 0.0]), device), on(np.array([4.0]), device)
    total = clip_grad_norm_([a, b], 1.0)
    assert abs(float(total) - 5.0) < 1e-12
    np.testing.assert_allclose(host(a.grad), [0.6, 0.0], atol=1e-6)
    np.testing.assert_allclose(host(b.grad), [0.8], atol=1e-6)
    assert abs(float(clip_grad_norm_([a, b], 10.0, norm_type=math.inf)) - 0.8) < 1e-6
    clip_grad_value_([a, b], 0.7)
    np.testing.assert_allclose(host(b.grad), [0.7])
    a.grad = on(np.array([math.nan, 1.0]), device)
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(a, 1.0, error_if_nonfinite=True)


def test_parameters_vector_round_trip():
    net = nn.Linear(3, 2)
    vec = parameters_to_vector(net.parameters())
    assert tuple(vec.shape) == (8,)
    w = net.weight
    vector_to_parameters(vec * 0 + 1, net.parameters())
    assert net.weight is w and host(w).tolist() == [[1.0] * 3] * 2
    with pytest.raises(ValueError, match="8"):
        vector_to_parameters(plugrad.zeros(3), net.parameters())


def test_training_mlp_and_cnn_reduce_loss(device):
    plugrad.manual_seed(0)
    n = 32 if device == "cpu" else 4
    x = plugrad.randn(n, 1, 6, 6, device=device)
    y = (x.mean((1, 2, 3)) > 0).long()
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(36, 16), nn.GELU(),
                          nn.Dropout(0.1), nn.Linear(16, 2)).to(device)
    losses = []
    for _ in range(20 if device == "cpu" else 3):
        logp = F.log_softmax(model(x), 1)
        loss = -(logp * F.one_hot(y, 2)).sum() / n
        model.zero_grad()
        loss.backward()
        with plugrad.no_grad():
            for p in model.parameters():
                p.sub_(p.grad * 0.1)
        losses.append(float(loss))
    assert losses[-1] < losses[0]


# ------------------------------------------------------------------ core behaviour nn relies on
def test_tril_keeps_bool_dtype():
    assert plugrad.ones(2, 2, dtype=plugrad.bool).tril().dtype == plugrad.bool


def test_deepcopy_module_with_buffers():
    bn = nn.BatchNorm1d(2)
    clone = copy.deepcopy(bn)
    assert clone.running_mean is not bn.running_mean
