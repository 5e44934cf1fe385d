"""Gradient rules written once in Tensor ops, for the rules that need ops the gradient
namespace ``F`` has no kernel for (triangular solves, ``lu_unpack``): the Tensor binding
(``create_graph``) runs them as they are, recording their graph; the plain binding wraps
the arrays as Tensors and runs them without a graph, so both bindings compute the same
thing bit for bit.
"""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import KeepsOutput
from plugrad.core.grad_mode import no_grad
from plugrad.core.tensor import _wrap


class TensorRule(KeepsOutput):
    """A node whose rule ``rule(g, *saved)`` is written in Tensor ops (see the module)."""

    def rule(self, g, *saved):
        raise NotImplementedError

    def grad(self, F, g, *saved):
        if getattr(F, "tensors", False):
            return tuple(self.rule(g, *saved))
        k, device = self.k, self.device

        def wrap(x):
            if x is None or x.__class__ in (bool, int, float):
                return x
            return _wrap(x, _dt.get_dtype(k.dtype_of(x)), device, k)

        g = [wrap(x) for x in g] if isinstance(g, (list, tuple)) else wrap(g)
        with no_grad():
            outs = self.rule(g, *[wrap(s) for s in saved])
        return tuple(None if o is None else o._data for o in outs)
