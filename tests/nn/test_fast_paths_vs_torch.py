"""The performance fast paths compute what the general paths do: values and gradients
against PyTorch on every device.

Covered: ``F.scaled_dot_product_attention`` on the fused kernels (plugrad/core/ops/
attention.py) and the cases that stay on the composite; the NumPy backend's bitwise
``where(cond, x, 0)`` (ReLU's backward, masked_fill) with NaN, inf and -0.0; an N-d input
times a 2-D weight as one 2-D GEMM forward and backward.
"""
import numpy as np
import pytest
import torch

import plugrad
import plugrad.nn.functional as F
from plugrad.core.ops.attention import ScaledDotProductAttentionBackward0
from .helpers import host

TF = torch.nn.functional


def _pair(a, device, dtype=plugrad.float64, rg=True):
    ours = plugrad.tensor(a, dtype=dtype, device=device, requires_grad=rg)
    theirs = torch.tensor(a, dtype=getattr(torch, dtype.name), requires_grad=rg)
    return ours, theirs


def _qkv(device, shape_q, shape_k, ev=None, seed=0, dtype=plugrad.float64):
    rng = np.random.default_rng(seed)
    shape_v = shape_k[:-1] + (ev or shape_k[-1],)
    return [_pair(rng.standard_normal(s), device, dtype) for s in (shape_q, shape_k, shape_v)]


def _fused(out):
    return isinstance(out.grad_fn, ScaledDotProductAttentionBackward0)


def _check_attention(device, pairs, tol=1e-10, fused=True, **kw):
    (q, tq), (k, tk), (v, tv) = pairs
    ours_kw = {n: (plugrad.tensor(a.detach().numpy(), device=device)
                   if isinstance(a, torch.Tensor) else a) for n, a in kw.items()}
    out = F.scaled_dot_product_attention(q, k, v, **ours_kw)
    tout = TF.scaled_dot_product_attention(tq, tk, tv, **kw)
    assert _fused(out) == fused
    np.testing.assert_allclose(host(out), tout.detach().numpy(), atol=tol, rtol=tol)
    rng = np.random.default_rng(1)
    gy = rng.standard_normal(tuple(out.shape))
    out.backward(plugrad.tensor(gy, dtype=out.dtype, device=device))
    tout.backward(torch.tensor(gy, dtype=tout.dtype))
    for a, ta in ((q, tq), (k, tk), (v, tv)):
        np.testing.assert_allclose(host(a.grad), ta.grad.numpy(), atol=tol, rtol=tol)
    return out


@pytest.mark.parametrize("case", ["plain", "causal", "causal_rect", "bool_mask", "float_mask",
                                  "broadcast_mask", "three_d", "scale"])
def test_fused_attention_matches_torch(device, case):
    b, h, lq, lk, e = (2, 2, 5, 5, 4) if device == "ref" else (3, 4, 9, 9, 8)
    kw = {}
    if case == "causal_rect":
        lk = lq + 3
    pairs = _qkv(device, (b, h, lq, e), (b, h, lk, e))
    rng = np.random.default_rng(2)
    if case in ("causal", "causal_rect"):
        kw["is_causal"] = True
    elif case == "bool_mask":
        m = rng.random((lq, lk)) > 0.4
        m[1] = False  # a query row with no key allowed: weights 0, output 0, gradient 0
        kw["attn_mask"] = torch.tensor(m)
    elif case == "float_mask":
        kw["attn_mask"] = torch.tensor(rng.standard_normal((b, h, lq, lk)))
    elif case == "broadcast_mask":
        m = rng.standard_normal((1, 1, lq, lk))
        m[..., 0, 2:] = -np.inf
        kw["attn_mask"] = torch.tensor(m)
    elif case == "three_d":
        pairs = _qkv(device, (b * h, lq, e), (b * h, lk, e), ev=e + 1)
    elif case == "scale":
        kw["scale"] = 0.3
    out = _check_attention(device, pairs, **kw)
    assert type(out.grad_fn).__name__ == ("ScaledDotProductFlashAttentionForCpuBackward0"
                                          if out.ndim == 4 else "UnsafeViewBackward0")


def test_fused_attention_float32_and_views(device):
    """The GPT layout: q, k, v as transposed views of one projection, float32, causal."""
    b, t, h, e = (2, 4, 2, 3) if device == "ref" else (4, 16, 4, 8)
    rng = np.random.default_rng(3)
    x, tx = _pair(rng.standard_normal((b, t, 3 * h * e)), device, plugrad.float32)
    parts = [p.view(b, t, h, e).transpose(1, 2) for p in x.split(h * e, dim=-1)]
    tparts = [p.view(b, t, h, e).transpose(1, 2) for p in tx.split(h * e, dim=-1)]
    out = F.scaled_dot_product_attention(*parts, is_causal=True)
    tout = TF.scaled_dot_product_attention(*tparts, is_causal=True)
    assert _fused(out)
    np.testing.assert_allclose(host(out), tout.detach().numpy(), atol=1e-5)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    np.testing.assert_allclose(host(x.grad), tx.grad.numpy(), atol=1e-5)


def test_attention_mask_with_grad_and_dropout_stay_on_the_composite(device):
    b, h, l, e = (1, 2, 4, 3) if device == "ref" else (2, 2, 6, 4)
    pairs = _qkv(device, (b, h, l, e), (b, h, l, e))
    rng = np.random.default_rng(4)
    m, tm = _pair(rng.standard_normal((l, l)), device)
    (q, tq), (k, tk), (v, tv) = pairs
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    tout = TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm)
    assert not _fused(out)
    out.sum().backward()
    tout.sum().backward()
    for a, ta in ((q, tq), (k, tk), (v, tv), (m, tm)):
        np.testing.assert_allclose(host(a.grad), ta.grad.numpy(), atol=1e-10)
    drop = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert not _fused(drop)


def test_fused_attention_double_backward_matches_torch(device):
    pairs = _qkv(device, (1, 2, 3, 2), (1, 2, 4, 2))
    (q, tq), (k, tk), (v, tv) = pairs
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    # PyTorch's fused CPU kernel has no double backward: its math formulation instead
    causal = torch.ones(3, 4, dtype=torch.bool).tril()
    scores = (tq @ tk.transpose(-2, -1) / np.sqrt(2)).masked_fill(~causal, float("-inf"))
    tout = scores.softmax(-1) @ tv
    assert _fused(out)
    gq, gk = plugrad.autograd.grad((out * out).sum(), (q, k), create_graph=True)
    tgq, tgk = torch.autograd.grad((tout * tout).sum(), (tq, tk), create_graph=True)
    (gq.sum() + (gk * gk).sum()).backward()
    (tgq.sum() + (tgk * tgk).sum()).backward()
    for a, ta in ((q, tq), (k, tk), (v, tv)):
        np.testing.assert_allclose(host(a.grad), ta.grad.numpy(), atol=1e-9)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_relu_backward_masks_exactly(device, dtype):
    """ReLU's gradient is ``where(y <= 0, 0, g)``: +0 where masked (also for an inf or NaN
    gradient there), the gradient itself elsewhere and where the input is NaN."""
    if dtype == "bfloat16" and device == "ref":
        pytest.skip("the reference backend has no bfloat16")
    n = 300 if device == "ref" else 5000  # above the bitwise path's size threshold on cpu
    rng = np.random.default_rng(5)
    x = rng.standard_normal(n)
    x[::97] = np.nan
    x[::89] = 0.0
    g = rng.standard_normal(n)
    g[::7] = np.inf
    g[::11] = np.nan
    g[::13] = -0.0
    g[::17] = -np.inf
    dt = getattr(plugrad, dtype)
    xs, txs = _pair(x, device, dt)
    y, ty = F.relu(xs), TF.relu(txs)
    y.backward(plugrad.tensor(g, dtype=dt, device=device))
    ty.backward(torch.tensor(g, dtype=getattr(torch, dtype)))
    ours = np.asarray(xs.grad.detach().float()).astype(np.float64)
    theirs = txs.grad.float().numpy().astype(np.float64)
    np.testing.assert_array_equal(ours, theirs)
    real = ~np.isnan(theirs)  # (a NaN's sign bit after the float64 -> bfloat16 cast differs)
    np.testing.assert_array_equal(np.signbit(ours[real]), np.signbit(theirs[real]))


def test_masked_fill_zero_matches_torch(device):
    n = 200 if device == "ref" else 3000
    rng = np.random.default_rng(6)
    a = rng.standard_normal((2, n)).astype(np.float32)
    a[:, ::5] = np.nan
    m = rng.random((2, n)) > 0.5
    ours = plugrad.tensor(a, device=device).masked_fill(plugrad.tensor(m, device=device), 0.0)
    theirs = torch.tensor(a).masked_fill(torch.tensor(m), 0.0)
    np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())
    w = plugrad.where(plugrad.tensor(m, device=device), plugrad.tensor(a, device=device), 0.0)
    np.testing.assert_array_equal(np.asarray(w), torch.where(torch.tensor(m), torch.tensor(a),
                                                             0.0).numpy())


@pytest.mark.parametrize("lead", [(3, 4), (2, 3, 5)])
def test_nd_times_matrix_matches_torch(device, lead):
    rng = np.random.default_rng(7)
    d, n = (3, 2) if device == "ref" else (16, 12)
    x, tx = _pair(rng.standard_normal(lead + (d,)), device)
    w, tw = _pair(rng.standard_normal((d, n)), device)
    out, tout = x @ w, tx @ tw
    np.testing.assert_allclose(host(out), tout.detach().numpy(), atol=1e-12)
    gy = rng.standard_normal(tuple(out.shape))
    out.backward(plugrad.tensor(gy, device=device))
    tout.backward(torch.tensor(gy))
    np.testing.assert_allclose(host(x.grad), tx.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(host(w.grad), tw.grad.numpy(), atol=1e-12)
