"""Gradients that are locally constant still record their inputs under ``create_graph``.

PyTorch computes relu's gradient with ``threshold_backward(grad, result)``, pooling's with
``max_pool2d_backward(grad, self, indices)``, conv's bias gradient inside one
``convolution_backward``: differentiable functions of the forward's tensors, so with
``create_graph=True`` the gradient requires grad whenever those tensors do (its derivative
with respect to them is zero: the mask, the scatter, the sum are locally constant).
plugrad's rules compute such gradients from ``g`` and a mask alone, which records nothing:
differentiating them again would raise (or give None) where PyTorch gives zeros.

A node opts in with ``records_inputs`` (a class attribute: True, or the positions of the
inputs its formula reads; or set on a composite's last node by :func:`records`). In the ``create_graph`` pass each gradient its rule returns
without a graph is then made the output of a :class:`ConstantGradBackward0` with edges to
the node's inputs and zeros as its gradient: the values are the rule's, ``requires_grad``
and the second-order zeros are PyTorch's. It keeps no tensor alive (only edges, shapes and dtypes).
"""
from __future__ import annotations

from plugrad.core.autograd import engine
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import _sequence
from plugrad.core.tensor import Tensor, _wrap


class ConstantGradBackward0(Node):
    """A gradient that is locally constant in the inputs it has edges to: zeros for each."""

    def grad(self, F, g):
        return tuple(F.full(shape, 0, dtype, self.device.index) for shape, dtype in self.like)


def records(out, *inputs):
    """Mark the node that made ``out`` (a composite's last op) as PyTorch's one op of
    ``inputs`` (the tensors its backward formula reads; None entries are skipped): under
    ``create_graph`` its gradients record them. ``out`` is returned."""
    node = getattr(out, "grad_fn", None)
    if node is None or any(out is t for t in inputs):
        return out
    tied = tuple((engine.edge_of(t), tuple(t.shape), t.dtype.name) for t in inputs
                 if isinstance(t, Tensor) and t._rg)
    if tied:
        node.records_inputs = tied
    return out


def link(node, outs) -> tuple:
    """``outs`` (the rule's gradients, Tensors shaped as the inputs) with each one that has
    no graph made a recorded, locally constant function of what ``node`` records: its
    inputs (``records_inputs = True``), those at the given positions (a tuple of ints), or
    a composite's inputs (``(edge, shape, dtype)`` triples, set by :func:`records`)."""
    spec = node.records_inputs
    if spec is True or isinstance(spec[0], int):
        spec = tuple((e, tuple(o.shape), o.dtype.name)
                     for i, (e, o) in enumerate(zip(node.next, outs))
                     if e is not None and isinstance(o, Tensor) and (spec is True or i in spec))
    spec = tuple(s for s in spec if s[0] is not None)
    if not spec:
        return outs
    fixed = []
    for o in outs:
        if isinstance(o, Tensor) and not o._rg and o.dtype.is_floating_point:
            c = ConstantGradBackward0()
            c.next = tuple(e for e, _, _ in spec)
            c.like = tuple((shape, dt) for _, shape, dt in spec)
            c.k, c.device, c.seq = o._k, o.device, next(_sequence)
            o = _wrap(o._data, o.dtype, o.device, o._k)
            o.grad_fn, o._rg = c, True
        fixed.append(o)
    return tuple(fixed)


engine.link_constants = link
