"""``autograd.Function``: user-defined ops with their own forward and backward."""
from __future__ import annotations

from plugrad.core import grad_mode
from plugrad.core.autograd import engine
from plugrad.core.autograd.grad_ops import sum_to
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record
from plugrad.core.tensor import Tensor, _wrap, table_for


class FunctionCtx:
    """The ``ctx`` object: carries what forward saves for backward."""

    def __init__(self):
        self._saved = ()
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._non_differentiable = set()

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save tensors (or None), but "
                                f"argument {i} is a {type(t).__name__}; store other values "
                                f"as attributes of ctx")
        self._saved = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = value

    def mark_dirty(self, *tensors):
        """Accepted for compatibility; in-place outputs are handled as new tensors."""


class BackwardCFunction(Node):
    """The node a Function leaves in the graph; named after the Function class. Its rule
    is the user's ``backward`` on Tensors, in both passes."""

    tensor_rule = True
    special = True

    @property
    def n_outputs(self):
        return self.n_out

    def name(self) -> str:
        return f"{self.fn_cls.__name__}Backward"

    def backward(self, *grads):
        ctx = self.ctx
        if ctx.materialize_grads:
            grads = tuple(_zeros_for(meta) if g is None else g
                          for g, meta in zip(grads, self.out_meta))
        ctx.saved_tensors = self.saved
        try:
            result = self.fn_cls.backward(ctx, *grads)
        finally:
            ctx.saved_tensors = ()  # what the node saved goes with it after backward
        if not isinstance(result, tuple):
            result = (result,)
        n_in = len(self.next)
        if len(result) != n_in:
            if len(result) > n_in and all(r is None for r in result[n_in:]):
                result = result[:n_in]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                                   f"gradients (expected {n_in}, got {len(result)})")
        return tuple(self._checked(i, g) for i, g in enumerate(result))

    def _checked(self, i, g):
        """Gradient ``i`` fitted to its input: summed over broadcast dims, cast to its dtype;
        anything else is the Function's bug and is named as such."""
        meta = self.in_meta[i]
        if g is None:
            return None
        if meta is None:
            raise RuntimeError(f"function {self.name()} returned a gradient different than "
                               f"None at position {i}, but the corresponding forward input "
                               f"was not a Tensor")
        if not isinstance(g, Tensor):
            raise TypeError(f"function {self.name()} returned a {type(g).__name__} as "
                            f"gradient {i}; expected a Tensor or None")
        shape, dtype = meta
        if tuple(g.shape) != shape:
            if not _expandable(shape, tuple(g.shape)):
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at "
                                   f"index {i} - got {list(g.shape)} but expected shape "
                                   f"compatible with {list(shape)}")
            g = sum_to(engine.tensor_ops_for(g._k), g, shape)
        return g if g.dtype is dtype else g.to(dtype)


def _zeros_for(meta):
    """Zeros standing in for the gradient of an unused output (None for non-tensors)."""
    shape, dtype, device = meta
    if dtype is None:
        return None
    k = table_for(device)
    return _wrap(k.full(tuple(shape), 0, dtype.name, device.index), dtype, device, k)


def _expandable(shape, target) -> bool:
    """Whether ``shape`` broadcasts to ``target``."""
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(target)))


class FunctionMeta(type):
    """Gives each Function subclass ``apply``."""


class Function(metaclass=FunctionMeta):
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call
    ``MyFn.apply(*args)``. As in PyTorch, ``forward(*args)`` may instead leave the ctx to a
    static ``setup_context(ctx, inputs, output)``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        with grad_mode.no_grad():
            if cls.setup_context is Function.setup_context:
                outputs = cls.forward(ctx, *args)
            else:
                outputs = cls.forward(*args)
                cls.setup_context(ctx, args, outputs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        if grad_mode.is_grad_enabled() and any(t._rg for t in tensor_args):
            outs = _record(cls, ctx, args, tensor_args, outs)
        return outs[0] if single else outs


def _record(cls, ctx, args, tensor_args, outs):
    """Attach a node for ``cls`` to the differentiable outputs; return the outputs (an output
    that is an input, or already in a graph, is replaced by an alias)."""
    node = BackwardCFunction()
    node.fn_cls = cls
    node.ctx = ctx
    node.n_out = len(outs)
    node.saved = ctx._saved
    node.versions = tuple(t._vc[0] if isinstance(t, Tensor) else None for t in ctx._saved)
    node.in_meta = tuple((tuple(a.shape), a.dtype) if isinstance(a, Tensor) else None
                         for a in args)
    node.out_meta = tuple((tuple(o.shape), o.dtype, o.device) if isinstance(o, Tensor)
                          else ((), None, None) for o in outs)
    fresh = []
    first = True
    for nr, o in enumerate(outs):
        if not isinstance(o, Tensor):
            fresh.append(o)
            continue
        differentiable = (id(o) not in ctx._non_differentiable and o.dtype.is_floating_point)
        if any(o is t for t in tensor_args) or o.grad_fn is not None or o._rg:
            o = o._alias()
        if differentiable:
            if first:  # edges, place in time and device come with the first output
                record(o, node, args)
                node.saved = ctx._saved
                first = False
            else:
                o.grad_fn, o._rg = node, True
            o._output_nr = nr
        fresh.append(o)
    ctx._saved = ()  # the node holds them, and lets them go when backward has run
    return tuple(fresh)


class once_differentiable:
    """Decorator accepted for compatibility (backward runs without graph when asked)."""

    def __new__(cls, fn):
        return fn
