"""Likelihood, margin and embedding losses of ``torch.nn.functional``: poisson_nll,
gaussian_nll, margin_ranking, hinge_embedding, soft_margin, cosine_embedding,
triplet_margin (and with a distance function), multi_margin, multilabel_margin and
multilabel_soft_margin.

Compositions of public ops in the form of PyTorch's ATen composites and kernels. Hinges
PyTorch's kernels write as ``z > 0 ? z : 0`` take ``where(z > 0, z, 0)`` (gradient 0 at
the kink); those it composes with ``clamp_min`` keep ``clamp_min`` (gradient passes at 0).
"""
from __future__ import annotations

import math

import plugrad
from plugrad.core.autograd.constant_grads import records as _records
from plugrad.core.autograd.node import present_as as _named
from plugrad.core.ops.loss_ops import check_reduction, reduce_loss
from plugrad.nn._dtypes import expect_dtype
from plugrad.nn.functional_losses import legacy_reduction

__all__ = ["poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss",
           "hinge_embedding_loss", "soft_margin_loss", "cosine_embedding_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss", "multi_margin_loss",
           "multilabel_margin_loss", "multilabel_soft_margin_loss"]


def _hinge(z, keep=None):
    """``z`` where PyTorch's kernel adds it (``z > 0``, and ``keep``), else an exact 0: its
    loop skips the other terms, so a NaN or -inf ``z`` (0 * z would be NaN) adds nothing,
    and nor does its gradient."""
    keep = z > 0 if keep is None else (z > 0) & keep
    return plugrad.where(keep, z, 0.0)


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    expect_dtype("poisson_nll_loss", input, ints=True)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:  # PyTorch's masked_fill(target <= 1, 0) of the term of the raw target: NaN
        # targets keep it, and its gradient is its own (NaN from log of a target <= 0)
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + plugrad.where(target <= 1, 0.0, stirling)
    return reduce_loss(loss, reduction)


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean"):
    """``0.5 * (log(var) + (input - target)**2 / var)``; ``var`` is clamped to ``eps``
    outside autograd (PyTorch's), and may omit the last dim or be one per batch row."""
    expect_dtype("gaussian_nll_loss", input)
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * plugrad.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.ndim == var.ndim and sum(
                b for a, b in zip(input.shape, var.shape) if a != b) == 1:
            pass  # heteroscedastic: one variance broadcast over a dim
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with plugrad.no_grad():
        var.clamp_min_(eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin: float = 0, size_average=None,
                        reduce=None, reduction: str = "mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.shape}, input2: "
                           f"{input2.shape}, target: {target.shape} ")
    expect_dtype("margin_ranking_loss", input1, ints=True)
    return reduce_loss((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    expect_dtype("hinge_embedding_loss", input, ints=True)
    zeros = plugrad.zeros_like(input)
    if not input.dtype.is_floating_point:  # PyTorch's `margin - self`: the margin cast to
        margin = int(margin)               # the integer dtype, the loss stays integer
    margin_part = plugrad.where(target != 1, (margin - input).clamp_min(0), zeros)
    self_part = plugrad.where(target != -1, input, zeros)
    return reduce_loss(margin_part + self_part, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    expect_dtype("soft_margin_loss", input)
    return _named(reduce_loss((-input * target).exp().log1p(), reduction),
                  "SoftMarginLossBackward0")


def cosine_embedding_loss(input1, input2, target, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean"):
    """``1 - cos`` for target 1, ``max(0, cos - margin)`` for target -1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    d = target.ndim
    if d not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if d == 1 and (input1.ndim != 2 or input2.ndim != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    if d == 0 and (input1.ndim != 1 or input2.ndim != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    prod = (input1 * input2).sum(d)
    mag1 = (input1 * input1).sum(d) + 1e-12
    mag2 = (input2 * input2).sum(d) + 1e-12
    cos = prod / (mag1 * mag2).sqrt()
    zeros = cos * 0.0
    out = plugrad.where(target == 1, 1 - cos, zeros) \
        + plugrad.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return reduce_loss(out, reduction)


def _same_ndim(anchor, positive, negative):
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == p == n:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a}D, positive "
                           f"{p}D, and negative {n}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_ndim(anchor, positive, negative)
    dist = plugrad.pairwise_distance
    d_pos = dist(anchor, positive, p, eps)
    d_neg = dist(anchor, negative, p, eps)
    if swap:
        d_neg = plugrad.minimum(d_neg, dist(positive, negative, p, eps))
    return reduce_loss((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_ndim(anchor, positive, negative)
    dist = distance_function if distance_function is not None else plugrad.pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = plugrad.minimum(d_neg, dist(positive, negative))
    return reduce_loss((margin + d_pos - d_neg).clamp_min(0), reduction)


def _frames(op: str, input):
    """PyTorch's view of a multi-class loss input: ``(nframe, dim)`` and the 2-D input."""
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0) or \
            (input.ndim == 1 and input.shape[0] == 0):
        raise RuntimeError(f"{op}: Expected non-empty vector or matrix with optional 0-dim "
                           f"batch size, but got: {list(input.shape)}")
    if input.ndim == 2:
        return input.shape[0], input.shape[1], input
    dim = 1 if input.ndim == 0 else input.shape[0]
    return 1, dim, input.reshape(1, dim)


def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None,
                      size_average=None, reduce=None, reduction: str = "mean"):
    """``sum_{i != y} max(0, margin - x[y] + x[i])**p / C`` per sample (times
    ``weight[y]``)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    expect_dtype("multi_margin_loss", input)
    nframe, dim, x = _frames("multi_margin_loss", input)
    if target.ndim > 1 or target.numel() != nframe:
        raise RuntimeError(f"inconsistent target size, expected {nframe} but got "
                           f"{list(target.shape)}")
    t = target.reshape(nframe).long()
    if nframe and (int(t.min()) < 0 or int(t.max()) >= dim):
        raise RuntimeError("target out of range")
    picked = x.gather(1, t.unsqueeze(1))
    others = t.unsqueeze(1) != plugrad.arange(dim, device=x.device).unsqueeze(0)
    z = _hinge(margin - picked + x, others)
    h = z if p == 1 else z * z
    if weight is not None:
        h = h * weight.to(x.dtype).index_select(0, t).unsqueeze(1)
    loss = h.sum(1) / dim
    if reduction == "none":
        out = loss if target.ndim else loss.reshape(())
    else:
        out = reduce_loss(loss, reduction)
    return _named(_records(out, input), "MultiMarginLossBackward0")  # one op in PyTorch


def multilabel_margin_loss(input, target, size_average=None, reduce=None,
                           reduction: str = "mean"):
    """``sum_{j in targets, i not in targets} max(0, 1 - (x[j] - x[i])) / C`` per sample;
    a sample's targets are its target indices up to the first -1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    expect_dtype("multilabel_margin_loss", input)
    nframe, dim, x = _frames("multilabel_margin_loss", input)
    if tuple(target.shape) != tuple(input.shape) and not (
            input.ndim <= 1 and target.numel() == dim and target.ndim <= 1):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    t = target.reshape(nframe, dim).long()
    if t.numel() and (int(t.min()) < -1 or int(t.max()) >= dim):
        raise RuntimeError(f"multilabel_margin_loss: target index out of range: targets must "
                           f"be in [-1, {dim}), got values in [{int(t.min())}, "
                           f"{int(t.max())}]")
    valid = (t >= 0).long().cumprod(1)  # positions before the first -1
    classes = plugrad.arange(dim, device=x.device)
    hits = (t.clamp_min(0).unsqueeze(2) == classes) & (valid.unsqueeze(2) > 0)  # (N, k, C)
    count = hits.to(x.dtype).sum(1)  # how often each class is listed, (N, C)
    is_target = count > 0
    pairs = count.unsqueeze(2) * is_target.logical_not().to(x.dtype).unsqueeze(1)
    z = _hinge(1.0 - x.unsqueeze(2) + x.unsqueeze(1), pairs > 0)  # z[n, j, i]: target j,
    loss = (z * pairs).sum((1, 2)) / dim                             # other i
    if reduction == "none":
        out = loss if input.ndim == 2 else loss.reshape(())
    else:
        out = reduce_loss(loss, reduction)
    return _named(_records(out, input), "MultilabelMarginLossBackward0")  # one op in PyTorch


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    expect_dtype("multilabel_soft_margin_loss", input)
    from plugrad.nn.functional import logsigmoid
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return reduce_loss(loss, reduction)
