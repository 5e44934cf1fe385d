"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, caching."""
from __future__ import annotations

import numbers
from functools import update_wrapper

import plugrad
from plugrad import Tensor
import plugrad.nn.functional as F

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni


def broadcast_all(*values):
    """Tensors of one shape from tensors and numbers; numbers take the tensors' dtype/device."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    if not tensors:
        dtype = plugrad.get_default_dtype()
        return tuple(plugrad.tensor(v, dtype=dtype) for v in values)
    ref = tensors[0]
    dtype = ref.dtype if ref.dtype.is_floating_point else plugrad.get_default_dtype()
    values = [v if isinstance(v, Tensor) else plugrad.tensor(v, dtype=dtype, device=ref.device)
              for v in values]
    return tuple(plugrad.broadcast_tensors(*values))


def _standard_normal(shape, dtype, device):
    return plugrad.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dimensions (the event dimensions of a log-density)."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[:value.ndim - dim], -1).sum(-1)


def logits_to_probs(logits, is_binary=False):
    return plugrad.sigmoid(logits) if is_binary else F.softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = plugrad.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


class lazy_property:
    """A property computed once per instance (then stored on it), like PyTorch's: the
    parameter a distribution was not built with (``probs`` from ``logits``) comes on demand."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with plugrad.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = plugrad.tril_indices(n, n, offset=diag, device=mat.device)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1))
         ** 0.5) / 2
    eps = plugrad.finfo(vec.dtype).eps
    if not round(n) - n < eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n.item()) if isinstance(n, Tensor) else round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    rows, cols = plugrad.tril_indices(n, n, offset=diag, device=vec.device)
    mat[..., rows, cols] = vec
    return mat


def broadcast_shapes(*shapes):
    """``torch.broadcast_shapes`` for the distributions (a plain-Python rule, no tensors)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, size in enumerate(tuple(shape)[::-1]):
            j = ndim - 1 - i
            if size != 1 and out[j] != 1 and size != out[j]:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single "
                                   f"shape: {[tuple(s) for s in shapes]}")
            if size != 1:
                out[j] = size
    return plugrad.Size(out)
