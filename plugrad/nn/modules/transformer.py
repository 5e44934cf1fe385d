"""Attention layers: ``MultiheadAttention``, ``TransformerEncoderLayer``,
``TransformerEncoder`` (PyTorch's parameter names, masks and defaults)."""
from __future__ import annotations

import copy

import plugrad
from plugrad.nn import functional as F
from plugrad.nn import init
from plugrad.nn.modules.container import ModuleList
from plugrad.nn.modules.linear import Linear
from plugrad.nn.modules.misc import Dropout
from plugrad.nn.modules.module import Module
from plugrad.nn.modules.normalization import LayerNorm
from plugrad.nn.parameter import Parameter


def _additive_mask(mask, like, what: str):
    """A float mask to add to attention scores: a bool ``True`` (masked out) becomes -inf."""
    if mask is None:
        return None
    if mask.dtype == plugrad.bool:
        zeros = plugrad.zeros(tuple(mask.shape), dtype=like.dtype, device=like.device)
        return zeros.masked_fill(mask, float("-inf"))
    if not mask.dtype.is_floating_point:
        raise TypeError(f"MultiheadAttention: only bool and floating types of {what} are "
                        f"supported, got {mask.dtype}")
    return mask.to(like.dtype)


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for the output projection of attention (it shows in ``repr``)."""


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads of ``embed_dim // num_heads`` features each.

    Masks follow PyTorch's MHA convention: a bool ``True`` marks a position that may *not*
    be attended to; a float mask is added to the scores."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads}) and both positive")
        if add_bias_kv or add_zero_attn or (kdim not in (None, embed_dim)) or \
                (vdim not in (None, embed_dim)):
            raise NotImplementedError("MultiheadAttention: add_bias_kv, add_zero_attn and "
                                      "kdim/vdim != embed_dim are not supported")
        factory = {"device": device, "dtype": dtype}
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.head_dim, self.batch_first = embed_dim // num_heads, batch_first
        self.kdim = self.vdim = embed_dim
        self._qkv_same_embed_dim = True
        self.in_proj_weight = Parameter(plugrad.empty(3 * embed_dim, embed_dim, **factory))
        self.register_parameter("q_proj_weight", None)
        self.register_parameter("k_proj_weight", None)
        self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(plugrad.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False):
        unbatched = query.dim() == 2
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif query.dim() != 3:
            raise ValueError(f"MultiheadAttention: query should be unbatched 2D or batched 3D "
                             f"tensor but received {query.dim()}-D query tensor")
        if not self.batch_first:  # work batch-first: (N, L, E)
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        n, lq, e = query.shape
        s = key.shape[1]
        if e != self.embed_dim:
            raise ValueError(f"MultiheadAttention: was expecting embedding dimension of "
                             f"{self.embed_dim}, but got {e}")
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise ValueError(f"MultiheadAttention: key shape {list(key.shape)} does not match "
                             f"value shape {list(value.shape)}")
        w, b = self.in_proj_weight, self.in_proj_bias
        wq, wk, wv = w.chunk(3)
        bq, bk, bv = b.chunk(3) if b is not None else (None, None, None)
        h, hd = self.num_heads, self.head_dim
        q = F.linear(query, wq, bq).reshape(n, lq, h, hd).transpose(1, 2)
        k = F.linear(key, wk, bk).reshape(n, s, h, hd).transpose(1, 2)
        v = F.linear(value, wv, bv).reshape(n, s, h, hd).transpose(1, 2)
        mask = self._merged_mask(attn_mask, key_padding_mask, is_causal, q, n, lq, s)
        out, weights = F._attention(q, k, v, mask, self.dropout if self.training else 0.0)
        out = self.out_proj(out.transpose(1, 2).reshape(n, lq, e))
        if not self.batch_first:
            out = out.transpose(0, 1)
        if unbatched:
            out = out.squeeze(1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(1)
        return out, (weights.squeeze(0) if unbatched else weights)

    def _merged_mask(self, attn_mask, key_padding_mask, is_causal, q, n, lq, s):
        if is_causal and attn_mask is None:
            attn_mask = F.causal_mask(lq, s, q.device).logical_not()  # True: masked out
        mask = _additive_mask(attn_mask, q, "attn_mask")
        if mask is not None:
            if mask.dim() == 2:
                if tuple(mask.shape) != (lq, s):
                    raise ValueError(f"MultiheadAttention: The shape of the 2D attn_mask is "
                                     f"{list(mask.shape)}, but should be {[lq, s]}.")
            elif mask.dim() == 3:
                if tuple(mask.shape) != (n * self.num_heads, lq, s):
                    raise ValueError(f"MultiheadAttention: The shape of the 3D attn_mask is "
                                     f"{list(mask.shape)}, but should be "
                                     f"{[n * self.num_heads, lq, s]}.")
                mask = mask.reshape(n, self.num_heads, lq, s)
            else:
                raise ValueError(f"MultiheadAttention: attn_mask's dimension {mask.dim()} is "
                                 f"not supported")
        kpm = _additive_mask(key_padding_mask, q, "key_padding_mask")
        if kpm is not None:
            if tuple(kpm.shape) != (n, s):
                raise ValueError(f"MultiheadAttention: expecting key_padding_mask shape of "
                                 f"{[n, s]}, but got {list(kpm.shape)}")
            kpm = kpm.reshape(n, 1, 1, s)
            mask = kpm if mask is None else mask + kpm
        return mask

class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual and a LayerNorm
    (after each block, or before it when ``norm_first``)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation not in ("relu", "gelu"):
                raise RuntimeError(f"activation should be relu/gelu, not {activation}")
            activation = F.relu if activation == "relu" else F.gelu
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer``, then an optional final norm."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm=None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal: bool = False):
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                        is_causal=is_causal)
        return self.norm(out) if self.norm is not None else out
