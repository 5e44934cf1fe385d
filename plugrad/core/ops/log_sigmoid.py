"""``logsigmoid``: one node with PyTorch's kernel gradient and double backward.

Why a node: composed as ``-softplus(-x)``, its gradient at NaN was 0 (softplus' threshold
``where``) and the value at large ``x`` -0.0. PyTorch's kernel is ``min(x, 0) -
log1p(exp(-|x|))``, its backward ``g * (x < 0 ? 1 - r : r)`` with ``r = z / (1 + z)``,
``z = exp(-|x|)`` (NaN passes), and its double backward ``gg * g * (s - 1) * s`` with ``s =
sigmoid(x)`` (derivatives.yaml, ``log_sigmoid_double_backward``).
"""
from __future__ import annotations

from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import input_meta, record, recording
from plugrad.core.grad_mode import _state, no_grad
from plugrad.core.ops.select import where
from plugrad.core.tensor import Tensor


def _slope(F, x):
    z = F.exp(F.neg(F.abs(x)))
    r = F.div(z, F.add(z, 1.0))
    return F.where(F.lt(x, 0.0), F.sub(1.0, r), r)


class LogSigmoidBackward0(Node):

    def grad(self, F, g, x):
        if getattr(F, "tensors", False) and recording(g, x):  # create_graph
            with no_grad():
                gx = g * _slope(_TensorOps, x)
            node = _LogSigmoidBackwardBackward()
            record(gx, node, (g, x), (g, x))
            node.meta = input_meta(gx, (g, x))
            return (gx,)
        return (F.mul(g, _slope(F, x)),)


class _LogSigmoidBackwardBackward(Node):

    def grad(self, F, gg, g, x):
        ggo = F.mul(gg, _slope(F, x)) if self.next[0] is not None else None
        gx = None
        if self.next[1] is not None:
            s = F.sigmoid(x)
            gx = F.mul(F.mul(F.mul(gg, g), F.sub(s, 1.0)), s)
        return ggo, gx


class _TensorOps:
    """The few Tensor ops :func:`_slope` needs, spelled as the kernel namespace's."""
    exp = staticmethod(lambda t: t.exp())
    neg = staticmethod(lambda t: -t)
    abs = staticmethod(lambda t: t.abs())
    div = staticmethod(lambda a, b: a / b)
    add = staticmethod(lambda a, b: a + b)
    sub = staticmethod(lambda a, b: a - b)
    lt = staticmethod(lambda a, b: a < b)
    where = staticmethod(where)


def log_sigmoid(x: Tensor) -> Tensor:
    """``min(x, 0) - log1p(exp(-|x|))``, PyTorch's kernel."""
    with no_grad():
        out = x.clamp_max(0.0) - (-x.abs()).exp().log1p()
    if not (_state.enabled and x._rg):
        return out
    return record(out, LogSigmoidBackward0(), (x,), (x,))
