"""Loss functions (``plugrad.nn.functional.mse_loss`` ...), as in ``torch.nn.functional``.

Regression losses are plain Tensor ops, except MSE. MSE, NLL, cross-entropy (class
indices) and the binary cross-entropies use one fused node each from
:mod:`plugrad.core.ops.loss_ops`, for speed, for PyTorch's gradient at the kinks and for
PyTorch's ``grad_fn`` (``MseLossBackward0``, ``NllLossBackward0``, ...). Losses PyTorch
also builds from smaller ops keep the name of PyTorch's last node (:func:`present_as`).
"""
from __future__ import annotations

import warnings

import plugrad
from plugrad.core import autocast as _ac
from plugrad.core.autograd.node import present_as
from plugrad.core.ops import loss_ops as _ops
from plugrad.core.ops.loss_ops import reduce_loss
from plugrad.core.ops.loss_piecewise import piecewise_loss as _piecewise_loss
from plugrad.nn._dtypes import expect_dtype

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div"]


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """Map the deprecated ``size_average``/``reduce`` flags onto ``reduction``."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction "
                  "instead.", UserWarning, stacklevel=3)
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def _pair(op: str, input, target, ints: bool = False):
    """Check ``input``/``target`` of an elementwise loss; broadcast with PyTorch's warning."""
    for name, t in (("input", input), ("target", target)):
        if not isinstance(t, plugrad.Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    expect_dtype(op, input, ints=ints)
    if tuple(input.shape) == tuple(target.shape):
        return input, target
    try:
        input, target = plugrad.broadcast_tensors(input, target)
    except (ValueError, RuntimeError) as exc:
        raise plugrad.ShapeError(f"{op}: target size {list(target.shape)} and input size "
                         f"{list(input.shape)} cannot be broadcast together") from exc
    warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                  f"({input.shape}). This will likely lead to incorrect results due to "
                  f"broadcasting. Please ensure they have the same size.", UserWarning,
                  stacklevel=3)
    return input, target


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if _ac.active: input, target = _ac.autocast_args("mse_loss", input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    x, t = _pair("mse_loss", input, target)
    return _ops.mse_loss(x, t, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if _ac.active: input, target = _ac.autocast_args("l1_loss", input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    x, t = _pair("l1_loss", input, target, ints=True)  # PyTorch's abs(input - target)
    return reduce_loss((x - t).abs(), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
                   beta: float = 1.0):
    """Quadratic below ``beta``, L1 above (L1 exactly when ``beta == 0``)."""
    if _ac.active: input, target = _ac.autocast_args("smooth_l1_loss", input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise ValueError("smooth_l1_loss does not support negative values for beta.")
    x, t = _pair("smooth_l1_loss", input, target)
    if beta == 0:
        return present_as(reduce_loss((x - t).abs(), reduction), "SmoothL1LossBackward0")
    return present_as(reduce_loss(_piecewise_loss(x, t, beta, 1.0), reduction),
                      "SmoothL1LossBackward0")


def huber_loss(input, target, reduction="mean", delta: float = 1.0):
    """Smooth L1 scaled by ``delta``: quadratic below ``delta``, ``delta``-sloped above."""
    if _ac.active: input, target = _ac.autocast_args("huber_loss", input, target)
    if delta <= 0:
        raise ValueError(f"huber_loss does not support non-positive values for delta, got "
                         f"{delta}.")
    x, t = _pair("huber_loss", input, target)
    return present_as(reduce_loss(_piecewise_loss(x, t, delta, delta), reduction),
                      "HuberLossBackward0")


def _batched(op: str, input, target, class_indices: bool):
    """An unbatched ``(C,)`` input becomes ``(1, C)``; returns whether it was unbatched."""
    if not isinstance(input, plugrad.Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not isinstance(target, plugrad.Tensor):
        raise TypeError(f"{op}(): argument 'target' must be Tensor, not "
                        f"{type(target).__name__}")
    expect_dtype(op, input)
    if input.ndim == 0:
        raise ValueError(f"{op}: input must have at least one dimension (the classes), got "
                         f"a 0-d tensor")
    if input.ndim == 1:
        if class_indices and target.ndim != 0:
            # PyTorch takes a one-element 1-D target as the class index too
            if target.ndim > 1:
                raise RuntimeError(f"{op}: 0D or 1D target tensor expected, multi-target not "
                                   f"supported (input shape {list(input.shape)}, target "
                                   f"shape {list(target.shape)})")
            if target.shape[0] != 1:
                raise ValueError(f"{op}: For 1D input, 1D target must have size 1, but got "
                                 f"target size: {target.shape[0]}")
            return input.unsqueeze(0), target, True
        return input.unsqueeze(0), target.unsqueeze(0), True
    return input, target, False


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean"):
    """``-input[i, target[i]] * weight[target[i]]``: input holds log-probabilities."""
    if _ac.active: input, target, weight = _ac.autocast_args("nll_loss", input, target, weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _ops.check_reduction(reduction)
    x, t, unbatched = _batched("nll_loss", input, target, True)
    safe, valid = _ops.class_targets("nll_loss", x, t, ignore_index)
    w_elem, _ = _ops.class_weights("nll_loss", x, weight, safe, valid)
    out = _ops.nll_loss(x, safe, valid, w_elem, reduction)
    return _unbatch(out, "NllLossBackward0") if unbatched and reduction == "none" else out


def _unbatch(out, name: str):
    """The loss of an unbatched input, under the name of the loss's node."""
    return present_as(out.squeeze(0), name)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0):
    """Cross-entropy of logits ``input`` (N, C, d1, ...) or (C,).

    ``target`` holds class indices (N, d1, ...), or class probabilities of the input's
    shape (a floating tensor).
    """
    if _ac.active: input, target, weight = _ac.autocast_args(
        "cross_entropy", input, target, weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _ops.check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise plugrad.ArgumentError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                         f"{label_smoothing}")
    probabilities = (isinstance(target, plugrad.Tensor) and isinstance(input, plugrad.Tensor)
                     and tuple(target.shape) == tuple(input.shape))
    x, t, unbatched = _batched("cross_entropy", input, target, not probabilities)
    if probabilities:
        out = _soft_cross_entropy(x, t, weight, ignore_index, reduction, label_smoothing)
    elif weight is None and not label_smoothing and reduction != "none" \
            and x.dtype.is_floating_point:
        safe, valid, n_valid = _ops.checked_targets("cross_entropy", x, t, ignore_index)
        out = _ops.cross_entropy_reduced(x, safe, valid, n_valid, reduction)
    else:
        safe, valid = _ops.class_targets("cross_entropy", x, t, ignore_index)
        w_elem, w = _ops.class_weights("cross_entropy", x, weight, safe, valid)
        out = _ops.cross_entropy_elementwise(x, safe, valid, w_elem, w, label_smoothing,
                                             reduction)
        if label_smoothing:  # PyTorch adds the smoothing term to nll_loss's
            present_as(out, "AddBackward0")
    if unbatched and reduction == "none":
        return _unbatch(out, type(out.grad_fn).__name__ if out.grad_fn else "")
    return out


def _soft_cross_entropy(x, target, weight, ignore_index, reduction, label_smoothing):
    """Cross-entropy against class probabilities (mean divides by N * d1 * ...)."""
    if not target.dtype.is_floating_point:
        raise TypeError(f"cross_entropy: expected a floating point target for class "
                        f"probabilities, got {target.dtype}")
    if ignore_index >= 0:
        raise ValueError("ignore_index is not supported for floating point target")
    n_classes = x.shape[1]
    if label_smoothing:
        target = target * (1.0 - label_smoothing) + label_smoothing / n_classes
    terms = x.log_softmax(1) * target
    if weight is not None:
        terms = terms * weight.reshape((1, -1) + (1,) * (x.ndim - 2))
    # PyTorch's last op: the mean's division, else the negation
    return present_as(reduce_loss(-terms.sum(1), reduction),
                      "DivBackward1" if reduction == "mean" else "NegBackward0")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """BCE of probabilities ``input``; each log is clamped at -100, as in PyTorch."""
    if _ac.active: input, target, weight = _ac.autocast_args(
        "binary_cross_entropy", input, target, weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _ops.check_reduction(reduction)
    expect_dtype("binary_cross_entropy", input)
    return _ops.binary_cross_entropy_elementwise(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction: str = "mean", pos_weight=None):
    """BCE of ``sigmoid(input)``, computed stably from the logits (any magnitude)."""
    if _ac.active: input, target, weight, pos_weight = _ac.autocast_args(
        "binary_cross_entropy_with_logits", input, target, weight, pos_weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _ops.check_reduction(reduction)
    expect_dtype("binary_cross_entropy_with_logits", input)
    return _ops.binary_cross_entropy_with_logits_elementwise(input, target, weight, pos_weight,
                                                             reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False):
    """``target * (log target - input)`` with ``input`` as log-probabilities (0 where the
    target is 0); ``reduction='batchmean'`` divides the sum by the batch size."""
    if _ac.active: input, target = _ac.autocast_args("kl_div", input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    x, t = _pair("kl_div", input, target)
    if log_target:
        loss = t.exp() * (t - x)
    else:  # PyTorch's xlogy(t, t) - t * x: 0 only at an exact zero target (a negative or
        # NaN one gives NaN), and xlogy's gradient there (NaN, as PyTorch's)
        loss = plugrad.xlogy(t, t) - t * x
    if reduction == "batchmean":
        return loss.sum() / (x.shape[0] if x.ndim else 1)
    return reduce_loss(loss, reduction)
