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
    """Subclasses set ``composite(F, *args)`` (a staticmethod). The op saves its Tensor
    inputs (in the order of its edges); ``template`` holds the full argument list with
    None where those go (``positions``), or is None when the arguments are just the
    inputs followed by the keyword constants in ``params``."""

    params: dict = {}
    template = None
    positions = ()

    @staticmethod
    def composite(F, *inputs, **params):
        raise NotImplementedError

    def grad(self, F, g, *inputs):
        tensor_mode = getattr(F, "tensors", False)
        T = engine.tensor_ops_for(self.k)
        if tensor_mode:
            xs = list(inputs)
        else:
            xs = [self._leaf(x, i) for i, x in enumerate(inputs)]
        grads_out = [g] if self.n_outputs == 1 else list(g)
        if not tensor_mode:
            grads_out = [None if x is None else _wrap(x, _dt.get_dtype(self.k.dtype_of(x)),
                                                      self.device, self.k)
                         for x in grads_out]
        wanted = [i for i, e in enumerate(self.next)
                  if e is not None and isinstance(xs[i], Tensor) and xs[i]._rg]
        previous = _state.enabled
        _state.enabled = True
        try:
            if self.template is None:
                out = self.composite(T, *xs, **self.params)
            else:
                args = list(self.template)
                for pos, x in zip(self.positions, xs):
                    args[pos] = x
                out = self.composite(T, *args)
            outs = list(out) if self.n_outputs > 1 else [out]
            pairs = [(o, go) for o, go in zip(outs, grads_out)
                     if go is not None and isinstance(o, Tensor) and o._rg]
            found = [None] * len(wanted)
            if pairs and wanted:
                found = vjp([o for o, _ in pairs], [xs[i] for i in wanted],
                            [go for _, go in pairs], allow_unused=True,
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
