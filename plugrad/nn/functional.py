"""``plugrad.nn.functional``: PyTorch's ``torch.nn.functional``.

Layers with a fused kernel (linear, conv, pooling, layer norm, GELU, softmax) come from the
core's one-node ops; the rest are short compositions of public Tensor ops, whose last node
takes the name of PyTorch's node for the function (``present_as``: programs print
``grad_fn``), as ``F.leaky_relu(x).grad_fn`` is ``LeakyReluBackward0`` in PyTorch.
"""
from __future__ import annotations

import functools
import math

import plugrad
from plugrad.core.ops.log_sigmoid import log_sigmoid as _log_sigmoid
from plugrad.capture import host_read as _host_read
from plugrad.core import autocast as _autocast
from plugrad.core.autograd.constant_grads import records as _records
from plugrad.core.autograd.node import present_as as _named
from plugrad.core.ops.activation import mish_op as _mish
from plugrad.core.ops.attention import fused_attention as _attn_fused
from plugrad.core.ops.attention import fusable as _attn_fusable
from plugrad.core.ops.declare import functional_namespace as _functional_namespace
from plugrad.core.ops.window import window_geometry as _window_geometry  # noqa: F401
from plugrad.nn._dtypes import expect_dtype as _expect
from plugrad.nn.functional_losses import *  # noqa: F401,F403 - the loss functions
from plugrad.nn.functional_losses import __all__ as _losses_all
from plugrad.nn.functional_activations import *  # noqa: F401,F403 - selu, hardswish, ...
from plugrad.nn.functional_activations import __all__ as _activations_all
from plugrad.nn.functional_layers import *  # noqa: F401,F403 - channel dropout, embedding_bag
from plugrad.nn.functional_layers import __all__ as _layers_all
from plugrad.nn.functional_layers import embedding_renorm_ as _renorm
from plugrad.nn.functional_margin_losses import *  # noqa: F401,F403 - margin losses
from plugrad.nn.functional_margin_losses import __all__ as _margin_all
from plugrad.nn.functional_norms import *  # noqa: F401,F403 - group/instance/rms norms
from plugrad.nn.functional_norms import __all__ as _norms_all
from plugrad.nn.functional_spatial import *  # noqa: F401,F403 - pad, pixel shuffle, fold
from plugrad.nn.functional_spatial import __all__ as _spatial_all
from plugrad.nn.functional_3d import *  # noqa: F401,F403 - conv3d, 3-d pools, unpooling
from plugrad.nn.functional_3d import __all__ as _volumetric_all
from plugrad.nn.functional_sampling import *  # noqa: F401,F403 - grid_sample, ctc_loss, ...
from plugrad.nn.functional_sampling import __all__ as _sampling_all

# The core's ops declared with an ``nn.functional`` spelling (linear, conv, pooling, norms,
# gelu, ...): one declaration each, beside its forward (plugrad/core/ops/declare.py).
globals().update(_functional_namespace())
_silu = _functional_namespace()["silu"]

__all__ = sorted(_functional_namespace()) + ["bilinear", "unfold", "fold", "batch_norm", "dropout",
           "embedding", "relu", "relu_", "leaky_relu", "sigmoid", "tanh",
           "softmax", "log_softmax", "softplus", "pad", "one_hot", "normalize",
           "scaled_dot_product_attention", "elu", "hardtanh", "relu6", "mish", "softsign",
           "glu", "logsigmoid", "causal_mask", "multi_head_attention_forward"] + list(_losses_all)
__all__ += list(_activations_all) + list(_layers_all) + list(_margin_all) + list(_norms_all)
__all__ += list(_volumetric_all) + list(_sampling_all)


# ====================================================================== activations
def relu(x, inplace: bool = False):
    return x.relu_() if inplace else x.relu()


def relu_(x):
    return x.relu_()


def _inplace(x, fn, inplace: bool, node_name: str):
    """``fn(x)`` (its node named as PyTorch's), or written into ``x``: then computed from a
    copy of ``x`` where autograd records, so backward still has the input the op saved
    (PyTorch's in-place forms)."""
    if not inplace:
        return _named(_records(fn(x), x), node_name)
    tracked = x.requires_grad and plugrad.is_grad_enabled()
    src = x.clone() if tracked else x
    return x.copy_(_records(fn(src), src))


def leaky_relu(x, negative_slope: float = 0.01, inplace: bool = False):
    _expect("leaky_relu", x)
    return _inplace(x, lambda t: plugrad.where(t > 0, t, t * negative_slope), inplace,
                    "LeakyReluBackward0")


def relu6(x, inplace: bool = False):
    _expect("relu6", x, ints=True)
    return hardtanh(x, 0.0, 6.0, inplace)  # noqa: F821 - declared in core (activation.py)


def silu(x, inplace: bool = False):
    # the core's op: one kernel each way, and its own dtype check
    return _inplace(x, _silu, inplace, "SiluBackward0")


def mish(x, inplace: bool = False):
    _expect("mish", x)
    return _inplace(x, _mish, inplace, "MishBackward0")


def sigmoid(x):
    return x.sigmoid()


def tanh(x):
    return x.tanh()


def softsign(x):
    """PyTorch's ``x / (|x| + 1)`` with an integer ``1``: integer inputs wrap as there
    (int32's ``|-2**31| + 1``, uint8's ``255 + 1``) before the true division."""
    _expect("softsign", x, ints=True)
    return x / (x.abs() + 1)


def logsigmoid(x):
    _expect("logsigmoid", x)
    return _log_sigmoid(x)


def softplus(x, beta: float = 1.0, threshold: float = 20.0):
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold`` (PyTorch's rule)."""
    _expect("softplus", x)
    bx = x * beta
    soft = (bx.clamp_max(threshold).exp().log1p()) / beta
    return _named(plugrad.where(bx > threshold, x, soft), "SoftplusBackward0")


def glu(x, dim: int = -1):
    _expect("glu", x)
    a, b = x.chunk(2, dim)
    return _named(a * b.sigmoid(), "GluBackward0")


def softmax(x, dim=None, _stacklevel=3, dtype=None):
    return plugrad.softmax(x, dim, dtype=dtype)


def log_softmax(x, dim=None, _stacklevel=3, dtype=None):
    return plugrad.log_softmax(x, dim, dtype=dtype)


# ====================================================================== linear layers
def bilinear(x1, x2, weight, bias=None):
    """``y_k = x1 @ W_k @ x2 + b_k`` for ``weight`` of shape ``(out, in1, in2)``."""
    _expect("bilinear", x1, ints=True)
    if weight.ndim != 3 or x1.shape[-1] != weight.shape[1] or x2.shape[-1] != weight.shape[2]:
        raise plugrad.ShapeError(f"bilinear: inputs {list(x1.shape)} and {list(x2.shape)} do "
                                 f"not match weight {list(weight.shape)} (out, in1, in2)")
    y = plugrad.einsum("...i,oij,...j->...o", x1, weight, x2)
    return y + bias if bias is not None else y


# ====================================================================== normalisation
def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise over every dim but the channel dim (1). In training, batch statistics are
    used and the running ones updated in place (unbiased variance, as in PyTorch).

    As PyTorch's CPU kernel: ``y = x * alpha + beta`` with per-channel ``alpha = invstd *
    weight`` and ``beta = bias - mean * alpha`` (two passes over ``x`` instead of four; its
    special values: an infinite weight makes ``beta`` infinite too), and half tensors
    computed in float32 (their variance overflows half)."""
    _expect("batch_norm", x)
    if x.ndim < 2:
        raise ValueError(f"batch_norm: expected at least 2-D input (N, C, ...), got "
                         f"{x.ndim}-D input of shape {list(x.shape)}")
    c = x.shape[1]
    axes = (0,) + tuple(range(2, x.ndim))
    view = (1, c) + (1,) * (x.ndim - 2)
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise plugrad.ShapeError(f"batch_norm: {name} should have shape [{c}] (the channel "
                                     f"count "
                             f"of input {list(x.shape)}), got {list(t.shape)}")
    half = x.dtype in (plugrad.float16, plugrad.bfloat16)
    xs = x.float() if half else x
    if training:
        count = x.numel() // c
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {list(x.shape)}")
        mean = xs.mean(axes)
        var = (xs - mean.reshape(view)).square().mean(axes)
        if running_mean is not None:
            with plugrad.no_grad():
                running_mean.mul_(1 - momentum).add_(
                    (mean.detach() * momentum).to(running_mean.dtype))
                running_var.mul_(1 - momentum).add_(
                    (var.detach() * (momentum * count / (count - 1))).to(running_var.dtype))
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: running_mean and running_var are required when "
                             "training=False")
        mean, var = running_mean.to(xs.dtype), running_var.to(xs.dtype)
    alpha = (var + eps).rsqrt()
    if weight is not None:
        alpha = alpha * weight.to(xs.dtype)
    beta = -(mean * alpha) if bias is None else bias.to(xs.dtype) - mean * alpha
    y = xs * alpha.reshape(view) + beta.reshape(view)
    y = y.to(x.dtype) if half else y
    return _named(_records(y, x, weight), "NativeBatchNormBackward0")


def normalize(x, p: float = 2.0, dim: int = 1, eps: float = 1e-12):
    """``x / max(||x||_p, eps)`` along ``dim``."""
    _expect("normalize", x)
    return x / x.norm(p, dim, keepdim=True).clamp_min(eps)


# ====================================================================== dropout, embedding
def dropout(x, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        out = x * 0.0
    else:
        keep = (plugrad.rand(tuple(x.shape), dtype=x.dtype, device=x.device) >= p)
        out = x * (keep.to(x.dtype) * (1.0 / (1.0 - p)))
    return x.copy_(out) if inplace else out


def _check_embedding_indices(host, n) -> bool:
    lo, hi = int(host.min()), int(host.max())
    if hi >= n or lo < -n:
        raise IndexError(f"embedding: index out of range in self (indices must be in "
                         f"[0, {n}), got values in [{lo}, {hi}])")
    return True


def embedding(x, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by the integer ``x``; the ``padding_idx`` row gets no grad;
    with ``scale_grad_by_freq`` each row's gradient is divided by how often the batch picks it
    (a hook on the picked rows, so the forward values are untouched)."""
    if sparse:
        raise NotImplementedError("embedding: sparse=True (a sparse gradient) is not supported; "
                                  "use sparse=False")
    if weight.ndim != 2:
        raise plugrad.ShapeError(f"embedding: 'weight' must be 2-D, got a weight of shape "
                                 f"{list(weight.shape)}")
    if x.dtype.is_floating_point or x.dtype == plugrad.bool:
        raise plugrad.DTypeError(f"embedding: Expected tensor for argument #1 'indices' to "
                                 f"have one of the following scalar types: Long, Int; but got {x.dtype} instead")
    n = weight.shape[0]
    if x.numel():
        _host_read(functools.partial(_check_embedding_indices, n=n), x)
    idx = x.reshape(-1).long()
    idx = plugrad.where(idx < 0, idx + n, idx)
    if max_norm is not None:  # rows rescaled in place first, as PyTorch's embedding_renorm_
        _renorm(weight, idx, max_norm, norm_type)
    out = weight.index_select(0, idx).reshape(tuple(x.shape) + (weight.shape[1],))
    if scale_grad_by_freq and out.requires_grad:
        counts = idx.bincount(minlength=n).index_select(0, idx).to(out.dtype)
        scale = (1.0 / counts).reshape(tuple(x.shape) + (1,))
        out.register_hook(lambda g: g * scale)
    if padding_idx is not None and weight.requires_grad:
        pad_idx = padding_idx % n
        keep = (x != pad_idx).unsqueeze(-1)
        out = plugrad.where(keep, out, out.detach())
    return _named(out, "EmbeddingBackward0")


def one_hot(x, num_classes: int = -1):
    if x.dtype != plugrad.int64:
        raise plugrad.DTypeError(f"one_hot is only applicable to index tensor of type "
                                 f"LongTensor (int64), got {x.dtype}")
    if num_classes < 0:
        num_classes = int(x.max()) + 1 if x.numel() else 0
    elif x.numel() and int(x.max()) >= num_classes:
        raise RuntimeError(f"one_hot: Class values must be smaller than num_classes "
                           f"({num_classes}), got {int(x.max())}")
    if x.numel() and int(x.min()) < 0:
        raise RuntimeError("one_hot: Class values must be non-negative.")
    classes = plugrad.arange(num_classes, device=x.device)
    return (x.unsqueeze(-1) == classes).long()


# ====================================================================== attention
def causal_mask(lq: int, lk: int, device=None):
    """Bool ``(lq, lk)``: True where query i may attend to key j (j <= i)."""
    return (plugrad.arange(lq, device=device).unsqueeze(1)
            >= plugrad.arange(lk, device=device).unsqueeze(0))


def _attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """``softmax(q k^T * scale + mask) v`` and the attention weights."""
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise plugrad.ShapeError(f"scaled_dot_product_attention: query {list(q.shape)}, key "
                                 f"{list(k.shape)} and value {list(v.shape)} do not fit "
                                 f"(need query[..., E], key[..., S, E], value[..., S, Ev])")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q * scale) @ k.transpose(-2, -1)
    lq, lk = q.shape[-2], k.shape[-2]
    if is_causal:
        if attn_mask is not None:
            raise ValueError("scaled_dot_product_attention: explicit attn_mask should not be "
                             "set when is_causal=True")
        attn_mask = causal_mask(lq, lk, q.device)
    if attn_mask is not None:
        if attn_mask.dtype == plugrad.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    if attn_mask is not None:
        # torch 2.13's safe softmax: a row whose every score is -inf (no key allowed) gets
        # weights 0, and a 0 gradient (its scores are made finite before the softmax)
        dead = (scores == float("-inf")).all(-1, keepdim=True)
        weights = plugrad.softmax(scores.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)
    else:
        weights = plugrad.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return weights @ v, weights


def _fused_attention(q, k, v, attn_mask, dropout_p, is_causal, scale):
    """The one-node fused path (plugrad/core/ops/attention.py) where it computes exactly
    what :func:`_attention` does, else None."""
    if dropout_p > 0.0 or (is_causal and attn_mask is not None) or _autocast.active:
        return None
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2 or q.shape[-1] != k.shape[-1] \
            or k.shape[-2] != v.shape[-2]:
        return None
    mask = causal_mask(q.shape[-2], k.shape[-2], q.device) if is_causal else attn_mask
    if mask is not None and mask.dtype == plugrad.bool:  # True: attend; as additive -inf
        mask = plugrad.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(
            mask.logical_not(), float("-inf"))
    if not _attn_fusable(q, k, v, mask):
        return None
    if mask is not None:  # the mask may not grow the scores (the composite's error stays)
        lead = tuple(q.shape[:-1]) + (k.shape[-2],)
        if mask.ndim > len(lead) or any(m not in (1, n) for m, n in
                                        zip(mask.shape[::-1], lead[::-1])):
            return None
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    return _attn_fused(q, k, v, mask, scale)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """Attention as in ``torch.nn.functional.scaled_dot_product_attention``; a boolean mask
    is True where attending is allowed, a float mask is added to the scores."""
    out = _fused_attention(query, key, value, attn_mask, dropout_p, is_causal, scale)
    if out is None:
        out = _attention(query, key, value, attn_mask, dropout_p, is_causal, scale)[0]
    # PyTorch on CPU: one flash-attention node for 4-D inputs, the math path's batched
    # matmul (a view of bmm's result) otherwise
    return _named(out, "ScaledDotProductFlashAttentionForCpuBackward0" if query.ndim == 4
                  else "UnsafeViewBackward0")


# multi-head attention uses the functions above, so it is imported last
from plugrad.nn.functional_attention import multi_head_attention_forward  # noqa: E402,F401

__all__ += [n for n in _spatial_all if n not in __all__]  # noqa: E305
