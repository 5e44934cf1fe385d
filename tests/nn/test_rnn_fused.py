"""The fused LSTM and GRU layers (``lstm``/``gru`` kernels and their backward, one node per
layer and direction): the same values and gradients as the per-step path and PyTorch, on the fast
NumPy kernels and on the composites (``ref``), to first and second order."""
import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.modules._recurrence as recurrence
from plugrad.backends.contract import Backend
from plugrad.backends.numpy import NumPyBackend

from .helpers import host

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)


def _lstm_run(device, dtype, fused, monkeypatch, *, bidirectional, num_layers, batch_first,
              steps=4, batch=3, hidden=5, features=2, loss="all"):
    """Outputs and gradients (inputs, states, parameters) of one LSTM step on our side."""
    plugrad.manual_seed(0)
    m = nn.LSTM(features, hidden, num_layers=num_layers, bidirectional=bidirectional,
                batch_first=batch_first).to(dtype).to(device)
    dirs = num_layers * (2 if bidirectional else 1)
    shape = (batch, steps, features) if batch_first else (steps, batch, features)
    rng = np.random.default_rng(3)
    x = plugrad.tensor(rng.standard_normal(shape), dtype=dtype, device=device,
                       requires_grad=True)
    h0, c0 = (plugrad.tensor(rng.standard_normal((dirs, batch, hidden)), dtype=dtype,
                             device=device, requires_grad=True) for _ in range(2))
    with monkeypatch.context() as mp:
        calls = []
        real = recurrence._fused_lstm
        mp.setattr(recurrence, "_fused_lstm", lambda *a: calls.append(1) or real(*a))
        if not fused:
            mp.setattr(recurrence, "_lstm_fusable", lambda *a: False)
        out, (h_n, c_n) = m(x, (h0, c0))
    assert len(calls) == (num_layers * (2 if bidirectional else 1) if fused else 0)
    total = (out * out).sum() + (h_n * 2).sum() + (c_n ** 2).sum() if loss == "all" \
        else (h_n * c_n).sum()
    total.backward()
    tensors = [out, h_n, c_n, x.grad, h0.grad, c0.grad] + [p.grad for p in m.parameters()]
    return [host(t).astype(np.float64) for t in tensors], m, (x, h0, c0), (h_n, c_n)


def _torch_run(m, inputs, loss="all", **kw):
    t = torch.nn.LSTM(m.input_size, m.hidden_size, **kw).double()
    with torch.no_grad():
        for name, p in t.named_parameters():
            p.copy_(torch.from_numpy(host(m.get_parameter(name)).astype(np.float64)))
    x, h0, c0 = (torch.tensor(host(a).astype(np.float64), requires_grad=True) for a in inputs)
    out, (h_n, c_n) = t(x, (h0, c0))
    total = (out * out).sum() + (h_n * 2).sum() + (c_n ** 2).sum() if loss == "all" \
        else (h_n * c_n).sum()
    total.backward()
    return [a.detach().numpy() for a in [out, h_n, c_n, x.grad, h0.grad, c0.grad]
            + [p.grad for p in t.parameters()]]


@pytest.mark.parametrize("device", ["cpu", "ref"])
@pytest.mark.parametrize("bidirectional,num_layers,batch_first",
                         [(False, 1, True), (True, 2, False)])
def test_fused_matches_step_path_and_torch(device, bidirectional, num_layers, batch_first,
                                           monkeypatch):
    kw = dict(bidirectional=bidirectional, num_layers=num_layers, batch_first=batch_first)
    fused, m, inputs, _ = _lstm_run(device, plugrad.float32, True, monkeypatch, **kw)
    steps, *_ = _lstm_run(device, plugrad.float32, False, monkeypatch, **kw)
    theirs = _torch_run(m, inputs, **kw)
    for a, b, c in zip(fused, steps, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-5)


def test_final_states_only_gradient_matches_torch(monkeypatch):
    kw = dict(bidirectional=True, num_layers=1, batch_first=False)
    ours, m, inputs, _ = _lstm_run("cpu", plugrad.float64, True, monkeypatch, loss="h*c", **kw)
    theirs = _torch_run(m, inputs, loss="h*c", **kw)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _graph_has(t, name):
    seen, todo = set(), [t.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.name() == name:
            return True
        todo.extend(n for n, _ in node.next_functions)
    return False


@pytest.mark.parametrize("device", ["cpu", "ref"])
def test_gradcheck_and_gradgradcheck_float64(device):
    plugrad.manual_seed(0)
    m = nn.LSTM(2, 2, bidirectional=True).double().to(device)
    x = plugrad.randn(3, 2, 2, dtype=plugrad.float64, requires_grad=True).to(device)
    h0 = plugrad.randn(2, 2, 2, dtype=plugrad.float64, device=device, requires_grad=True)
    c0 = plugrad.randn(2, 2, 2, dtype=plugrad.float64, device=device, requires_grad=True)

    def fn(x, h0, c0):
        out, (h, c) = m(x, (h0, c0))
        return out, h, c
    assert _graph_has(fn(x, h0, c0)[0], "LstmLayerBackward0")
    assert plugrad.autograd.gradcheck(fn, (x, h0, c0))
    assert plugrad.autograd.gradgradcheck(fn, (x, h0, c0))


def test_inplace_change_of_output_is_caught_but_final_states_are_own_arrays():
    m = nn.LSTM(2, 3)
    x = plugrad.randn(4, 2, 2, requires_grad=True)
    out, (h_n, c_n) = m(x)
    h_n.add_(1.0)  # h_n and c_n are copies: the saved states are untouched
    c_n.mul_(2.0)
    (out.sum() + h_n.sum() + c_n.sum()).backward()
    out, _ = m(x)
    loss = out.sum()
    out.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_no_grad_forward_is_the_same():
    m = nn.LSTM(3, 4, batch_first=True)
    x = plugrad.randn(2, 5, 3)
    out, (h, c) = m(x)
    with plugrad.no_grad():
        out2, (h2, c2) = m(x)
    assert out2.grad_fn is None
    for a, b in ((out, out2), (h, h2), (c, c2)):
        np.testing.assert_array_equal(host(a), host(b))


# ---------------------------------------------------------------------- the kernels
def _kernel_case(dtype, reverse, steps=5, n=3, hd=4):
    f = np.dtype(dtype)
    return (RNG.standard_normal((steps, n, 4 * hd)).astype(f),
            RNG.standard_normal((n, hd)).astype(f), RNG.standard_normal((n, hd)).astype(f),
            (RNG.standard_normal((4 * hd, hd)) * 0.5).astype(f), reverse)


@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float64", 1e-12)])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("grads", ["all", "out", "states"])
@pytest.mark.parametrize("batch_major", [False, True])
def test_numpy_kernels_agree_with_composites(dtype, tol, reverse, grads, batch_major):
    k = NumPyBackend()
    xw, h0, c0, w, _ = _kernel_case(dtype, reverse)
    if batch_major:  # a batch-first caller's projection: out and g_xw follow its layout
        xw = np.ascontiguousarray(xw.transpose(1, 0, 2)).transpose(1, 0, 2)
    fast = k.lstm(xw, h0, c0, w, reverse)
    assert (fast[0].strides[0] < fast[0].strides[1]) == batch_major
    slow = Backend.lstm(k, xw, h0, c0, w, reverse)
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    out, cells, gates = fast
    g_out = RNG.standard_normal(out.shape).astype(dtype) if grads != "states" else None
    g_h, g_c = ((RNG.standard_normal(h0.shape).astype(dtype) for _ in range(2))
                if grads != "out" else (None, None))
    args = (g_out, g_h, g_c, h0, c0, w, out, cells, gates, reverse)
    for a, b in zip(k.lstm_backward(*args), Backend.lstm_backward(k, *args)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol * 10, atol=tol * 10)


# ---------------------------------------------------------------------- GRU
def _gru_run(device, dtype, fused, monkeypatch, bias=True, **kw):
    plugrad.manual_seed(0)
    m = nn.GRU(2, 4, bias=bias, **kw).to(dtype).to(device)
    dirs = m.num_layers * (2 if m.bidirectional else 1)
    rng = np.random.default_rng(5)
    shape = (3, 4, 2) if m.batch_first else (4, 3, 2)
    x = plugrad.tensor(rng.standard_normal(shape), dtype=dtype, device=device,
                       requires_grad=True)
    h0 = plugrad.tensor(rng.standard_normal((dirs, 3, 4)), dtype=dtype, device=device,
                        requires_grad=True)
    with monkeypatch.context() as mp:
        calls = []
        real = recurrence._fused_gru
        mp.setattr(recurrence, "_fused_gru", lambda *a: calls.append(1) or real(*a))
        if not fused:
            mp.setattr(recurrence, "_gru_fusable", lambda *a: False)
        out, h_n = m(x, h0)
    assert len(calls) == (dirs if fused else 0)
    ((out * out).sum() + (h_n * 3).sum()).backward()
    return [host(t).astype(np.float64) for t in
            [out, h_n, x.grad, h0.grad] + [p.grad for p in m.parameters()]], m, (x, h0)


@pytest.mark.parametrize("device", ["cpu", "ref"])
@pytest.mark.parametrize("kw", [dict(batch_first=True), dict(bidirectional=True, num_layers=2),
                                dict(bias=False, bidirectional=True)], ids=str)
def test_gru_fused_matches_step_path_and_torch(device, kw, monkeypatch):
    fused, m, (x, h0) = _gru_run(device, plugrad.float32, True, monkeypatch, **kw)
    steps, *_ = _gru_run(device, plugrad.float32, False, monkeypatch, **kw)
    t = torch.nn.GRU(2, 4, **kw).double()
    with torch.no_grad():
        for name, p in t.named_parameters():
            p.copy_(torch.from_numpy(host(m.get_parameter(name)).astype(np.float64)))
    tx, th0 = (torch.tensor(host(a).astype(np.float64), requires_grad=True) for a in (x, h0))
    out, h_n = t(tx, th0)
    ((out * out).sum() + (h_n * 3).sum()).backward()
    theirs = [a.detach().numpy() for a in [out, h_n, tx.grad, th0.grad]
              + [p.grad for p in t.parameters()]]
    for a, b, c in zip(fused, steps, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", ["cpu", "ref"])
def test_gru_gradcheck_and_gradgradcheck_float64(device):
    plugrad.manual_seed(0)
    m = nn.GRU(2, 2, bidirectional=True).double().to(device)
    x = plugrad.randn(3, 2, 2, dtype=plugrad.float64, requires_grad=True).to(device)
    h0 = plugrad.randn(2, 2, 2, dtype=plugrad.float64, device=device, requires_grad=True)
    fn = (lambda x, h0: m(x, h0))
    assert _graph_has(fn(x, h0)[0], "GruLayerBackward0")
    assert plugrad.autograd.gradcheck(fn, (x, h0))
    assert plugrad.autograd.gradgradcheck(fn, (x, h0))


@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float64", 1e-12)])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch_major", [False, True])
def test_numpy_gru_kernels_agree_with_composites(dtype, tol, reverse, bias, batch_major):
    k = NumPyBackend()
    f = np.dtype(dtype)
    steps, n, hd = 5, 3, 4
    xw = RNG.standard_normal((steps, n, 3 * hd)).astype(f)
    if batch_major:
        xw = np.ascontiguousarray(xw.transpose(1, 0, 2)).transpose(1, 0, 2)
    h0 = RNG.standard_normal((n, hd)).astype(f)
    w = (RNG.standard_normal((3 * hd, hd)) * 0.5).astype(f)
    b = RNG.standard_normal(3 * hd).astype(f) if bias else None
    fast, slow = k.gru(xw, h0, w, b, reverse), Backend.gru(k, xw, h0, w, b, reverse)
    for a, c in zip(fast, slow):
        assert a.dtype == c.dtype and a.shape == c.shape
        np.testing.assert_allclose(a, c, rtol=tol, atol=tol)
    for g_out, g_h in ((RNG.standard_normal((steps, n, hd)).astype(f), None),
                       (None, RNG.standard_normal((n, hd)).astype(f))):
        args = (g_out, g_h, h0, w, b) + tuple(fast) + (reverse,)
        for a, c in zip(k.gru_backward(*args), Backend.gru_backward(k, *args)):
            if c is None:
                assert a is None and not bias
                continue
            assert a.dtype == c.dtype and a.shape == c.shape
            np.testing.assert_allclose(a, c, rtol=tol * 10, atol=tol * 10)
