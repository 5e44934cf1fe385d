"""The reference backend's recurrent kernels (``lstm``, ``gru`` and their backward: the
contract's composites) against the same recurrence written in PyTorch, forward values and
autograd gradients in float64. Registered as ``case_<kernel>`` by
``test_reference_primitives.py`` (kept apart: that file is long enough)."""
import numpy as np
import torch

T, N, H = 3, 2, 3
RNG = np.random.default_rng(17)


def _rand(*shape):
    return RNG.uniform(-1.5, 1.5, shape)


def _torch_lstm(xw, h, c, w, reverse):
    outs, cells, gates = [None] * T, [None] * T, [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        z = xw[t] + h @ w.T
        i, f, g, o = z[:, :H].sigmoid(), z[:, H:2 * H].sigmoid(), z[:, 2 * H:3 * H].tanh(), \
            z[:, 3 * H:].sigmoid()
        c = f * c + i * g
        h = o * c.tanh()
        outs[t], cells[t], gates[t] = h, c, torch.cat([i, f, g, o], 1)
    return torch.stack(outs), torch.stack(cells), torch.stack(gates)


def _torch_gru(xw, h, w, b, reverse):
    outs, gates, hns = [None] * T, [None] * T, [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        hw = h @ w.T + (0 if b is None else b)
        r, z = (xw[t, :, :H] + hw[:, :H]).sigmoid(), (xw[t, :, H:2 * H] + hw[:, H:2 * H]).sigmoid()
        n = (xw[t, :, 2 * H:] + r * hw[:, 2 * H:]).tanh()
        h = n + z * (h - n)
        outs[t], gates[t], hns[t] = h, torch.cat([r, z, n], 1), hw[:, 2 * H:]
    return torch.stack(outs), torch.stack(gates), torch.stack(hns)


def _leaves(*arrays):
    return [None if a is None else torch.tensor(a, requires_grad=True) for a in arrays]


def case_lstm(B, ref, check):
    for reverse in (False, True):
        xw, h0, c0, w = _rand(T, N, 4 * H), _rand(N, H), _rand(N, H), _rand(4 * H, H)
        want = _torch_lstm(*(torch.tensor(a) for a in (xw, h0, c0, w)), reverse)
        got = B.lstm(ref(xw), ref(h0), ref(c0), ref(w), reverse)
        for a, e in zip(got, want):
            check(a, e.numpy(), rtol=1e-12, atol=1e-13)


def case_lstm_backward(B, ref, check):
    for reverse in (False, True):
        xw, h0, c0, w = _rand(T, N, 4 * H), _rand(N, H), _rand(N, H), _rand(4 * H, H)
        g_out, g_h, g_c = _rand(T, N, H), _rand(N, H), _rand(N, H)
        ts = _leaves(xw, h0, c0, w)
        out, cells, _ = _torch_lstm(*ts, reverse)
        last = 0 if reverse else T - 1
        loss = (out * torch.tensor(g_out)).sum() + (out[last] * torch.tensor(g_h)).sum() \
            + (cells[last] * torch.tensor(g_c)).sum()
        want = torch.autograd.grad(loss, ts)
        fwd = B.lstm(ref(xw), ref(h0), ref(c0), ref(w), reverse)
        got = B.lstm_backward(ref(g_out), ref(g_h), ref(g_c), ref(h0), ref(c0), ref(w), *fwd,
                              reverse)
        for a, e in zip(got, want):
            check(a, e.numpy(), rtol=1e-10, atol=1e-12)


def case_gru(B, ref, check):
    for reverse, bias in ((False, True), (True, False)):
        xw, h0, w = _rand(T, N, 3 * H), _rand(N, H), _rand(3 * H, H)
        b = _rand(3 * H) if bias else None
        want = _torch_gru(*(None if a is None else torch.tensor(a) for a in (xw, h0, w, b)),
                          reverse)
        got = B.gru(ref(xw), ref(h0), ref(w), None if b is None else ref(b), reverse)
        for a, e in zip(got, want):
            check(a, e.numpy(), rtol=1e-12, atol=1e-13)


def case_gru_backward(B, ref, check):
    for reverse, bias in ((False, True), (True, False)):
        xw, h0, w = _rand(T, N, 3 * H), _rand(N, H), _rand(3 * H, H)
        b = _rand(3 * H) if bias else None
        g_out, g_h = _rand(T, N, H), _rand(N, H)
        ts = _leaves(xw, h0, w, b)
        out, _, _ = _torch_gru(*ts, reverse)
        last = 0 if reverse else T - 1
        loss = (out * torch.tensor(g_out)).sum() + (out[last] * torch.tensor(g_h)).sum()
        want = torch.autograd.grad(loss, [t for t in ts if t is not None])
        rb = None if b is None else ref(b)
        fwd = B.gru(ref(xw), ref(h0), ref(w), rb, reverse)
        got = B.gru_backward(ref(g_out), ref(g_h), ref(h0), ref(w), rb, *fwd, reverse)
        if not bias:
            assert got[3] is None
            got = got[:3]
        for a, e in zip(got, want):
            check(a, e.numpy(), rtol=1e-10, atol=1e-12)


CASES = {"lstm": case_lstm, "lstm_backward": case_lstm_backward, "gru": case_gru,
         "gru_backward": case_gru_backward}
