"""PyTorch as the yardstick: same weights in, same outputs and gradients out (float64)."""
import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F

from .helpers import copy_params_to_torch, host

torch = pytest.importorskip("torch")
tnn = torch.nn


def _pair(ours, theirs, *inputs, grads=True, atol=1e-10):
    """Run both modules on the same float64 inputs; compare outputs, input and param grads."""
    ours.double()
    theirs.double()
    copy_params_to_torch(ours, theirs)
    xs = [plugrad.tensor(a, dtype=plugrad.float64, requires_grad=grads) for a in inputs]
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=grads) for a in inputs]
    out, tout = ours(*xs), theirs(*ts)
    out, tout = (out[0], tout[0]) if isinstance(out, tuple) else (out, tout)
    np.testing.assert_allclose(host(out), tout.detach().numpy(), atol=atol, rtol=1e-7)
    if grads:
        g = np.random.default_rng(0).standard_normal(tuple(out.shape))
        out.backward(plugrad.tensor(g, dtype=plugrad.float64))
        tout.backward(torch.tensor(g))
        for x, t in zip(xs, ts):
            np.testing.assert_allclose(host(x.grad), t.grad.numpy(), atol=atol, rtol=1e-7)
        for name, p in theirs.named_parameters():
            np.testing.assert_allclose(host(ours.get_parameter(name).grad), p.grad.numpy(),
                                       atol=atol, rtol=1e-7, err_msg=name)


RNG = np.random.default_rng(42)


@pytest.mark.parametrize("kw", [
    dict(kernel_size=3), dict(kernel_size=(2, 3), stride=(2, 1), padding=(1, 2)),
    dict(kernel_size=4, padding="same", dilation=2), dict(kernel_size=3, groups=2, bias=False),
    dict(kernel_size=1, padding="valid")])
def test_conv2d(kw):
    _pair(nn.Conv2d(4, 6, **kw), tnn.Conv2d(4, 6, **kw), RNG.standard_normal((2, 4, 9, 8)))


def test_conv1d():
    _pair(nn.Conv1d(3, 4, 3, stride=2, padding=1), tnn.Conv1d(3, 4, 3, stride=2, padding=1),
          RNG.standard_normal((2, 3, 10)))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, ceil_mode=True),
                                dict(kernel_size=2, dilation=2)])
def test_max_pool(kw):
    _pair(nn.MaxPool2d(**kw), tnn.MaxPool2d(**kw), RNG.standard_normal((2, 3, 9, 8)))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                dict(kernel_size=3, stride=2, padding=1,
                                     count_include_pad=False, ceil_mode=True)])
def test_avg_pool(kw):
    _pair(nn.AvgPool2d(**kw), tnn.AvgPool2d(**kw), RNG.standard_normal((2, 3, 8, 9)))


@pytest.mark.parametrize("size", [1, (3, 2), (4, 5)])
def test_adaptive_avg_pool(size):
    _pair(nn.AdaptiveAvgPool2d(size), tnn.AdaptiveAvgPool2d(size),
          RNG.standard_normal((2, 3, 7, 9)))


def test_linear_bilinear_layernorm_gelu():
    _pair(nn.Linear(5, 3), tnn.Linear(5, 3), RNG.standard_normal((4, 2, 5)))
    _pair(nn.Bilinear(3, 2, 4), tnn.Bilinear(3, 2, 4), RNG.standard_normal((5, 3)),
          RNG.standard_normal((5, 2)))
    _pair(nn.LayerNorm((3, 4)), tnn.LayerNorm((3, 4)), RNG.standard_normal((2, 3, 4)))
    _pair(nn.GELU("tanh"), tnn.GELU("tanh"), RNG.standard_normal((3, 4)))


def test_batch_norm_train_then_eval():
    ours, theirs = nn.BatchNorm2d(3), tnn.BatchNorm2d(3)
    for _ in range(2):
        _pair(ours, theirs, RNG.standard_normal((4, 3, 2, 2)))
    np.testing.assert_allclose(host(ours.running_var), theirs.running_var.numpy(), atol=1e-12)
    _pair(ours.eval(), theirs.eval(), RNG.standard_normal((4, 3, 2, 2)))


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_with_masks(batch_first):
    ours = nn.MultiheadAttention(8, 2, batch_first=batch_first)
    theirs = tnn.MultiheadAttention(8, 2, batch_first=batch_first)
    shape = (2, 5, 8) if batch_first else (5, 2, 8)
    q = RNG.standard_normal(shape)
    kpm = np.array([[False] * 4 + [True], [False] * 5])
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    ours.double(), theirs.double()
    copy_params_to_torch(ours, theirs)
    out, w = ours(*(plugrad.tensor(q),) * 3, key_padding_mask=plugrad.tensor(kpm),
                  attn_mask=plugrad.tensor(causal))
    tout, tw = theirs(*(torch.tensor(q),) * 3, key_padding_mask=torch.tensor(kpm),
                      attn_mask=torch.tensor(causal))
    np.testing.assert_allclose(host(out), tout.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(host(w), tw.detach().numpy(), atol=1e-10)
    _, w_all = ours(*(plugrad.tensor(q),) * 3, average_attn_weights=False)
    assert tuple(w_all.shape) == (2, 2, 5, 5)
    assert ours(*(plugrad.tensor(q),) * 3, need_weights=False)[1] is None


@pytest.mark.parametrize("norm_first,act", [(False, "relu"), (True, "gelu")])
def test_transformer_encoder_layer(norm_first, act):
    kw = dict(dim_feedforward=16, dropout=0.0, activation=act, batch_first=True,
              norm_first=norm_first)
    _pair(nn.TransformerEncoderLayer(8, 2, **kw), tnn.TransformerEncoderLayer(8, 2, **kw),
          RNG.standard_normal((2, 4, 8)), atol=1e-9)


def test_embedding_and_sdpa():
    ours, theirs = nn.Embedding(6, 3, padding_idx=2).double(), tnn.Embedding(6, 3, padding_idx=2)
    copy_params_to_torch(ours, theirs.double())
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    ours(plugrad.tensor(idx)).sum().backward()
    theirs(torch.tensor(idx)).sum().backward()
    np.testing.assert_allclose(host(ours.weight.grad), theirs.weight.grad.numpy())
    q, k, v = (RNG.standard_normal((2, 3, 4, 5)) for _ in range(3))
    for kw in (dict(is_causal=True), dict(attn_mask=np.tril(np.ones((4, 4), dtype=bool))),
               dict(attn_mask=RNG.standard_normal((4, 4)))):
        mine = {k_: plugrad.tensor(v_) if isinstance(v_, np.ndarray) else v_
                for k_, v_ in kw.items()}
        ref = {k_: torch.tensor(v_) if isinstance(v_, np.ndarray) else v_
               for k_, v_ in kw.items()}
        out = F.scaled_dot_product_attention(*(plugrad.tensor(a) for a in (q, k, v)), **mine)
        tout = torch.nn.functional.scaled_dot_product_attention(
            *(torch.tensor(a) for a in (q, k, v)), **ref)
        np.testing.assert_allclose(host(out), tout.numpy(), atol=1e-10)


def test_default_init_matches_pytorch_distribution():
    torch.manual_seed(0)
    plugrad.manual_seed(0)
    ours, theirs = nn.Conv2d(16, 32, 3), tnn.Conv2d(16, 32, 3)
    for a, b in ((ours.weight, theirs.weight), (ours.bias, theirs.bias)):
        assert abs(host(a).max() - b.detach().max().item()) < 0.01
        assert abs(host(a).std() - b.detach().std().item()) < 0.005
