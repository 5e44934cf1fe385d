"""Scaled dot-product attention as one node on the backend's fused kernels.

``F.scaled_dot_product_attention`` without dropout and with a mask that needs no gradient
comes here: one ``scaled_dot_product_attention`` kernel call forward (the scores, softmax
and product never become Tensors or nodes) and one ``scaled_dot_product_attention_backward``
call backward, instead of eight recorded ops and their rules. Higher-order gradients go
through the fused kernels' Tensor binding (:mod:`plugrad.core.ops.fused`), which
differentiates the contract's composite of each kernel.
"""
from __future__ import annotations

from plugrad.core.autograd import engine
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record, recording
from plugrad.core.tensor import Tensor, _wrap


class ScaledDotProductAttentionBackward0(Node):
    """The fused kernel's gradients from the saved weights. The Tensor binding recomputes
    the weights with the forward kernel itself (the same values, now functions of ``q`` and
    ``k``), so second-order gradients see how they depend on them."""

    def grad(self, F, g, q, k, v, attn):
        gq, gk, gv = F.scaled_dot_product_attention_backward(g, q, k, v, attn, self.scale)
        nxt = self.next
        return (gq if nxt[0] else None, gk if nxt[1] else None, gv if nxt[2] else None)

    def saved_tensors(self):
        q, k, v = self.saved
        _, attn = engine.tensor_ops_for(self.k).scaled_dot_product_attention(
            q, k, v, self.mask, self.scale)
        return q, k, v, attn


def fusable(q, k, v, mask) -> bool:
    """Whether the fused kernels compute exactly this call: three Tensors of one floating
    dtype and device with equal batch dims, and an additive mask that needs no gradient."""
    if not (isinstance(q, Tensor) and isinstance(k, Tensor) and isinstance(v, Tensor)):
        return False
    if q.dtype is not k.dtype or q.dtype is not v.dtype or not q.dtype.is_floating_point:
        return False
    if q.device is not k.device or q.device is not v.device or q.ndim < 2:
        return False
    if not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]):
        return False
    return mask is None or (isinstance(mask, Tensor) and mask.dtype is q.dtype
                            and mask.device is q.device and not mask.requires_grad)


def fused_attention(q, k, v, mask, scale: float):
    """``softmax(q k^T * scale + mask) v`` (``mask`` None or an additive Tensor that
    :func:`fusable` accepted), an all-masked query row giving 0, as one node."""
    kt = q._k
    md = None if mask is None else mask._data
    out, attn = kt.scaled_dot_product_attention(q._data, k._data, v._data, md, float(scale))
    r = _wrap(out, q.dtype, q.device, kt)
    if recording(q, k, v):
        node = ScaledDotProductAttentionBackward0()
        node.scale, node.mask = float(scale), mask  # a Tensor: the binding's argument
        record(r, node, (q, k, v), (q, k, v), (q._data, k._data, v._data, attn))
    return r
