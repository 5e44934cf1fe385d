"""The hand-written NumPy floor for ``benchmarks/compare.py``.

Every workload that compare.py times in plugrad and PyTorch is written here once more in
plain NumPy, forward *and* backward by hand, with no autograd, no graph and no dispatch:
what a careful person would write for exactly this model. Its time is the floor that a
NumPy-backed autograd library can approach but not beat (plugrad's ``cpu`` backend runs the
same NumPy/BLAS kernels, plus dispatch and graph bookkeeping).

Each ``make_*`` builds its state from a seeded ``numpy.random.Generator`` and returns a
zero-argument ``step`` callable that does one iteration and returns the loss (a NumPy
scalar); ``step.state`` exposes the arrays so that tests can compare gradients with an
autograd library.

Nothing here is an asv benchmark (asv imports every module under ``benchmarks/`` when it
discovers benchmarks, so no name here starts with ``time_``, ``mem_``, ``peakmem_``,
``track_`` or ``timeraw_``).
"""
from __future__ import annotations

import numpy as np

F32 = np.float32


def _uniform(rng, shape, fan_in):
    """PyTorch's default Linear/Conv init: U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape).astype(F32)


def _cross_entropy(logits, target):
    """Mean cross-entropy of ``logits`` (N, C) and its gradient w.r.t. the logits."""
    n = logits.shape[0]
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    denom = exp.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    loss = (np.log(denom[:, 0]) - shifted[rows, target]).mean()
    grad = exp / denom
    grad[rows, target] -= 1.0
    grad *= F32(1.0 / n)
    return loss, grad


# --------------------------------------------------------------------------- tiny op
def make_tiny(n: int = 16, seed: int = 0):
    """``(x * y + x).sum()`` and d/dx, on ``n`` float32 elements."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(F32)
    y = rng.standard_normal(n).astype(F32)

    def step():
        z = x * y + x
        s = z.sum()
        g = np.ones_like(z)        # d s / d z
        gx = g * y + g             # d z / d x, both uses of x
        state["grad_x"] = gx
        return s

    state = {"x": x, "y": y}
    step.state = state
    return step


# --------------------------------------------------------------------------- matmul
def make_matmul(n: int = 1024, seed: int = 0):
    """``(a @ b).sum()`` and its gradients w.r.t. ``a`` and ``b``."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(F32)
    b = rng.standard_normal((n, n)).astype(F32)

    def step():
        c = a @ b
        s = c.sum()
        g = np.ones_like(c)
        state["grad_a"] = g @ b.T
        state["grad_b"] = a.T @ g
        return s

    state = {"a": a, "b": b}
    step.state = state
    return step


# --------------------------------------------------------------------------- MLP
def make_mlp(batch: int = 128, sizes=(784, 512, 512, 10), lr: float = 0.01, seed: int = 0):
    """One SGD step of Linear-ReLU-...-Linear with mean cross-entropy."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(F32)
    y = rng.integers(0, sizes[-1], size=batch)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append([_uniform(rng, (fan_out, fan_in), fan_in), _uniform(rng, (fan_out,), fan_in)])
    lr32 = F32(lr)

    def step():
        acts = [x]            # inputs of each Linear
        pre = []              # pre-activations of the hidden layers
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w.T + b
            if i < len(params) - 1:
                pre.append(h)
                h = np.maximum(h, 0)
                acts.append(h)
        loss, g = _cross_entropy(h, y)
        grads = [None] * len(params)
        for i in range(len(params) - 1, -1, -1):
            w, _ = params[i]
            grads[i] = (g.T @ acts[i], g.sum(axis=0))
            if i > 0:
                g = g @ w
                g *= pre[i - 1] > 0
        for (w, b), (gw, gb) in zip(params, grads):
            w -= lr32 * gw
            b -= lr32 * gb
        state["grads"] = grads
        return loss

    state = {"x": x, "y": y, "params": params}
    step.state = state
    return step


# --------------------------------------------------------------------------- conv
def make_conv(batch: int = 32, channels: int = 8, size: int = 28, k: int = 3, classes: int = 10,
              lr: float = 0.01, seed: int = 0):
    """One SGD step of Conv2d(1, channels, k) - ReLU - Flatten - Linear(classes), cross-entropy.

    The convolution is im2col (a strided view) + one matmul; its backward is one matmul for
    the filter gradient (the input needs no gradient).
    """
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 1, size, size)).astype(F32)
    y = rng.integers(0, classes, size=batch)
    o = size - k + 1
    wc = _uniform(rng, (channels, 1, k, k), k * k)
    bc = _uniform(rng, (channels,), k * k)
    feat = channels * o * o
    wf = _uniform(rng, (classes, feat), feat)
    bf = _uniform(rng, (classes,), feat)
    lr32 = F32(lr)
    # im2col once per step, as a framework would (x is new data every step in real life)
    win = np.lib.stride_tricks.sliding_window_view

    def step():
        cols = win(x, (k, k), axis=(2, 3))                       # (N, 1, o, o, k, k)
        cols = cols.transpose(0, 2, 3, 1, 4, 5).reshape(batch * o * o, k * k)
        out = cols @ wc.reshape(channels, -1).T + bc            # (N*o*o, C)
        out = out.reshape(batch, o, o, channels).transpose(0, 3, 1, 2)
        act = np.maximum(out, 0)
        flat = act.reshape(batch, feat)
        logits = flat @ wf.T + bf
        loss, g = _cross_entropy(logits, y)
        gwf = g.T @ flat
        gbf = g.sum(axis=0)
        gflat = (g @ wf).reshape(batch, channels, o, o)
        gflat *= out > 0
        gout = gflat.transpose(0, 2, 3, 1).reshape(batch * o * o, channels)
        gwc = (gout.T @ cols).reshape(wc.shape)
        gbc = gout.sum(axis=0)
        for param, grad in ((wc, gwc), (bc, gbc), (wf, gwf), (bf, gbf)):
            param -= lr32 * grad
        state["grads"] = (gwc, gbc, gwf, gbf)
        return loss

    state = {"x": x, "y": y, "params": (wc, bc, wf, bf)}
    step.state = state
    return step


# --------------------------------------------------------------------------- attention
def make_attention(batch: int = 16, seq: int = 64, d_model: int = 128, heads: int = 4,
                   seed: int = 0):
    """Self-attention as ``nn.MultiheadAttention(d_model, heads, batch_first=True)``
    (in-projection, scaled dot-product softmax attention per head, out-projection), no
    dropout, no mask; loss ``out.sum()``; gradients of all weights and of the input.
    """
    rng = np.random.default_rng(seed)
    dh = d_model // heads
    x = rng.standard_normal((batch, seq, d_model)).astype(F32)
    w_in = _uniform(rng, (3 * d_model, d_model), d_model)
    b_in = np.zeros(3 * d_model, F32)
    w_out = _uniform(rng, (d_model, d_model), d_model)
    b_out = np.zeros(d_model, F32)
    scale = F32(1.0 / np.sqrt(dh))

    def heads_of(t):      # (B, T, D) -> (B, H, T, dh), contiguous for BLAS
        return np.ascontiguousarray(t.reshape(batch, seq, heads, dh).transpose(0, 2, 1, 3))

    def merge(t):         # (B, H, T, dh) -> (B, T, D)
        return t.transpose(0, 2, 1, 3).reshape(batch, seq, d_model)

    def step():
        # projections as 2-D matmuls: NumPy's stacked matmul with a transposed 2-D operand
        # skips BLAS (about 9x slower for these shapes)
        x2 = x.reshape(-1, d_model)
        qkv = (x2 @ w_in.T + b_in).reshape(batch, seq, 3 * d_model)
        q, k, v = (heads_of(t) for t in np.split(qkv, 3, axis=-1))
        s = (q @ k.transpose(0, 1, 3, 2)) * scale                  # (B, H, T, T)
        s -= s.max(axis=-1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(axis=-1, keepdims=True)
        ctx = merge(p @ v)                                         # (B, T, D)
        ctx2 = ctx.reshape(-1, d_model)
        out = (ctx2 @ w_out.T + b_out).reshape(batch, seq, d_model)
        loss = out.sum()
        # backward
        gout = np.ones_like(out)
        g2 = gout.reshape(-1, d_model)
        gw_out = g2.T @ ctx2
        gb_out = g2.sum(axis=0)
        gctx = heads_of(g2 @ w_out)                                # (B, H, T, dh)
        gp = gctx @ v.transpose(0, 1, 3, 2)
        gv = p.transpose(0, 1, 3, 2) @ gctx
        gs = p * (gp - (gp * p).sum(axis=-1, keepdims=True))
        gs *= scale
        gq = gs @ k
        gk = gs.transpose(0, 1, 3, 2) @ q
        gqkv = np.concatenate([merge(gq), merge(gk), merge(gv)], axis=-1)   # (B, T, 3D)
        gq2 = gqkv.reshape(-1, 3 * d_model)
        gw_in = gq2.T @ x2
        gb_in = gq2.sum(axis=0)
        gx = (gq2 @ w_in).reshape(x.shape)
        state["grads"] = {"in_proj_weight": gw_in, "in_proj_bias": gb_in,
                          "out_proj.weight": gw_out, "out_proj.bias": gb_out, "x": gx}
        return loss

    state = {"x": x, "params": {"in_proj_weight": w_in, "in_proj_bias": b_in,
                                "out_proj.weight": w_out, "out_proj.bias": b_out}}
    step.state = state
    return step


# --------------------------------------------------------------------------- Celsius
def make_celsius(lr: float = 0.0001):
    """The seeds' Celsius -> Fahrenheit loop, one step: MSE of ``w * c + b``, plain SGD."""
    c = np.array([0.0, 100.0], F32)
    f = np.array([32.0, 212.0], F32)
    wb = np.zeros(2, F32)          # weight, bias
    lr32 = F32(lr)

    def step():
        pred = wb[0] * c + wb[1]
        diff = pred - f
        err = (diff * diff).mean()
        g = diff * F32(2.0 / diff.size)     # d err / d pred
        gw = (g * c).sum()
        gb = g.sum()
        wb[0] -= lr32 * gw
        wb[1] -= lr32 * gb
        return err

    step.state = {"wb": wb}
    return step
