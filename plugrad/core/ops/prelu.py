"""PReLU's kernel: ``x > 0 ? x : w * x``, one node with PyTorch's gradients.

Why a node: composed as ``where(x > 0, x, w * x)``, autograd's second derivatives at
``x == 0`` are those of the ``w * x`` branch, while PyTorch's double backward
(``_prelu_kernel_backward`` in derivatives.yaml) switches on ``x >= 0``: there the mixed
second derivatives are 0 and the incoming gradient passes unscaled.
"""
from __future__ import annotations

from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import input_meta, record, recording
from plugrad.core.grad_mode import _state, no_grad
from plugrad.core.ops.select import where
from plugrad.core.tensor import Tensor


class PreluKernelBackward0(Node):
    """``g`` where ``x > 0`` else ``g * w`` for the input, ``g * x`` (else 0) for ``w``."""

    def grad(self, F, g, x, w):
        if getattr(F, "tensors", False) and recording(g, x, w):  # create_graph
            return _grads_recorded(g, x, w, self.next[0] is not None,
                                   self.next[1] is not None)
        pos = F.gt(x, 0.0)
        gx = F.where(pos, g, F.mul(g, w)) if self.next[0] is not None else None
        gw = F.where(pos, 0.0, F.mul(g, x)) if self.next[1] is not None else None
        return gx, gw


class _InputGradBackward(Node):
    """Of ``where(x > 0, g, g * w)``: PyTorch's ``where(x >= 0, gg, gg * w)`` for ``g``,
    nothing for ``x``, ``where(x >= 0, 0, gg * g)`` for ``w``."""

    def grad(self, F, gg, g, x, w):
        nonneg = F.ge(x, 0.0)
        return (F.where(nonneg, gg, F.mul(gg, w)), None,
                F.where(nonneg, 0.0, F.mul(gg, g)) if self.next[2] is not None else None)


class _WeightGradBackward(Node):
    """Of ``where(x > 0, 0, g * x)``: ``where(x >= 0, 0, gg * x)`` for ``g`` and
    ``where(x >= 0, 0, gg * g)`` for ``x``."""

    def grad(self, F, gg, g, x):
        nonneg = F.ge(x, 0.0)
        return (F.where(nonneg, 0.0, F.mul(gg, x)),
                F.where(nonneg, 0.0, F.mul(gg, g)) if self.next[1] is not None else None)


def _grads_recorded(g, x, w, want_x, want_w):
    with no_grad():
        pos = x > 0
        gx = where(pos, g, g * w) if want_x else None
        gw = where(pos, 0.0, g * x) if want_w else None
    if gx is not None:
        node = _InputGradBackward()
        record(gx, node, (g, x, w), (g, x, w))
        node.meta = input_meta(gx, (g, x, w))
    if gw is not None:
        node = _WeightGradBackward()
        record(gw, node, (g, x), (g, x))
        node.meta = input_meta(gw, (g, x))
    return gx, gw


def prelu_kernel(x: Tensor, w: Tensor) -> Tensor:
    """``x > 0 ? x : w * x`` with ``w`` already shaped to broadcast against ``x``."""
    with no_grad():
        out = where(x > 0, x, w * x)
    if not (_state.enabled and (x._rg or w._rg)):
        return out
    node = PreluKernelBackward0()
    record(out, node, (x, w), (x, w))
    node.meta = input_meta(out, (x, w))
    return out
