"""Gradient clipping, in place on ``.grad``, as ``torch.nn.utils``."""
from __future__ import annotations

import math

import plugrad
from plugrad import Tensor


def _grads(parameters) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False):
    """The ``norm_type`` norm of all ``tensors`` together (as one long vector)."""
    norm_type = float(norm_type)
    if not tensors:
        return plugrad.tensor(0.0)
    with plugrad.no_grad():
        if norm_type == math.inf:
            norms = [t.detach().abs().max() for t in tensors]
            total = plugrad.stack([n.to(tensors[0].device) for n in norms]).max()
        else:
            norms = [t.detach().norm(norm_type) for t in tensors]
            total = plugrad.stack([n.to(tensors[0].device) for n in norms]).norm(norm_type)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           f"`parameters` is non-finite, so it cannot be clipped. To disable "
                           f"this error and scale the gradients by the non-finite norm "
                           f"anyway, set `error_if_nonfinite=False`")
    return total


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None):
    """Scale all gradients so that their total norm is at most ``max_norm``; returns the
    total norm before clipping."""
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total
    with plugrad.no_grad():
        coef = (float(max_norm) / (total + 1e-6)).clamp_max(1.0)
        for g in grads:
            g.mul_(coef.to(g.device).to(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with plugrad.no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
