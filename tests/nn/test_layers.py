"""Layer numerics: closed-form / direct-loop NumPy float64 references on every device."""
import math

import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F

from .helpers import host, on
from . import reference as ref

CONV_CASES = [  # (in, out, kernel, stride, padding, dilation, groups)
    (2, 3, 3, 1, 0, 1, 1),
    (2, 4, (2, 3), (2, 1), (1, 0), 1, 2),
    (3, 3, 2, 1, "same", 2, 3),
    (2, 2, 3, 2, "valid", 1, 1),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_matches_direct_loop_reference(device, case):
    cin, cout, k, s, p, d, g = case
    conv = nn.Conv2d(cin, cout, k, s, p, d, g).double().to(device)
    x = np.random.default_rng(0).standard_normal((2, cin, 5, 6))
    out = conv(on(x, device))
    w, b = host(conv.weight), host(conv.bias)
    pads = F._window_geometry("t", w.shape[2:], s, p, d)[2]
    expect = ref.conv2d(x, w, b, _pair(s), pads, _pair(d), g)
    np.testing.assert_allclose(host(out), expect, rtol=1e-12, atol=1e-12)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def test_conv2d_gradients_match_finite_differences(device):
    rng = np.random.default_rng(1)
    x = on(rng.standard_normal((1, 2, 4, 4)), device, requires_grad=True)
    w = on(rng.standard_normal((4, 1, 2, 2)), device, requires_grad=True)
    b = on(rng.standard_normal(4), device, requires_grad=True)
    assert plugrad.autograd.gradcheck(
        lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
        (x, w, b))


def test_conv2d_double_backward(device):
    rng = np.random.default_rng(2)
    x = on(rng.standard_normal((1, 1, 3, 3)), device, requires_grad=True)
    w = on(rng.standard_normal((2, 1, 2, 2)), device, requires_grad=True)
    assert plugrad.autograd.gradgradcheck(lambda x, w: F.conv2d(x, w, padding=1), (x, w))


def test_conv2d_bad_input_names_shapes():
    conv = nn.Conv2d(3, 8, 3)
    with pytest.raises(plugrad.ShapeError, match=r"expected input\[2, 4, 8, 8\] to have 3 "
                                                 r"channels, but got 4 channels instead"):
        conv(plugrad.randn(2, 4, 8, 8))
    with pytest.raises(plugrad.ShapeError, match="Expected 3D .* or 4D .* input"):
        conv(plugrad.randn(8, 8))
    with pytest.raises(plugrad.ShapeError, match="too small"):
        conv(plugrad.randn(1, 3, 2, 2))
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)


def test_conv1d_unbatched_and_same_padding(device):
    conv = nn.Conv1d(2, 3, 4, padding="same", dilation=1).double().to(device)
    x = np.random.default_rng(3).standard_normal((2, 7))
    out = conv(on(x, device))
    w = host(conv.weight)[:, :, None, :]
    expect = ref.conv2d(x[None, :, None, :], w, host(conv.bias), (1, 1), ((0, 0), (1, 2)))
    assert tuple(out.shape) == (3, 7)
    np.testing.assert_allclose(host(out), expect[0, :, 0, :], atol=1e-12)


def test_linear_closed_form_and_shape_error(device):
    lin = nn.Linear(3, 2).double().to(device)
    x = np.arange(12.0).reshape(2, 2, 3)
    out = lin(on(x, device))
    np.testing.assert_allclose(host(out), x @ host(lin.weight).T + host(lin.bias), atol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(host(lin.weight.grad), np.ones((4, 2)).T @ x.reshape(4, 3))
    np.testing.assert_allclose(host(lin.bias.grad), [4.0, 4.0])
    with pytest.raises(plugrad.ShapeError,
                       match=r"mat1 and mat2 shapes cannot be multiplied \(5x4 and 3x2\)"):
        lin(on(np.zeros((5, 4)), device))
    assert tuple(lin(on(np.ones(3), device)).shape) == (2,)


def test_linear_default_init_bounds():
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives the same bound
    w, b = host(lin.weight), host(lin.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.abs(b).max() <= bound and abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound * 3


@pytest.mark.parametrize("k,s,p", [(2, 2, 0), (3, 2, 1), (3, 1, 1)])
def test_max_and_avg_pool_match_reference(device, k, s, p):
    x = np.random.default_rng(4).standard_normal((1, 2, 5, 5))
    xt = on(x, device, requires_grad=True)
    out = F.max_pool2d(xt, k, s, p)
    np.testing.assert_allclose(host(out), ref.pool2d(x, k, s, p, np.max, -np.inf))
    out.sum().backward()
    # each input element's grad counts the windows whose maximum it is
    counts = np.zeros_like(x)
    _, idx = F.max_pool2d(on(x, device), k, s, p, return_indices=True)
    np.add.at(counts.reshape(1, 2, -1), (0, np.arange(2)[:, None],
                                         host(idx).astype(int).reshape(2, -1)), 1.0)
    np.testing.assert_allclose(host(xt.grad), counts)
    avg = F.avg_pool2d(on(x, device), k, s, p)
    np.testing.assert_allclose(host(avg), ref.pool2d(x, k, s, p, np.sum, 0.0) / (k * k),
                               atol=1e-12)
    avg_ex = F.avg_pool2d(on(x, device), k, s, p, count_include_pad=False)
    counts = ref.pool2d(np.ones_like(x), k, s, p, np.sum, 0.0)
    np.testing.assert_allclose(host(avg_ex), ref.pool2d(x, k, s, p, np.sum, 0.0) / counts,
                               atol=1e-12)


def test_pool_ceil_mode_shapes_and_errors():
    x = plugrad.randn(1, 1, 5, 5)
    assert tuple(F.max_pool2d(x, 2, 2, ceil_mode=True).shape) == (1, 1, 3, 3)
    assert tuple(F.max_pool2d(x, 2, 2).shape) == (1, 1, 2, 2)
    out = F.avg_pool2d(plugrad.ones(1, 1, 5, 5), 2, 2, ceil_mode=True)
    assert out.tolist()[0][0][2] == [1.0, 1.0, 1.0]  # overhang is not counted
    with pytest.raises(ValueError, match="pad should be at most half"):
        F.max_pool2d(x, 2, 2, padding=2)


def test_adaptive_avg_pool(device):
    x = np.random.default_rng(5).standard_normal((1, 1, 5, 7))
    out = F.adaptive_avg_pool2d(on(x, device), (2, 3))
    expect = np.zeros((2, 3))
    for i in range(2):
        for j in range(3):
            r0, r1 = (i * 5) // 2, -(-((i + 1) * 5) // 2)
            c0, c1 = (j * 7) // 3, -(-((j + 1) * 7) // 3)
            expect[i, j] = x[0, 0, r0:r1, c0:c1].mean()
    np.testing.assert_allclose(host(out)[0, 0], expect, atol=1e-12)
    assert tuple(nn.AdaptiveAvgPool2d(1)(on(x, device)).shape) == (1, 1, 1, 1)


def test_batch_norm_train_eval_running_stats(device):
    bn = nn.BatchNorm1d(3, momentum=0.5).double().to(device)
    x = np.random.default_rng(6).standard_normal((4, 3)) * 2 + 1
    out = bn(on(x, device))
    mean, var = x.mean(0), x.var(0)
    np.testing.assert_allclose(host(out), (x - mean) / np.sqrt(var + 1e-5), atol=1e-10)
    np.testing.assert_allclose(host(bn.running_mean), 0.5 * mean, atol=1e-12)
    np.testing.assert_allclose(host(bn.running_var), 0.5 + 0.5 * x.var(0, ddof=1), atol=1e-12)
    assert int(bn.num_batches_tracked) == 1
    bn.eval()
    out = bn(on(x, device))
    np.testing.assert_allclose(host(out), (x - 0.5 * mean) / np.sqrt(
        host(bn.running_var) + 1e-5), atol=1e-10)
    assert int(bn.num_batches_tracked) == 1
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        bn(on(np.zeros((1, 3, 2, 2)), device))


def test_batch_norm_2d_cumulative_and_untracked():
    bn = nn.BatchNorm2d(2, momentum=None, affine=False)
    a, b = plugrad.randn(3, 2, 2, 2), plugrad.randn(3, 2, 2, 2)
    bn(a)
    bn(b)
    both = (host(a).mean((0, 2, 3)) + host(b).mean((0, 2, 3))) / 2
    np.testing.assert_allclose(host(bn.running_mean), both, atol=1e-6)
    free = nn.BatchNorm2d(2, track_running_stats=False).eval()
    out = free(a)  # batch statistics even in eval
    np.testing.assert_allclose(host(out).mean((0, 2, 3)), 0.0, atol=1e-5)
    assert free.running_mean is None and "running_mean" not in free.state_dict()


def test_layer_norm_closed_form_and_grads(device):
    ln = nn.LayerNorm((2, 3)).double().to(device)
    with plugrad.no_grad():
        ln.weight.copy_(on(np.arange(6.0).reshape(2, 3), device))
    x = np.random.default_rng(7).standard_normal((2, 2, 3))
    out = ln(on(x, device))
    m = x.mean((1, 2), keepdims=True)
    v = x.var((1, 2), keepdims=True)
    np.testing.assert_allclose(host(out), (x - m) / np.sqrt(v + 1e-5) * np.arange(6.0)
                               .reshape(2, 3), atol=1e-10)
    xt = on(x, device, requires_grad=True)
    w = on(np.random.default_rng(8).standard_normal(3), device, requires_grad=True)
    b = on(np.zeros(3), device, requires_grad=True)
    assert plugrad.autograd.gradcheck(lambda x, w, b: F.layer_norm(x, (3,), w, b), (xt, w, b))
    assert plugrad.autograd.gradgradcheck(lambda x, w: F.layer_norm(x, (3,), w), (xt, w))
    with pytest.raises(plugrad.ShapeError, match=r"normalized_shape=\[2, 3\]"):
        ln(on(np.zeros((2, 3, 2)), device))


def test_gelu_exact_and_tanh(device):
    x = np.linspace(-4, 4, 9)
    exact = host(nn.GELU()(on(x, device)))
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(exact, 0.5 * x * (1 + erf(x / math.sqrt(2))), atol=1e-12)
    approx = host(nn.GELU("tanh")(on(x, device)))
    c = math.sqrt(2 / math.pi)
    np.testing.assert_allclose(approx, 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x ** 3))),
                               atol=1e-12)
    xt = on(x[:4] + 0.1, device, requires_grad=True)
    for mode in ("none", "tanh"):
        assert plugrad.autograd.gradgradcheck(lambda x: F.gelu(x, approximate=mode), (xt,))
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(xt, approximate="fast")


def test_dropout_train_eval():
    drop = nn.Dropout(0.25)
    x = plugrad.ones(20000)
    y = host(drop(x))
    assert np.all((y == 0) | np.isclose(y, 1 / 0.75))
    assert abs((y == 0).mean() - 0.25) < 0.02
    assert drop.eval()(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_embedding_padding_idx(device):
    emb = nn.Embedding(5, 2, padding_idx=1).double().to(device)
    assert host(emb.weight)[1].tolist() == [0.0, 0.0]
    idx = plugrad.tensor([[0, 1], [1, 4]], device=device)
    out = emb(idx)
    assert tuple(out.shape) == (2, 2, 2)
    np.testing.assert_allclose(host(out)[1, 1], host(emb.weight)[4])
    out.sum().backward()
    np.testing.assert_allclose(host(emb.weight.grad), [[1, 1], [0, 0], [0, 0], [0, 0], [1, 1]])
    with pytest.raises(IndexError, match="index out of range"):
        emb(plugrad.tensor([5], device=device))
    with pytest.raises(TypeError, match="indices"):
        emb(plugrad.tensor([0.0], device=device))


def test_flatten_unflatten_identity():
    x = plugrad.randn(2, 3, 4)
    assert tuple(nn.Flatten()(x).shape) == (2, 12)
    assert tuple(nn.Unflatten(1, (3, 1))(x).shape) == (2, 3, 1, 4)
    assert nn.Identity(5, k=1)(x) is x


def test_activation_modules(device):
    x = np.array([-2.0, -0.5, 0.0, 0.5, 3.0])
    t = on(x, device)
    np.testing.assert_allclose(host(nn.ReLU()(t)), np.maximum(x, 0))
    np.testing.assert_allclose(host(nn.LeakyReLU(0.1)(t)), np.where(x > 0, x, 0.1 * x))
    np.testing.assert_allclose(host(nn.SiLU()(t)), x / (1 + np.exp(-x)), atol=1e-12)
    np.testing.assert_allclose(host(nn.Sigmoid()(t)), 1 / (1 + np.exp(-x)), atol=1e-12)
    np.testing.assert_allclose(host(nn.Tanh()(t)), np.tanh(x), atol=1e-12)
    e = np.exp(x - x.max())
    np.testing.assert_allclose(host(nn.Softmax(0)(t)), e / e.sum(), atol=1e-12)
    np.testing.assert_allclose(host(nn.LogSoftmax(-1)(t)), np.log(e / e.sum()), atol=1e-12)
    np.testing.assert_allclose(host(nn.Softplus(2.0, 4.0)(t)),
                               np.where(2 * x > 4, x, np.log1p(np.exp(2 * x)) / 2), atol=1e-12)
    np.testing.assert_allclose(host(nn.ELU()(t)), np.where(x > 0, x, np.expm1(x)), atol=1e-12)
    inplace = on(x, device)
    nn.ReLU(inplace=True)(inplace)
    np.testing.assert_allclose(host(inplace), np.maximum(x, 0))
