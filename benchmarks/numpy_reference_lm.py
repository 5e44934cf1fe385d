"""The hand-written NumPy floor of the language-model workloads of ``compare.py``.

As :mod:`numpy_reference`: forward and backward by hand, what a careful person writes in
plain NumPy (2-D GEMMs over all ``batch * seq`` rows, in-place masks, the embedding gradient
as a one-hot GEMM for the 65-token vocabulary), so that plugrad's and PyTorch's times have a
floor to be read against. ``step.state`` holds the initial arrays (the autograd versions are
built from them) and, after a step, the gradients.

Nothing here is an asv benchmark (no asv prefixes).
"""
from __future__ import annotations

import sys
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:  # also as asv's benchmarks.*
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from numpy_reference import _cross_entropy, _uniform  # noqa: E402

F32 = np.float32
EPS = 1e-5


def _ln(x, w, b):
    """Layer norm over the last axis of ``x`` (N, D): output, and what backward needs."""
    mu = x.mean(axis=1, keepdims=True)
    xc = x - mu
    var = np.mean(xc * xc, axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(var + F32(EPS))
    xc *= rstd                      # now x-hat
    return xc * w + b, xc, rstd


def _ln_backward(g, w, xhat, rstd):
    gw = (g * xhat).sum(axis=0)
    gb = g.sum(axis=0)
    gxh = g * w
    gx = gxh - gxh.mean(axis=1, keepdims=True)
    gx -= xhat * np.mean(gxh * xhat, axis=1, keepdims=True)
    gx *= rstd
    return gx, gw, gb


def _one_hot(tok, vocab):
    oh = np.zeros((tok.size, vocab), F32)
    oh[np.arange(tok.size), tok.reshape(-1)] = 1.0
    return oh


def gpt_params(rng, d_model, seq, vocab):
    """GPT-2-style initial weights, ``x @ W`` layout (in, out), as a dict of float32."""
    d = d_model

    def normal(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(F32)
    ones, zeros = (lambda n: np.ones(n, F32)), (lambda n: np.zeros(n, F32))
    return {"wte": normal(vocab, d), "wpe": normal(seq, d), "ln1_w": ones(d),
            "ln1_b": zeros(d), "w_qkv": normal(d, 3 * d), "b_qkv": zeros(3 * d),
            "w_o": normal(d, d), "b_o": zeros(d), "ln2_w": ones(d), "ln2_b": zeros(d),
            "w_1": normal(d, 4 * d), "b_1": zeros(4 * d), "w_2": normal(4 * d, d),
            "b_2": zeros(d), "lnf_w": ones(d), "lnf_b": zeros(d), "w_lm": normal(d, vocab)}


def make_gpt(batch: int = 16, seq: int = 64, d_model: int = 128, heads: int = 4,
             vocab: int = 65, seed: int = 0):
    """One pre-LN transformer block language model, forward and backward: token +
    positional embedding, LN, causal multi-head self-attention, residual, LN, ReLU MLP
    (4x), residual, final LN, LM head, mean cross-entropy over every position."""
    rng = np.random.default_rng(seed)
    p = gpt_params(rng, d_model, seq, vocab)
    tok = rng.integers(0, vocab, (batch, seq))
    tgt = rng.integers(0, vocab, (batch, seq))
    b_, t_, d, h = batch, seq, d_model, heads
    dh = d // h
    n = b_ * t_
    scale = F32(1.0 / np.sqrt(dh))
    causal = np.triu(np.full((t_, t_), -np.inf, F32), 1)
    tgt_flat = tgt.reshape(-1)

    def heads_of(t2):      # (N, D) -> (B, H, T, dh), contiguous
        return np.ascontiguousarray(t2.reshape(b_, t_, h, dh).transpose(0, 2, 1, 3))

    def merge(t4):         # (B, H, T, dh) -> (N, D)
        return t4.transpose(0, 2, 1, 3).reshape(n, d)

    def step():
        # ---- forward
        x = (p["wte"][tok] + p["wpe"]).reshape(n, d)
        h1, xh1, r1 = _ln(x, p["ln1_w"], p["ln1_b"])
        qkv = h1 @ p["w_qkv"] + p["b_qkv"]
        q, k, v = np.ascontiguousarray(
            qkv.reshape(b_, t_, 3, h, dh).transpose(2, 0, 3, 1, 4))
        s = (q * scale) @ k.transpose(0, 1, 3, 2)
        s += causal
        s -= s.max(axis=-1, keepdims=True)
        att = np.exp(s, out=s)
        att /= att.sum(axis=-1, keepdims=True)
        y2 = merge(att @ v)
        x1 = x + (y2 @ p["w_o"] + p["b_o"])
        h2, xh2, r2 = _ln(x1, p["ln2_w"], p["ln2_b"])
        f = h2 @ p["w_1"] + p["b_1"]
        r = np.maximum(f, 0)
        x2 = x1 + (r @ p["w_2"] + p["b_2"])
        hf, xhf, rf = _ln(x2, p["lnf_w"], p["lnf_b"])
        loss, gl = _cross_entropy(hf @ p["w_lm"], tgt_flat)
        # ---- backward
        g = {"w_lm": hf.T @ gl}
        gx2, g["lnf_w"], g["lnf_b"] = _ln_backward(gl @ p["w_lm"].T, p["lnf_w"], xhf, rf)
        g["w_2"], g["b_2"] = r.T @ gx2, gx2.sum(axis=0)
        gr = gx2 @ p["w_2"].T
        gr *= f > 0
        g["w_1"], g["b_1"] = h2.T @ gr, gr.sum(axis=0)
        gh2, g["ln2_w"], g["ln2_b"] = _ln_backward(gr @ p["w_1"].T, p["ln2_w"], xh2, r2)
        gx1 = gx2 + gh2
        g["w_o"], g["b_o"] = y2.T @ gx1, gx1.sum(axis=0)
        gy = heads_of(gx1 @ p["w_o"].T)
        gp = gy @ v.transpose(0, 1, 3, 2)
        gv = att.transpose(0, 1, 3, 2) @ gy
        gs = gp - (gp * att).sum(axis=-1, keepdims=True)
        gs *= att
        gs *= scale
        gqkv = np.stack([gs @ k, gs.transpose(0, 1, 3, 2) @ q, gv]).transpose(
            1, 3, 0, 2, 4).reshape(n, 3 * d)
        g["w_qkv"], g["b_qkv"] = h1.T @ gqkv, gqkv.sum(axis=0)
        gh1, g["ln1_w"], g["ln1_b"] = _ln_backward(gqkv @ p["w_qkv"].T, p["ln1_w"], xh1, r1)
        gx = gx1 + gh1
        g["wpe"] = gx.reshape(b_, t_, d).sum(axis=0)
        g["wte"] = _one_hot(tok, vocab).T @ gx
        state["grads"] = g
        return loss

    state = {"params": p, "tok": tok, "tgt": tgt, "heads": heads}
    step.state = state
    return step


def _sigmoid(z):
    out = np.negative(z)
    np.exp(out, out=out)
    out += 1.0
    return np.reciprocal(out, out=out)


def make_lstm(batch: int = 32, seq: int = 32, embed: int = 64, hidden: int = 128,
              vocab: int = 65, seed: int = 0):
    """A one-layer LSTM language model, forward and backward through time: embedding,
    ``nn.LSTM(embed, hidden, batch_first=True)`` (PyTorch's gate order i, f, g, o and both
    biases), a linear head, mean cross-entropy over every position. The input projection
    of all steps is one GEMM, and so are the weight gradients."""
    rng = np.random.default_rng(seed)
    hd = hidden
    p = {"emb": rng.standard_normal((vocab, embed)).astype(F32),
         "weight_ih_l0": _uniform(rng, (4 * hd, embed), hd),
         "weight_hh_l0": _uniform(rng, (4 * hd, hd), hd),
         "bias_ih_l0": _uniform(rng, (4 * hd,), hd), "bias_hh_l0": _uniform(rng, (4 * hd,), hd),
         "head_w": _uniform(rng, (vocab, hd), hd), "head_b": _uniform(rng, (vocab,), hd)}
    tok = rng.integers(0, vocab, (batch, seq))
    tgt = rng.integers(0, vocab, (batch, seq))
    n = batch * seq

    def step():
        w_ih, w_hh = p["weight_ih_l0"], p["weight_hh_l0"]
        xe = p["emb"][tok].reshape(n, embed)
        zx = (xe @ w_ih.T + (p["bias_ih_l0"] + p["bias_hh_l0"])).reshape(batch, seq, 4 * hd)
        gates = np.empty((seq, batch, 4 * hd), F32)       # activated i, f, g, o
        cs = np.empty((seq + 1, batch, hd), F32)          # c_{t-1} at [t]
        hs = np.empty((seq + 1, batch, hd), F32)          # h_{t-1} at [t]
        tcs = np.empty((seq, batch, hd), F32)
        cs[0] = 0.0
        hs[0] = 0.0
        for t in range(seq):
            z = gates[t]
            np.add(zx[:, t], hs[t] @ w_hh.T, out=z)
            z[:, :2 * hd] = _sigmoid(z[:, :2 * hd])
            np.tanh(z[:, 2 * hd:3 * hd], out=z[:, 2 * hd:3 * hd])
            z[:, 3 * hd:] = _sigmoid(z[:, 3 * hd:])
            i, f, g, o = z[:, :hd], z[:, hd:2 * hd], z[:, 2 * hd:3 * hd], z[:, 3 * hd:]
            c = cs[t + 1]
            np.multiply(f, cs[t], out=c)
            c += i * g
            np.tanh(c, out=tcs[t])
            np.multiply(o, tcs[t], out=hs[t + 1])
        out2 = hs[1:].transpose(1, 0, 2).reshape(n, hd)
        loss, gl = _cross_entropy(out2 @ p["head_w"].T + p["head_b"], tgt.reshape(-1))
        grads = {"head_w": gl.T @ out2, "head_b": gl.sum(axis=0)}
        gh_all = (gl @ p["head_w"]).reshape(batch, seq, hd)
        dz = np.empty((seq, batch, 4 * hd), F32)
        dh = np.zeros((batch, hd), F32)
        dc = np.zeros((batch, hd), F32)
        for t in range(seq - 1, -1, -1):
            z = gates[t]
            i, f, g, o = z[:, :hd], z[:, hd:2 * hd], z[:, 2 * hd:3 * hd], z[:, 3 * hd:]
            dh += gh_all[:, t]
            tc = tcs[t]
            d = dz[t]
            np.multiply(dh * tc, o * (1.0 - o), out=d[:, 3 * hd:])         # o
            dc += dh * o * (1.0 - tc * tc)
            np.multiply(dc * g, i * (1.0 - i), out=d[:, :hd])              # i
            np.multiply(dc * cs[t], f * (1.0 - f), out=d[:, hd:2 * hd])    # f
            np.multiply(dc * i, 1.0 - g * g, out=d[:, 2 * hd:3 * hd])      # g
            dc *= f
            dh = d @ w_hh
        dz2 = dz.transpose(1, 0, 2).reshape(n, 4 * hd)
        grads["weight_ih_l0"] = dz2.T @ xe
        grads["weight_hh_l0"] = dz.reshape(-1, 4 * hd).T @ hs[:-1].reshape(-1, hd)
        grads["bias_ih_l0"] = grads["bias_hh_l0"] = dz2.sum(axis=0)
        grads["emb"] = _one_hot(tok, vocab).T @ (dz2 @ w_ih)
        state["grads"] = grads
        return loss

    state = {"params": p, "tok": tok, "tgt": tgt}
    step.state = state
    return step


def make_loader_epoch(samples: int = 2048, features: int = 784, hidden: int = 128,
                      classes: int = 10, batch: int = 64, lr: float = 0.01, seed: int = 0):
    """One epoch of SGD on an MLP ``features-hidden-classes`` fed by shuffled mini-batches
    (what ``DataLoader(TensorDataset(x, y), batch_size, shuffle=True)`` does): a
    permutation, a gathered batch, forward, backward and the update, per batch."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((samples, features)).astype(F32)
    y = rng.integers(0, classes, samples)
    params = [[_uniform(rng, (hidden, features), features), _uniform(rng, (hidden,), features)],
              [_uniform(rng, (classes, hidden), hidden), _uniform(rng, (classes,), hidden)]]
    lr32 = F32(lr)
    order_rng = np.random.default_rng(seed + 1)

    def step():
        (w1, b1), (w2, b2) = params
        perm = order_rng.permutation(samples)
        total = 0.0
        for lo in range(0, samples, batch):
            idx = perm[lo:lo + batch]
            xb, yb = x[idx], y[idx]
            f = xb @ w1.T + b1
            h = np.maximum(f, 0)
            loss, g = _cross_entropy(h @ w2.T + b2, yb)
            gw2, gb2 = g.T @ h, g.sum(axis=0)
            g = g @ w2
            g *= f > 0
            gw1, gb1 = g.T @ xb, g.sum(axis=0)
            for prm, gr in ((w1, gw1), (b1, gb1), (w2, gw2), (b2, gb2)):
                prm -= lr32 * gr
            total += float(loss)
        return total / -(-samples // batch)

    step.state = {"x": x, "y": y, "params": params, "batch": batch, "lr": lr}
    return step
