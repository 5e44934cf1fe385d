"""Gradients taken with ``create_graph=True`` that are locally constant (relu's mask,
pooling's scatter, conv's bias sum) require grad exactly where PyTorch's do, and their own
gradients are PyTorch's: zeros, or None where its formula does not read the input."""
from __future__ import annotations

import numpy as np
import pytest

import plugrad

torch = pytest.importorskip("torch", reason="these cases compare with PyTorch, which is "
                            "not installed")

RNG = np.random.default_rng(16)
X = RNG.uniform(-2, 2, (2, 3, 6, 6))
W = RNG.uniform(-1, 1, (4, 3, 3, 3))
B = RNG.uniform(-1, 1, (4,))
T1 = np.array([1, 0])



def _on(L, values, like):
    return L.tensor(values, dtype=L.int64, device=like.device)


CASES = {
    "relu": lambda L, x, w, b: L.relu(x),
    "hardtanh": lambda L, x, w, b: L.nn.functional.hardtanh(x),
    "leaky_relu": lambda L, x, w, b: L.nn.functional.leaky_relu(x, 0.1),
    "threshold": lambda L, x, w, b: L.nn.functional.threshold(x, 0.2, -1.0),
    "hardshrink": lambda L, x, w, b: L.nn.functional.hardshrink(x),
    "softshrink": lambda L, x, w, b: L.nn.functional.softshrink(x),
    "max_pool2d": lambda L, x, w, b: L.nn.functional.max_pool2d(x, 2),
    "max_pool1d": lambda L, x, w, b: L.nn.functional.max_pool1d(x[0], 2),
    "avg_pool2d": lambda L, x, w, b: L.nn.functional.avg_pool2d(x, 3, 2, 1),
    "adaptive_avg_pool2d uneven": lambda L, x, w, b: L.nn.functional.adaptive_avg_pool2d(x, 4),
    "adaptive_avg_pool2d 1x1": lambda L, x, w, b: L.nn.functional.adaptive_avg_pool2d(x, 1),
    "adaptive_max_pool2d": lambda L, x, w, b: L.nn.functional.adaptive_max_pool2d(x, 4),
    "conv2d": lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, padding=1),
    "conv_transpose2d": lambda L, x, w, b: L.nn.functional.conv_transpose2d(
        x, w.transpose(0, 1), b),
    "batch_norm": lambda L, x, w, b: L.nn.functional.batch_norm(
        x, None, None, w[0, :, 0, 0], b[:3], training=True),
    "group_norm": lambda L, x, w, b: L.nn.functional.group_norm(x, 3, w[0, :, 0, 0], b[:3]),
    "pad reflect": lambda L, x, w, b: L.nn.functional.pad(x, (1, 2, 2, 1), mode="reflect"),
    "nll_loss": lambda L, x, w, b: L.nn.functional.nll_loss(
        x[:, :, 0, 0], _on(L, T1, x)),
    "pad replicate": lambda L, x, w, b: L.nn.functional.pad(x[0], (2, 0), mode="replicate"),
    "cummax empty": lambda L, x, w, b: L.cummax(x[:, :, :0], 2).values,
    "cummax": lambda L, x, w, b: L.cummax(x, 2).values,
}


def _grads(L, name, device):
    kw = {} if L is torch else {"device": device}
    leaves = [L.tensor(v, dtype=L.float64, requires_grad=True, **kw) for v in (X, W, B)]
    out = CASES[name](L, *leaves)
    weight = L.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)),
                      dtype=L.float64, **kw)
    first = L.autograd.grad((out * weight).sum(), leaves, allow_unused=True,
                            create_graph=True)
    tracked = [i for i, g in enumerate(first) if g is not None and g.requires_grad]
    second = []
    if tracked:
        total = sum(first[i].sum() for i in tracked)
        second = L.autograd.grad(total, leaves, allow_unused=True)
    return first, tracked, second


@pytest.mark.parametrize("name", sorted(CASES))
def test_constant_gradients_record_as_torch(name, device):
    t_first, t_tracked, t_second = _grads(torch, name, device)
    p_first, p_tracked, p_second = _grads(plugrad, name, device)
    assert [g is None for g in p_first] == [g is None for g in t_first]
    assert p_tracked == t_tracked, f"{name}: gradients requiring grad {p_tracked} vs torch's"
    for a, b in zip(t_first, p_first):
        if a is not None:
            np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(),
                                       rtol=1e-10, atol=1e-12)
    assert [g is None for g in p_second] == [g is None for g in t_second]
    for a, b in zip(t_second, p_second):
        if a is not None:
            np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(),
                                       rtol=1e-10, atol=1e-12)
