"""Fused loss ops: one graph node for the elementwise part of a loss.

Why fused: cross-entropy as log_softmax + gather + weights + smoothing is several nodes
and full-size temporaries; BCE's clamped logs and BCE-with-logits' ``|x|``/``relu`` pieces
get a wrong (sub)gradient at the kinks when left to autograd (the clamp zeroes the
gradient at ``x == 0``; at logit 0 the composite gives ``1 - t`` instead of ``0.5 - t``).
Each node returns PyTorch's gradient, written in Tensor ops (so ``create_graph`` works).
The reduction is part of the node, as in PyTorch, whose node for each of these losses is
one ``MseLossBackward0`` / ``NllLossBackward0`` / ``BinaryCrossEntropyBackward0`` ... that
programs print and walk (``loss.grad_fn.next_functions`` reaches the model's output).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import Node, torch_named
from plugrad.core.autograd.record import input_meta, record, recording
from plugrad.core.errors import DTypeError, ShapeError, broadcast_shapes, shape_str
from plugrad.core.factories import arange
from plugrad.core.grad_mode import _state, no_grad
from plugrad.core.tracing import host_read
from plugrad.core.ops.select import where
from plugrad.core.tensor import Tensor, _wrap

_REDUCTIONS = ("none", "mean", "sum")


def check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def reduce_loss(loss: Tensor, reduction: str) -> Tensor:
    """The one place ``reduction='none'|'mean'|'sum'`` is applied."""
    check_reduction(reduction)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _check_tensor(op: str, name: str, t) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(t).__name__}")


def _as_float(op: str, t: Tensor, like: Tensor) -> Tensor:
    """``t`` in ``like``'s floating dtype (targets given as ints or bools are fine)."""
    if t.device is not like.device:
        raise RuntimeError(f"{op}: Expected all tensors to be on the same device, but found "
                           f"at least two devices, {like.device} and {t.device}!")
    return t if t.dtype is like.dtype else t.to(like.dtype)


def _mean_scale(n: int) -> float:
    """The mean's factor of a loss over ``n`` elements (PyTorch: an empty mean is NaN)."""
    return 1.0 / n if n else math.nan


# ====================================================================== mean squared error
class MseLossBackward0(Node):
    """d loss / d x = 2 (x - t) g, times 1/n for the mean; the negative for ``t``."""

    def grad(self, F, g, x, t):
        d = F.mul(F.mul(F.sub(x, t), g), self.scale)
        return d, (F.neg(d) if self.next[1] is not None else None)


def mse_loss(x: Tensor, t: Tensor, reduction: str) -> Tensor:
    """``(x - t)**2`` reduced, one node; ``x`` and ``t`` of one shape."""
    check_reduction(reduction)
    if x.dtype is not t.dtype:
        dt = _dt.promote_types(x.dtype, t.dtype)
        x, t = x.to(dt), t.to(dt)
    xd, td = x.detach(), t.detach()
    loss = reduce_loss((xd - td).square(), reduction)
    if not (_state.enabled and (x._rg or t._rg)):
        return loss
    node = MseLossBackward0()
    node.scale = 2.0 * _mean_scale(x.numel()) if reduction == "mean" else 2.0
    return record(loss, node, (x, t), (x, t))


# ====================================================================== negative log-likelihood
class NllLossBackward0(Node):
    """d loss_i / d x_ic = g_i q_ic, q minus the weighted one-hot of the counted targets
    (divided by the summed weights for the mean)."""

    records_inputs = True  # create_graph: its gradient records x (PyTorch's)
    reduced = False

    def grad(self, F, g, q):  # q holds -w (so other classes get +0, as PyTorch's)
        if not self.reduced:
            g = F.reshape(g, g.shape[:1] + (1,) + g.shape[1:])
        return (F.mul(g, q),)


def _one_hot(x: Tensor, safe: Tensor) -> Tensor:
    classes = arange(x.shape[1], device=x.device).reshape((1, x.shape[1]) + (1,) * (x.ndim - 2))
    return (safe.unsqueeze(1) == classes).to(x.dtype)


def nll_loss(x: Tensor, safe: Tensor, valid: Tensor, w_elem: Tensor, reduction: str) -> Tensor:
    """``-x[i, t_i] * w[t_i]`` (0 where ignored), reduced; the mean divides by the summed
    weights of the counted targets, as PyTorch does. One node."""
    xd = x.detach()
    loss = (-xd.gather(1, safe.unsqueeze(1)).squeeze(1) * w_elem).masked_fill(
        valid.logical_not(), 0.0)
    if reduction != "none":
        total = w_elem.sum()
        loss = loss.sum() / total if reduction == "mean" else loss.sum()
    if not (x._rg and _state.enabled):
        return loss
    node = _NLL_NODES[x.ndim > 2]()
    w = w_elem
    if reduction != "none":
        node.reduced = True
        if reduction == "mean":
            w = w_elem / total
    # only a counted target's own class: an ignored row is exactly 0 even when the mean's
    # total weight is 0 (PyTorch), a counted weight-0 target 0/0 = NaN
    hit = _one_hot(x, safe).to(_dt.bool_) & valid.unsqueeze(1)
    q = where(hit, -w.unsqueeze(1), 0.0)
    return record(loss, node, (x,), (q,))


# ====================================================================== cross-entropy
class CrossEntropyBackward0(Node):
    """d loss_i / d x_ic = A_i * softmax(x)_ic - q_ic (see :func:`cross_entropy_elementwise`)."""

    reduced = False

    def grad(self, F, g, x, scale, q, valid):
        p = F.softmax(x, 1)
        scale = F.reshape(scale, scale.shape[:1] + (1,) + scale.shape[1:])
        if not self.reduced:
            g = F.reshape(g, g.shape[:1] + (1,) + g.shape[1:])
        gx = F.mul(g, F.sub(F.mul(scale, p), q))
        # PyTorch: an ignored target's row gets exactly 0, even when the mean's 1/total
        # weight is inf (every target ignored) and so the row is 0/0
        valid = F.reshape(valid, valid.shape[:1] + (1,) + valid.shape[1:])
        return (F.where(valid, gx, 0.0),)


#: PyTorch's cross-entropy is ``nll_loss(log_softmax(x))``: its node is NllLossBackward0,
#: NllLoss2DBackward0 for inputs with dims beyond (N, C)
_NLL_NAMES = ("NllLossBackward0", "NllLoss2DBackward0")
_NLL_NODES = tuple(torch_named(NllLossBackward0, n) for n in _NLL_NAMES)
_CE_NODES = tuple(torch_named(CrossEntropyBackward0, n) for n in _NLL_NAMES)


def class_targets(op: str, x: Tensor, target: Tensor, ignore_index: int):
    """Check integer class targets against ``x`` of shape (N, C, d1, ...).

    Returns ``(safe, valid)``: targets with ignored entries replaced by 0, and the mask of
    entries that count. Errors say what PyTorch says (``Target 3 is out of bounds.``).
    """
    safe, valid, _ = checked_targets(op, x, target, ignore_index)
    if valid is None:
        valid = safe == safe
    return safe, valid


def _count_valid_targets(host, n_classes: int, ignore_index: int) -> int:
    """How many class targets are not ``ignore_index``; raises on one out of range."""
    counted = host != ignore_index
    n_valid = int(np.count_nonzero(counted))
    chosen = host if n_valid == host.size else host[counted]
    if chosen.size:
        low, high = int(chosen.min()), int(chosen.max())
        if low < 0 or high >= n_classes:
            raise IndexError(f"Target {low if low < 0 else high} is out of bounds.")
    return n_valid


def checked_targets(op: str, x: Tensor, target: Tensor, ignore_index: int):
    """:func:`class_targets` plus the number of counted entries; ``valid`` is None when all
    count. The targets are read to the host once (bounds checks need them there anyway)."""
    _check_tensor(op, "target", target)
    if target.dtype.is_floating_point or target.dtype is _dt.bool_:
        raise DTypeError(  # a RuntimeError, as PyTorch's (and a TypeError)
            f"{op}: expected target of integer class indices (int64) with shape "
            f"{shape_str((x.shape[0],) + tuple(x.shape[2:]))}, got {target.dtype} with shape "
            f"{shape_str(target.shape)}. For class probabilities the target must be floating "
            f"and have the input's shape {shape_str(x.shape)}.")
    if target.device is not x.device:
        raise RuntimeError(f"{op}: Expected all tensors to be on the same device, but found "
                           f"at least two devices, {x.device} and {target.device}!")
    expected = (x.shape[0],) + tuple(x.shape[2:])
    if tuple(target.shape) != expected:
        # PyTorch's order: the batch sizes first (a 0-d target counts as batch 0), then
        # a class target of the wrong rank
        t_batch = target.shape[0] if target.ndim else 0
        if t_batch != x.shape[0]:
            raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target "
                             f"batch_size ({t_batch}).")
        if x.ndim == 2:
            raise ShapeError(f"{op}: 0D or 1D target tensor expected, multi-target not "
                             f"supported (input shape {shape_str(x.shape)}, target shape "
                             f"{shape_str(target.shape)})")
        raise ShapeError(f"{op}: Expected target size {shape_str(expected)}, got "
                         f"{shape_str(target.shape)} (input shape {shape_str(x.shape)})")
    n_valid = host_read(functools.partial(_count_valid_targets, n_classes=x.shape[1],
                                          ignore_index=ignore_index), target._k, target._data)
    if target.dtype is not _dt.int64:
        target = target.long()
    if n_valid == target.numel():
        return target, None, n_valid
    valid = target != ignore_index
    return target.masked_fill(valid.logical_not(), 0), valid, n_valid


def _class_view(weight: Tensor, ndim: int) -> Tensor:
    """A (C,) weight shaped to broadcast against (N, C, d1, ...)."""
    return weight.reshape((1, -1) + (1,) * (ndim - 2))


def class_weights(op: str, x: Tensor, weight, safe: Tensor, valid: Tensor):
    """Per-element weight ``weight[target]`` (0 where ignored), and ``weight`` as (C,)."""
    valid_f = valid.to(x.dtype)
    if weight is None:
        return valid_f, None
    _check_tensor(op, "weight", weight)
    n_classes = x.shape[1]
    if tuple(weight.shape) != (n_classes,):
        raise ShapeError(f"{op}: weight tensor should be defined either for all {n_classes} "
                         f"classes or no classes but got weight tensor of shape: "
                         f"{shape_str(weight.shape)}")
    w = _as_float(op, weight, x).detach()
    return w[safe] * valid_f, w


def cross_entropy_elementwise(x: Tensor, safe: Tensor, valid: Tensor, w_elem: Tensor,
                              weight, label_smoothing: float, reduction: str = "none") -> Tensor:
    """Cross-entropy of logits ``x`` (N, C, d...) with class indices, reduced, one node.

    ``loss_i = (1-e) * w[t_i] * -logp[i, t_i] + (e/C) * sum_c w_c * -logp[i, c]``, and 0
    where ignored (PyTorch's definition with weights and label smoothing ``e``); the mean
    divides by the summed weights of the counted targets.
    """
    n_classes = x.shape[1]
    xd = x.detach()
    logp = xd.log_softmax(1)
    smooth = float(label_smoothing)
    loss = -logp.gather(1, safe.unsqueeze(1)).squeeze(1) * w_elem
    if smooth:
        wc = _class_view(weight, x.ndim) if weight is not None else 1.0
        smooth_loss = -(logp * wc).sum(1) * valid.to(x.dtype)
        loss = loss * (1.0 - smooth) + smooth_loss * (smooth / n_classes)
    if reduction != "none":
        total = w_elem.sum()
        loss = loss.sum() / total if reduction == "mean" else loss.sum()
    if not (x._rg and _state.enabled):
        return loss
    node = _CE_NODES[x.ndim > 2]()
    q = _one_hot(x, safe) * (w_elem * (1.0 - smooth)).unsqueeze(1)
    scale = w_elem * (1.0 - smooth)
    if smooth:
        valid_f = valid.to(x.dtype)
        total_w = weight.sum() if weight is not None else float(n_classes)
        scale = scale + valid_f * (total_w * (smooth / n_classes))
        wc = _class_view(weight, x.ndim) if weight is not None else 1.0
        q = q + valid_f.unsqueeze(1) * wc * (smooth / n_classes)
    if reduction != "none":
        node.reduced = True
        if reduction == "mean":
            scale, q = scale / total, q / total
    return record(loss, node, (x,), (x, scale.detach(), q.detach(), valid))


# ====================================================================== reduced cross-entropy
class CrossEntropyReducedBackward0(Node):
    """d loss / d x = (softmax(x) - one_hot(t)) * valid * g * scale (scale: 1/count or 1),
    the ``cross_entropy_backward`` kernel."""

    def grad(self, F, g, x, target, valid):
        return (F.cross_entropy_backward(g, x, target, valid, self.scale),)


_CE_REDUCED_NODES = tuple(torch_named(CrossEntropyReducedBackward0, n) for n in _NLL_NAMES)


def cross_entropy_reduced(x: Tensor, target: Tensor, valid, n_valid: int,
                          reduction: str) -> Tensor:
    """Mean or summed cross-entropy of logits ``x`` (N, C, d...) with checked class indices
    (see :func:`checked_targets`), without class weights or smoothing: the loss of the usual
    training loop, as one node of kernel calls (no per-element loss tensor, no one-hot in
    forward)."""
    k = x._k
    xd = x._data
    t = target._data
    logp = k.log_softmax(xd, 1) if xd.shape[1] else xd
    picked = k.gather(logp, 1, k.reshape(t, t.shape[:1] + (1,) + t.shape[1:]))
    if valid is not None:
        picked = k.mul(picked, k.astype(k.reshape(valid._data, picked.shape), x.dtype.name))
    total = k.neg(k.sum(picked, None, False))
    scale = 1.0
    if reduction == "mean":
        # PyTorch: nothing counted gives a NaN loss, but a 0 gradient (every row ignored)
        scale = 1.0 / n_valid if n_valid else 0.0
        total = k.div(total, float(n_valid)) if n_valid else k.mul(total, math.nan)
    r = _wrap(total, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = _CE_REDUCED_NODES[x.ndim > 2]()
        node.scale = scale
        record(r, node, (x,), (x, target, valid))
    return r


# ====================================================================== binary cross-entropy
def _check_same_shape(x: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(x.shape):
        raise ValueError(f"Using a target size ({shape_str(target.shape)}) that is different "
                         f"to the input size ({shape_str(x.shape)}) is deprecated. Please "
                         f"ensure they have the same size.")


def _check_weight_shape(w, x: Tensor) -> None:
    """A BCE weight broadcasts to the input's shape and no further (PyTorch computes into
    an input-shaped result)."""
    if w is None or tuple(w.shape) == tuple(x.shape):
        return
    try:
        full = broadcast_shapes("binary_cross_entropy", tuple(w.shape), tuple(x.shape))
    except ShapeError:
        full = None
    if full != tuple(x.shape):
        raise ShapeError(f"binary_cross_entropy: output with shape {shape_str(x.shape)} doesn't "
                         f"match the broadcast shape "
                         f"{shape_str(full if full else w.shape)} (weight of shape "
                         f"{shape_str(w.shape)})")


class BinaryCrossEntropyBackward0(Node):

    scale = None  # the mean's 1/n

    def grad(self, F, g, x, t, w):
        if self.scale is not None:
            g = F.mul(g, self.scale)
        gw = F.mul(g, w) if w is not None else g
        if getattr(F, "tensors", False) and recording(gw, x, t):  # create_graph
            gx = _bce_grad_input(gw, x, t)
        else:
            gx = F.div(F.mul(gw, F.sub(x, t)), F.maximum(F.mul(F.sub(1.0, x), x), _BCE_EPS))
        gt = None
        if self.next[1] is not None:
            gt = F.mul(gw, F.sub(F.maximum(F.log(F.sub(1.0, x)), -100.0),
                                 F.maximum(F.log(x), -100.0)))
        return gx, gt


_BCE_EPS = 1e-12


class BinaryCrossEntropyBackwardBackward0(Node):
    """The gradient of BCE's input gradient ``gw (x - t) / max((1 - x) x, eps)``: PyTorch's
    own formulas (eps added, not clamped), so the second derivative at ``x = t`` in
    ``{0, 1}`` is 0 rather than the clamp's ``1 / eps``."""

    def grad(self, F, gg, gw, x, t):
        eps = _BCE_EPS
        ggw = ggx = ggt = None
        if self.next[0]:
            ggw = F.mul(gg, F.div(F.sub(x, t), F.mul(F.add(F.sub(1.0, x), eps), F.add(x, eps))))
        if self.next[1]:
            num = F.add(F.sub(F.mul(x, x), F.mul(F.mul(x, t), 2.0)), t)
            den = F.mul(F.pow(F.add(x, eps), 2.0), F.pow(F.add(F.sub(1.0, x), eps), 2.0))
            ggx = F.mul(F.div(num, den), F.mul(gg, gw))
        if self.next[2]:
            ggt = F.div(F.neg(F.mul(gg, gw)), F.maximum(F.mul(F.sub(1.0, x), x), eps))
        return ggw, ggx, ggt


def _bce_grad_input(gw: Tensor, x: Tensor, t: Tensor) -> Tensor:
    with no_grad():
        gx = gw * (x - t) / ((1.0 - x) * x).clamp(min=_BCE_EPS)
    node = BinaryCrossEntropyBackwardBackward0()
    record(gx, node, (gw, x, t), (gw, x, t))
    node.meta = input_meta(gx, (gw, x, t))
    return gx


def _reduced(loss: Tensor, node: Node, reduction: str) -> Tensor:
    """``loss`` reduced in forward, with the mean's factor for ``node``'s rule."""
    if reduction == "mean":
        node.scale = _mean_scale(loss.numel())
    return reduce_loss(loss, reduction)


def _unit_interval(lo, hi, t_lo, t_hi):
    """PyTorch's kernel checks ``0 <= v <= 1`` for every input and target value (NaN fails:
    the extremes are NaN then)."""
    if not (lo >= 0 and hi <= 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not (t_lo >= 0 and t_hi <= 1):
        raise RuntimeError("all elements of target should be between 0 and 1")
    return True


def binary_cross_entropy_elementwise(x: Tensor, target: Tensor, weight=None,
                                     reduction: str = "none") -> Tensor:
    """``-w (t log x + (1-t) log(1-x))`` with each log clamped at -100, as PyTorch does,
    reduced; one node."""
    op = "binary_cross_entropy"
    _check_tensor(op, "input", x)
    _check_tensor(op, "target", target)
    _check_same_shape(x, target)
    t = _as_float(op, target, x)
    xd, td = x.detach(), t.detach()
    if xd.numel():
        host_read(_unit_interval, x._k, *(v._data for v in (xd.min(), xd.max(), td.min(),
                                                             td.max())))
    w = _as_float(op, weight, x).detach() if weight is not None else None
    _check_weight_shape(w, x)
    loss = -(td * xd.log().clamp(min=-100.0) + (1.0 - td) * (1.0 - xd).log().clamp(min=-100.0))
    if w is not None:
        loss = loss * w
    if not (_state.enabled and (x._rg or t._rg)):
        return reduce_loss(loss, reduction)
    node = BinaryCrossEntropyBackward0()
    return record(_reduced(loss, node, reduction), node, (x, t), (x, t, w))


def _softplus(z: Tensor) -> Tensor:
    """``log(1 + exp(z))`` without overflow for large ``|z|``."""
    return (-z.abs()).exp().log1p() + z.relu()


def _softplus_f(F, z):
    """``log(1 + exp(z))`` in gradient ops, without overflow for large ``|z|``."""
    return F.add(F.log1p(F.exp(F.neg(F.abs(z)))), F.maximum(z, 0.0))


class BinaryCrossEntropyWithLogitsBackward0(Node):

    scale = None  # the mean's 1/n

    def grad(self, F, g, x, t, w, pw):
        if self.scale is not None:
            g = F.mul(g, self.scale)
        gw = F.mul(g, w) if w is not None else g
        if pw is None:
            gx = F.mul(gw, F.sub(F.sigmoid(x), t))
        else:
            gx = F.mul(gw, F.sub(F.mul(F.add(F.mul(F.sub(pw, 1.0), t), 1.0), F.sigmoid(x)),
                                 F.mul(pw, t)))
        gt = None
        if self.next[1] is not None:
            pos = _softplus_f(F, F.neg(x))
            gt = F.mul(gw, F.sub(F.mul(pos, pw) if pw is not None else pos,
                                 _softplus_f(F, x)))
        return gx, gt


def binary_cross_entropy_with_logits_elementwise(x: Tensor, target: Tensor, weight=None,
                                                 pos_weight=None, reduction: str = "none"):
    """``-w [pw t log s(x) + (1-t) log(1 - s(x))]``, stable for any logit, reduced; one
    node."""
    op = "binary_cross_entropy_with_logits"
    _check_tensor(op, "input", x)
    _check_tensor(op, "target", target)
    _check_same_shape(x, target)
    t = _as_float(op, target, x)
    w = _as_float(op, weight, x).detach() if weight is not None else None
    pw = _as_float(op, pos_weight, x).detach() if pos_weight is not None else None
    _check_weight_shape(w, x)
    _check_weight_shape(pw, x)
    xd, td = x.detach(), t.detach()
    if pw is None:
        loss = (1.0 - td) * xd + _softplus(-xd)
    else:
        loss = (1.0 - td) * xd + (1.0 + (pw - 1.0) * td) * _softplus(-xd)
    if w is not None:
        loss = loss * w
    if not (_state.enabled and (x._rg or t._rg)):
        return reduce_loss(loss, reduction)
    node = BinaryCrossEntropyWithLogitsBackward0()
    return record(_reduced(loss, node, reduction), node, (x, t), (x, t, w, pw))
