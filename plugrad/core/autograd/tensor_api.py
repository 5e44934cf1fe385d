"""The Tensor's autograd entry points: ``backward``, ``register_hook``, ``retain_grad``.

They sit here, above the Tensor and beside the engine, and are bound onto the Tensor by
:mod:`plugrad.core.methods`.
"""
from __future__ import annotations

import weakref

from plugrad.core.autograd import functional
from plugrad.core.autograd.engine import run
from plugrad.core.autograd.node import _Handle
from plugrad.core.tensor import _wrap


def retain_grad(self) -> None:
    """Keep ``.grad`` of this non-leaf tensor after backward."""
    if self.grad_fn is None:
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        return
    if self._retains_grad:
        return
    self._retains_grad = True
    ref = weakref.ref(self)

    def keep(grad):
        t = ref()
        if t is not None:
            g = grad.detach()
            t._grad = g.clone() if t._grad is None else t._grad + g
    add_node_hook(self, keep)


def register_hook(self, hook):
    """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a
    replacement gradient."""
    if not self._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                           "gradient")
    if self.grad_fn is None:
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _Handle(self._hooks, hook)
    return add_node_hook(self, hook)


def add_node_hook(self, hook):
    node = self.grad_fn
    node.special = True
    if node.pre_hooks is None:
        node.pre_hooks = {}
    hooks = node.pre_hooks.setdefault(self._output_nr, [])
    hooks.append(hook)
    return _Handle(hooks, hook)


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Compute the gradient of this tensor w.r.t. the graph leaves, into their ``.grad``."""
    fn = self.grad_fn
    if gradient is None and inputs is None and fn is not None:
        shape = self._data.shape
        if not shape or self.numel() == 1:
            # the usual `loss.backward()`: skip the general checks; the seed is ones
            k = self._k
            seed = k.full(shape, 1.0, self.dtype.name, self.device.index)
            if create_graph:
                seed = _wrap(seed, self.dtype, self.device, k)
            run([((fn, self._output_nr), seed)], tensor_mode=create_graph,
                retain_graph=bool(create_graph if retain_graph is None else retain_graph),
                stored={id(seed)})
            return
    functional.backward(self, gradient, retain_graph=retain_graph,
                        create_graph=create_graph, inputs=inputs)

