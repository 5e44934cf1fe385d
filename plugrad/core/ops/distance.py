"""Distances and similarities: cosine_similarity, pairwise_distance, pdist, cdist.

Compositions of differentiable ops (differences, norms, sums), written as PyTorch's ATen
composites so values and gradients agree: the 2-norm's gradient at a zero difference is 0
(``norm``'s safe square root), cosine similarity divides each input by its norm clamped
to ``eps`` outside autograd (PyTorch's stable form), and ``cdist`` takes the
matrix-product form of the Euclidean distance where PyTorch's ``compute_mode`` does.
"""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core.errors import DTypeError, ShapeError
from plugrad.core.factories import ones_like, tensor
from plugrad.core.autograd.node import OUTPUT, KeepsOutput
from plugrad.core.autograd.record import record
from plugrad.core.grad_mode import _state, no_grad
from plugrad.core.ops.declare import op
from plugrad.core.ops.join import cat
from plugrad.core.ops.select import where

_MODES = {None: 0, "use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
          "donot_use_mm_for_euclid_dist": 2}


@op("cosine_similarity", functional="cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``<x1, x2> / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` (broadcast)."""
    common = _dt.result_type_of(((x1.dtype, x1.ndim == 0), (x2.dtype, x2.ndim == 0)))
    if not common.is_floating_point:
        raise DTypeError(f"cosine_similarity: expected common dtype to be floating point, yet "
                         f"common dtype is {common.name}")
    x1, x2 = x1.to(common), x2.to(common)
    shape = _broadcast_shape("cosine_similarity", x1.shape, x2.shape)
    x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    with no_grad():  # the clamp is outside autograd, as in PyTorch
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@op("pairwise_distance", functional="pairwise_distance")
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dim of the broadcast inputs (integers too: the
    ``+ eps`` makes them floating, as in PyTorch)."""
    dim = max(x1.ndim, x2.ndim) - 1
    diff = x1 - x2 + eps
    if dim < 0:
        return diff.abs() if p != 0 else (diff != 0).to(diff.dtype)
    return diff.norm(p, dim, keepdim=keepdim)


@op("pdist", functional="pdist")
def pdist(input, p=2.0):
    """The ``p``-norm distance of every pair of rows ``i < j`` of a 2-D input, row-major."""
    if input.ndim != 2:
        raise ShapeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise DTypeError(f"pdist only supports floating-point dtypes, got {input.dtype.name}")
    if p < 0:
        raise ValueError("pdist only supports non-negative p values")
    n = input.shape[0]
    rows = [i for i in range(n) for _ in range(i + 1, n)]
    cols = [j for i in range(n) for j in range(i + 1, n)]
    ri = tensor(rows, dtype=_dt.int64, device=input.device)
    ci = tensor(cols, dtype=_dt.int64, device=input.device)
    if p != 2 or not (input._rg and _state.enabled) or not rows:
        diff = input.index_select(0, ri) - input.index_select(0, ci)
        return _norm_last(diff, p)
    with no_grad():
        r = _norm_last(input.index_select(0, ri) - input.index_select(0, ci), p)
    node = PdistBackward0()
    m = input.shape[1]  # (each pair's row indices across the columns, for scatter_add)
    places = cat([ri, ci]).unsqueeze(1).expand(2 * len(rows), m).contiguous()
    record(r, node, (input,), (input, ri, ci, places, OUTPUT))
    return r


class PdistBackward0(KeepsOutput):
    """PyTorch's ``_pdist_backward`` kernel for ``p = 2``: each pair's ``(g * diff) / d`` (0
    where ``d == 0``), added to its first row and taken from its second. The product comes
    first: NaN where ``g * diff`` overflows against an infinite distance (``x / norm``
    first, the 2-norm's rule, gave 0)."""

    def grad(self, F, g, x, ri, ci, places, d):
        diff = F.sub(F.take(x, 0, ri), F.take(x, 0, ci))
        n_pairs = diff.shape[0]
        gc, dc = F.reshape(g, (n_pairs, 1)), F.reshape(d, (n_pairs, 1))
        r = F.where(F.eq(dc, 0.0), 0.0, F.div(F.mul(gc, diff), dc))
        zeros = F.full(tuple(x.shape), 0.0, F.dtype_of(r), self.device.index)
        return (F.scatter_add(zeros, 0, places, F.concat([r, F.neg(r)], 0)),)


@op("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance between each row of ``x1`` (``[B..., P, M]``) and each row
    of ``x2`` (``[B..., R, M]``): ``[B..., P, R]``."""
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, t in (("X1", x1), ("X2", x2)):
        if t.ndim < 2:
            raise ShapeError(f"cdist only supports at least 2D tensors, {name} got: "
                             f"{t.ndim}D")
        if not t.dtype.is_floating_point:
            raise DTypeError(f"cdist only supports floating-point dtypes, {name} got: "
                             f"{t.dtype.name}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"X1 and X2 must have the same number of columns. X1: "
                         f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise ValueError("cdist only supports non-negative p values")
    if x1.dtype != x2.dtype:
        raise DTypeError(f"cdist: X1 and X2 must have the same dtype, got {x1.dtype.name} "
                         f"and {x2.dtype.name}")
    mode = _MODES[compute_mode]
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        return _euclidean_mm(x1, x2)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _norm_last(diff, p)


def _norm_last(diff, p):
    if p == 0:  # the count of differing coordinates; its gradient is 0
        return (diff != 0).sum(-1).to(diff.dtype) + (diff * 0.0).sum(-1)
    if p in (1, 2, float("inf")):
        return diff.norm(p, -1)
    # (sum |d|^p)^(1/p) with PyTorch's zeros: no gradient through a zero coordinate (p < 1)
    # or a zero distance, where the powers' derivatives are 0/0
    zero = diff == 0
    powers = where(zero, diff * 0.0, where(zero, diff * 0.0 + 1.0, diff).abs() ** p)
    total = powers.sum(-1)
    empty = total == 0
    return where(empty, total * 0.0, where(empty, total * 0.0 + 1.0, total) ** (1.0 / p))


class EuclideanDistBackward0(KeepsOutput):
    """PyTorch's ``_euclidean_dist_backward``: with ``ratio = g / d`` (0 where ``d == 0``:
    the subgradient at a zero distance), ``g1 = x1 sum_r ratio - ratio x2`` and
    ``g2 = x2 sum_p ratio - ratio^T x1`` (the square root's derivative at 0 was inf, times
    the clamp's 0: NaN)."""

    def grad(self, F, g, x1, x2, d):
        ratio = F.where(F.eq(d, 0.0), 0.0, F.div(g, d))
        n = len(d.shape)
        g1 = F.sub(F.mul(x1, F.sum(ratio, (n - 1,), True)), F.matmul(ratio, x2))
        rt = F.permute(ratio, tuple(range(n - 2)) + (n - 1, n - 2))
        g2 = F.sub(F.mul(x2, F.sum(rt, (n - 1,), True)), F.matmul(rt, x1))
        return g1, g2


def _euclidean_mm(x1, x2):
    """``sqrt(max(|a|^2 - 2 a.b + |b|^2, 0))`` by one matrix product (PyTorch's form), with
    PyTorch's gradient rule."""
    batch = _broadcast_shape("cdist", x1.shape[:-2], x2.shape[:-2])
    x1 = x1.expand(tuple(batch) + tuple(x1.shape[-2:]))
    x2 = x2.expand(tuple(batch) + tuple(x2.shape[-2:]))
    with no_grad():
        a, b = x1.detach(), x2.detach()
        n1 = a.square().sum(-1, keepdim=True)
        n2 = b.square().sum(-1, keepdim=True)
        # (the pads are ones even beside an infinite norm; the clamp keeps NaN, and makes
        # -inf 0, as PyTorch's clamp_min_)
        a = cat([a * -2.0, n1, ones_like(n1)], -1)
        b = cat([b, ones_like(n2), n2], -1)
        d2 = a @ b.transpose(-1, -2)
        r = d2.clamp_min(0.0).sqrt()
    if _state.enabled and (x1._rg or x2._rg):
        record(r, EuclideanDistBackward0(), (x1, x2), (x1, x2, OUTPUT))
    return r


def _broadcast_shape(name, s1, s2):
    s1, s2 = tuple(s1), tuple(s2)
    n = max(len(s1), len(s2))
    s1, s2 = (1,) * (n - len(s1)) + s1, (1,) * (n - len(s2)) + s2
    out = []
    for a, b in zip(s1, s2):
        if a != b and 1 not in (a, b):
            raise ShapeError(f"{name}: shapes {list(s1)} and {list(s2)} cannot be broadcast")
        out.append(max(a, b) if 0 not in (a, b) else 0)
    return tuple(out)
