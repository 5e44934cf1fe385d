"""The rule of an op computed by a composite of kernels: the gradient of that composite.

Composites are written in kernel names over a namespace ``F`` (a kernel table in forward).
Run on the differentiable Tensor ops instead, a composite records its own graph; so the
gradient of such an op (a scan, a fused backward kernel) is that graph's vector-Jacobian
product, to any order, with no second formula to keep in step with the first.
"""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core.autograd import engine
from plugrad.core.autograd.functional import grad as vjp
from plugrad.core.autograd.node import Node
from plugrad.core.grad_mode import _state
from plugrad.core.tensor import Tensor, _wrap


class CompositeBackward(Node):
    """Subclasses set ``composite(F, *inputs, **params)`` (a staticmethod); the op records
    its differentiable inputs as ``saved`` and its keyword constants in ``params``."""

    params: dict = {}

    @staticmethod
    def composite(F, *inputs, **params):
        raise NotImplementedError

    def grad(self, F, g, *inputs):
        tensor_mode = getattr(F, "tensors", False)
        T = engine.tensor_ops_for(self.k)
        if tensor_mode:
            xs = list(inputs)
            gt = g
        else:
            xs = [self._leaf(x, i) for i, x in enumerate(inputs)]
            gt = _wrap(g, _dt.get_dtype(self.k.dtype_of(g)), self.device, self.k)
        wanted = [i for i, e in enumerate(self.next)
                  if e is not None and isinstance(xs[i], Tensor) and xs[i]._rg]
        previous = _state.enabled
        _state.enabled = True
        try:
            out = self.composite(T, *xs, **self.params)
            found = vjp(out, [xs[i] for i in wanted], gt, allow_unused=True,
                        retain_graph=tensor_mode, create_graph=tensor_mode)
        finally:
            _state.enabled = previous
        grads = [None] * len(self.next)
        for i, gi in zip(wanted, found):
            grads[i] = gi if gi is None or tensor_mode else gi._data
        return tuple(grads)

    def _leaf(self, x, i):
        """An array input as a leaf Tensor (requiring grad where the op's input does)."""
        if x is None or x.__class__ in (bool, int, float):
            return x
        t = _wrap(x, _dt.get_dtype(self.k.dtype_of(x)), self.device, self.k)
        if self.next[i] is not None and t.dtype.is_floating_point:
            t._rg = True
        return t
