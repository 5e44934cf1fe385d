"""Channel-wise and alpha dropout, and ``embedding_bag`` (``torch.nn.functional``).

Dropout masks are drawn without autograd and multiplied in, so the gradient is the mask
(PyTorch's). ``embedding_bag`` gathers the rows of every bag with ``index_select`` and
sums them into their bag with ``index_add`` (mean divides by the bag's size, max takes the
first maximum of each column, as PyTorch's, whose gradient goes to that row only).
"""
from __future__ import annotations

import warnings

import plugrad
from plugrad.core.autograd.node import present_as as _named
from plugrad.nn._dtypes import expect_dtype as _expect

__all__ = ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
           "embedding_bag"]

_ALPHA = 1.7580993408473766  # -SELU's negative saturation value, as PyTorch's


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout(x, p: float, training: bool, inplace: bool, feature: bool, alpha: bool):
    """PyTorch's ``_dropout_impl``: a Bernoulli(1 - p) mask per element (or per channel of
    each sample, ``feature``), scaled by ``1/(1-p)``, or alpha dropout's affine map."""
    if p == 0 or not training or x.numel() == 0:
        return x
    if p == 1:
        out = x * 0.0
        return x.copy_(out) if inplace else out
    shape = tuple(x.shape)
    if feature:
        if x.ndim < 2:
            raise RuntimeError(f"Feature dropout requires at least 2 dimensions in the input, "
                               f"got a {x.ndim}-D input of shape {list(x.shape)}")
        shape = shape[:2] + (1,) * (x.ndim - 2)
    with plugrad.no_grad():
        keep = (plugrad.rand(shape, device=x.device) >= p).to(x.dtype)
        if alpha:
            a = 1.0 / ((_ALPHA * _ALPHA * p + 1) * (1 - p)) ** 0.5
            shift = (keep - 1.0) * (_ALPHA * a) + _ALPHA * a * p
            scale = keep * a
        else:
            scale = keep * (1.0 / (1.0 - p))
    out = x * scale
    if alpha:
        out = out + shift
    return x.copy_(out) if inplace else out


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` inputs."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note "
            "that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    if input.ndim == 2:
        out = _dropout(input.unsqueeze(0), p, training, inplace, True, False)
        return input if inplace else out.squeeze(0)
    return _dropout(input, p, training, inplace, True, False)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, H, W)`` inputs; 3-D inputs are taken as
    ``(N, C, L)`` with PyTorch's warning."""
    _check_p(p)
    d = input.ndim
    if d not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if d == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret "
            "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
            "the 1D channel-wise dropout behavior, please switch to using dropout1d "
            "instead.", stacklevel=2)
    return _dropout(input, p, training, inplace, True, False)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs."""
    _check_p(p)
    d = input.ndim
    if d not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    if d != 5:
        out = _dropout(input.unsqueeze(0), p, training, inplace, True, False)
        return input if inplace else out.squeeze(0)
    return _dropout(input, p, training, inplace, True, False)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout that keeps SELU's zero mean and unit variance (dropped values go to
    ``-alpha * scale`` and the rest are scaled and shifted)."""
    _check_p(p)
    return _dropout(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False,
                          inplace: bool = False):
    """Alpha dropout of whole channels."""
    _check_p(p)
    return _dropout(input, p, training, inplace, True, True)


# ====================================================================== embedding_bag
def embedding_renorm_(weight, indices, max_norm: float, norm_type: float = 2.0):
    """Rescale, in place and outside autograd, each row of ``weight`` that ``indices``
    refer to whose ``norm_type``-norm exceeds ``max_norm`` to norm ``max_norm``
    (``torch.embedding_renorm_``: the factor is ``max_norm / (norm + 1e-7)``)."""
    if not indices.numel():
        return weight
    rows = plugrad.tensor(sorted({int(i) for i in indices.reshape(-1).tolist()}),
                          dtype=plugrad.int64, device=weight.device)
    with plugrad.no_grad():
        picked = weight.index_select(0, rows)
        norms = picked.norm(norm_type, 1, keepdim=True)
        scale = plugrad.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = picked * scale.to(picked.dtype)
    return weight


def _bags(input, offsets, include_last_offset: bool, per_sample_weights):
    """Flat indices, the bag of each index and the number of bags."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is "
                             f"treated is a mini-batch of fixed length sequences. However, "
                             f"found offsets of type {type(offsets)}")
        b, length = input.shape
        bag = plugrad.arange(b, device=input.device).repeat_interleave(length)
        flat_w = per_sample_weights.reshape(-1) if per_sample_weights is not None else None
        return input.reshape(-1), bag, b, flat_w
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    if offsets.dtype.is_floating_point or offsets.dtype == plugrad.bool:
        raise TypeError(f"embedding_bag: expected offsets of an integer dtype, got "
                        f"{offsets.dtype}")
    n = input.shape[0]
    starts = [int(v) for v in offsets.tolist()]
    if starts and starts[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                           f"mini-batch has to start from position 0. However, got "
                           f"{starts[0]}")
    if starts and starts[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n}, but got "
                           f"offsets[-1] of {starts[-1]}")
    bounds = starts + [n] if not include_last_offset else starts
    b = max(len(bounds) - 1, 0)
    ids = []
    for i in range(b):
        ids += [i] * max(bounds[i + 1] - bounds[i], 0)
    ids = ids[:n]  # with include_last_offset, indices past the last offset are in no bag
    bag = plugrad.tensor(ids, dtype=plugrad.int64, device=input.device)
    if len(ids) < n:
        input = input[:len(ids)]
        per_sample_weights = None if per_sample_weights is None else \
            per_sample_weights[:len(ids)]
    return input, bag, b, per_sample_weights


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx=None):
    """Sums, means or maxima of bags of embedding rows, without building the rows' tensor
    per bag: ``(B, L)`` fixed-size bags, or a flat ``input`` cut by ``offsets``."""
    if weight.dtype == plugrad.int64 and input.dtype.is_floating_point:
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) "
                         f"is not None, then it must have the same shape as the input "
                         f"({input.shape})")
    _expect("embedding_bag", weight, arg="weight")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if input.dtype.is_floating_point or input.dtype == plugrad.bool:
        raise TypeError(f"embedding_bag: expected indices of an integer dtype (Long, Int), "
                        f"got {input.dtype}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding_bag: scale_grad_by_freq and sparse are not "
                                  "supported")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            f"GitHub.")
    idx, bag, b, psw = _bags(input, offsets, include_last_offset, per_sample_weights)
    num, dim = weight.shape
    idx = idx.long()
    if idx.numel() and (int(idx.max()) >= num or int(idx.min()) < 0):
        raise IndexError(f"embedding_bag: index out of range in self (indices must be in "
                         f"[0, {num}), got values in [{int(idx.min())}, {int(idx.max())}])")
    if max_norm is not None:
        embedding_renorm_(weight, idx, max_norm, norm_type)
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError(f"padding_idx must be within the number of embeddings, got "
                                 f"{padding_idx} for {num} embeddings")
        keep = idx != padding_idx % num
        idx, bag = idx[keep], bag[keep]
        psw = psw[keep] if psw is not None else None
    rows = weight.index_select(0, idx)
    zeros = plugrad.zeros((b, dim), dtype=weight.dtype, device=weight.device)
    if mode == "max":
        return _named(_bag_max(rows, bag, b, zeros), "EmbeddingBagBackward0")
    if psw is not None:
        rows = rows * psw.to(rows.dtype).unsqueeze(1)
    out = zeros.index_add(0, bag, rows)
    if mode == "mean":
        counts = plugrad.zeros((b,), dtype=weight.dtype, device=weight.device).index_add(
            0, bag, plugrad.ones((bag.shape[0],), dtype=weight.dtype, device=weight.device))
        out = out / counts.clamp_min(1.0).unsqueeze(1)
    return _named(out, "EmbeddingBagBackward0")


def _bag_max(rows, bag, b: int, zeros):
    """Per bag and column, PyTorch's running maximum: the bag's first row, replaced by a
    later one only where that is strictly greater, so a NaN after the first row is skipped
    and a NaN first row stays (0 for an empty bag)."""
    if rows.shape[0] == 0:
        return zeros
    member = bag.unsqueeze(0) == plugrad.arange(b, device=bag.device).unsqueeze(1)  # (B, n)
    live = member.unsqueeze(2).logical_and(rows.isnan().logical_not().unsqueeze(0))
    best, _ = plugrad.where(live, rows.unsqueeze(0), float("-inf")).max(1)
    first = rows.index_select(0, member.long().argmax(1))
    best = plugrad.where(first.isnan(), first, best)
    empty = member.logical_not().all(1, keepdim=True)
    return plugrad.where(empty, zeros, best)
