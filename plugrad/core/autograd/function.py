"""``autograd.Function``: user-defined ops with their own forward and backward."""
from __future__ import annotations

from plugrad.core.autograd import grad_mode
from plugrad.core.autograd.node import Node


class FunctionCtx:
    """The ``ctx`` object: carries what forward saves for backward."""

    def __init__(self):
        self._saved = ()
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._non_differentiable = set()

    def save_for_backward(self, *tensors):
        self._saved = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = value

    def mark_dirty(self, *tensors):
        """Accepted for compatibility; in-place outputs are handled as new tensors."""


class BackwardCFunction(Node):
    """The node a Function leaves in the graph; named after the Function class."""


    @property
    def n_outputs(self):
        return self.n_out

    def name(self) -> str:
        return f"{self.fn_cls.__name__}Backward"

    def backward(self, *grads):
        ctx = self.ctx
        if ctx.materialize_grads:
            from plugrad.core.factories import zeros
            grads = tuple(g if g is not None else zeros(shape, dtype=dt, device=dev)
                          for g, (shape, dt, dev) in zip(grads, self.out_meta))
        ctx.saved_tensors = self.saved
        result = self.fn_cls.backward(ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_in = len(self.next)
        if len(result) != n_in:
            if len(result) > n_in and all(r is None for r in result[n_in:]):
                result = result[:n_in]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                                   f"gradients (expected {n_in}, got {len(result)})")
        return result


class FunctionMeta(type):
    """Gives each Function subclass ``apply``."""


class Function(metaclass=FunctionMeta):
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call
    ``MyFn.apply(*args)``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        from plugrad.core.ops._base import attach
        from plugrad.core.tensor import Tensor
        ctx = FunctionCtx()
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        with grad_mode.no_grad():
            outputs = cls.forward(ctx, *args)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        if grad_mode.is_grad_enabled() and any(t._rg for t in tensor_args):
            node = BackwardCFunction()
            node.fn_cls = cls
            node.ctx = ctx
            node.n_out = len(outs)
            node.saved = ctx._saved
            node.versions = tuple(t._vc[0] if isinstance(t, Tensor) else None for t in ctx._saved)
            node.out_meta = tuple((tuple(o.shape), o.dtype, o.device) if isinstance(o, Tensor)
                                  else ((), None, None) for o in outs)
            fresh = []
            for nr, o in enumerate(outs):
                if not isinstance(o, Tensor):
                    fresh.append(o)
                    continue
                differentiable = (id(o) not in ctx._non_differentiable
                                  and o.dtype.is_floating_point)
                if any(o is t for t in tensor_args) or o.grad_fn is not None or o._rg:
                    o = o._alias()
                if differentiable:
                    attach(o, node, args)
                    o._output_nr = nr
                fresh.append(o)
            outs = tuple(fresh)
        return outs[0] if single else outs


class once_differentiable:
    """Decorator accepted for compatibility (backward runs without graph when asked)."""

    def __new__(cls, fn):
        return fn
