"""Smooth L1 and Huber losses: one node with PyTorch's piecewise gradient.

Why a node: composed as ``where(|d| < beta, d**2 / 2beta, |d| - beta/2)``, autograd sends a
zero into the branch ``where`` did not pick, and ``0 * d/dd d**2`` is NaN once ``d**2``
overflows (a finite ``1e308`` input, or ``inf``); at ``d == 0`` the ``|d|`` kink gave a
second derivative of 0 instead of ``1 / beta``. PyTorch's kernel is ``-s`` below ``-beta``,
``s`` above ``beta`` and ``s d / beta`` between (NaN passes through), and its double
backward is ``s (|d| < beta) / beta`` (derivatives.yaml, ``smooth_l1_loss_double_backward``
and ``huber_loss_double_backward``; ``s`` is 1 for smooth L1, ``delta`` for Huber).
"""
from __future__ import annotations

from plugrad.core.autograd.node import Node
from plugrad.core import dtypes as _dt
from plugrad.core.autograd.record import input_meta, record, recording
from plugrad.core.grad_mode import _state, no_grad
from plugrad.core.ops.select import where
from plugrad.core.tensor import Tensor


class _PiecewiseBackward(Node):
    """``g * clamp(s d / beta, -s, s)`` (clamping is PyTorch's three branches: NaN stays)."""

    def grad(self, F, g, x, t):
        beta, s = self.beta, self.slope
        if getattr(F, "tensors", False) and recording(g, x, t):  # create_graph
            gx = _grad_input(g, x, t, beta, s)
        else:
            gx = F.mul(g, F.minimum(F.maximum(F.mul(F.sub(x, t), s / beta), -s), s))
        return gx, (F.neg(gx) if self.next[1] is not None else None)


class _PiecewiseBackwardBackward(Node):
    """PyTorch's double backward: the slope for the incoming gradient, ``s (|d| < beta) /
    beta`` (0 at the joins and at NaN) for input and target."""

    def grad(self, F, gg, g, x, t):
        beta, s = self.beta, self.slope
        d = F.sub(x, t)
        ggo = F.mul(gg, F.minimum(F.maximum(F.mul(d, s / beta), -s), s)) if self.next[0] \
            else None
        gx = gt = None
        if self.next[1] is not None or self.next[2] is not None:
            ggg = F.mul(gg, g)  # times the 0/1 mask, as PyTorch (a NaN stays NaN)
            gx = F.where(F.lt(F.abs(d), beta), F.mul(ggg, s / beta), F.mul(ggg, 0.0))
            gt = F.neg(gx) if self.next[2] is not None else None
        return ggo, gx, gt


def _grad_input(g: Tensor, x: Tensor, t: Tensor, beta: float, s: float) -> Tensor:
    with no_grad():
        gx = g * ((x - t) * (s / beta)).clamp(-s, s)
    node = _PiecewiseBackwardBackward()
    node.beta, node.slope = beta, s
    record(gx, node, (g, x, t), (g, x, t))
    node.meta = input_meta(gx, (g, x, t))
    return gx


def piecewise_loss(x: Tensor, t: Tensor, beta: float, slope: float) -> Tensor:
    """Elementwise ``0.5 s z**2 / beta`` for ``z = |x - t| < beta``, else ``s (z - beta/2)``:
    smooth L1 (``s = 1``) and Huber (``s = beta = delta``); ``x`` and ``t`` of one shape."""
    if x.dtype is not t.dtype:
        dt = _dt.promote_types(x.dtype, t.dtype)
        x, t = x.to(dt), t.to(dt)
    with no_grad():
        z = (x - t).abs()
        loss = where(z < beta, z * z * (0.5 * slope / beta), (z - 0.5 * beta) * slope)
    if not (_state.enabled and (x._rg or t._rg)):
        return loss
    node = _PiecewiseBackward()
    node.beta, node.slope = beta, slope
    return record(loss, node, (x, t), (x, t))
