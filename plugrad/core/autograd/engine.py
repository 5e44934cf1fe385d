"""The backward engine: an iterative walk of the graph in dependency order.

No recursion (a chain of 100,000 ops is fine); a node runs once every consumer of its
outputs has handed over its gradient, so gradients of a tensor used twice are summed first.
"""
from __future__ import annotations

import weakref

from plugrad.core.autograd import anomaly
from plugrad.core.autograd import grad_mode
from plugrad.core.autograd.node import AccumulateGrad


def edge_of(t):
    """The graph edge a tensor's gradient flows into, or None if it needs no gradient."""
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._rg:
        acc = t._accum() if t._accum is not None else None
        if acc is None:
            acc = AccumulateGrad(t)
            t._accum = weakref.ref(acc)
        return (acc, 0)
    return None


def run_backward(tensors, grad_tensors, *, retain_graph: bool, create_graph: bool,
                 inputs=None, accumulate: bool = True):
    """Propagate ``grad_tensors`` from ``tensors`` to the leaves.

    With ``inputs``, return their gradients; ``accumulate`` says whether leaves' ``.grad``
    are updated (``backward``) or not (``autograd.grad``).
    """
    roots = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        edge = edge_of(t)
        if edge is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               f"have a grad_fn")
        roots.append((edge, g))

    deps: dict = {}
    stack = [edge[0] for edge, _ in roots]
    seen = set(stack)
    while stack:
        node = stack.pop()
        for e in node.next:
            if e is not None:
                child = e[0]
                deps[child] = deps.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    stack.append(child)

    buffers: dict = {}
    for (node, nr), g in roots:
        _add_to_buffer(buffers, node, nr, g)

    captured = None
    capture_at: dict = {}
    if inputs is not None:
        captured = [None] * len(inputs)
        for i, t in enumerate(inputs):
            edge = edge_of(t)
            if edge is None:
                raise RuntimeError(f"input {i} of autograd.grad does not require grad")
            capture_at.setdefault(edge, []).append(i)

    stored_arrays: set = {id(g._data) for _, g in roots}  # user-given grads are never stored as-is
    ready = []
    for (node, _), _g in roots:
        if deps.get(node, 0) == 0 and node not in ready:
            ready.append(node)

    state = grad_mode._state
    previous = state.enabled
    state.enabled = create_graph
    try:
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None) or [None] * node.n_outputs
            if node.pre_hooks:
                _run_pre_hooks(node, grads)
            if capture_at:
                for nr, g in enumerate(grads):
                    for i in capture_at.get((node, nr), ()):
                        captured[i] = g
            if type(node) is AccumulateGrad:
                if accumulate and grads[0] is not None and (
                        inputs is None or (node, 0) in capture_at):
                    _accumulate_grad(node.variable, grads[0], create_graph, stored_arrays)
                continue
            if grads[0] is None and (len(grads) == 1 or all(g is None for g in grads)):
                outs = (None,) * len(node.next)
            else:
                if node._freed or node.versions:
                    node.check_saved()
                if anomaly._enabled:
                    outs = anomaly.call_backward(node, grads)
                else:
                    outs = node.backward(*grads)
                if node.post_hooks:
                    for hook in node.post_hooks:
                        hook(outs, tuple(grads))
                if not retain_graph:
                    node.release()
            for e, g in zip(node.next, outs):
                if e is None:
                    continue
                child = e[0]
                if g is not None:
                    slots = buffers.get(child)
                    if slots is None:
                        slots = buffers[child] = [None] * child.n_outputs
                    nr = e[1]
                    slots[nr] = g if slots[nr] is None else slots[nr] + g
                left = deps[child] - 1
                deps[child] = left
                if left == 0:
                    ready.append(child)
    finally:
        state.enabled = previous
    return captured


def _add_to_buffer(buffers: dict, node, nr: int, g) -> None:
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * node.n_outputs
    slots[nr] = g if slots[nr] is None else slots[nr] + g


def _run_pre_hooks(node, grads: list) -> None:
    for nr, hooks in node.pre_hooks.items():
        if nr == -1:
            for hook in list(hooks):
                replaced = hook(tuple(grads))
                if replaced is not None:
                    grads[:] = list(replaced)
            continue
        for hook in list(hooks):
            if grads[nr] is not None:
                replaced = hook(grads[nr])
                if replaced is not None:
                    grads[nr] = replaced


def _accumulate_grad(var, g, create_graph: bool, stored_arrays: set) -> None:
    """``var.grad += g``, in place once it exists, as PyTorch's AccumulateGrad does."""
    if var._hooks:
        for hook in list(var._hooks):
            replaced = hook(g)
            if replaced is not None:
                g = replaced
    if not create_graph:
        g = g.detach()
    if var._grad is None:
        data = g._data
        if id(data) in stored_arrays or getattr(data, "base", None) is not None:
            g = g.clone()  # the array may be shared: a later in-place op must not leak
        stored_arrays.add(id(g._data))
        if g.dtype is not var.dtype:
            g = g.to(var.dtype)
        var._grad = g
    elif create_graph or var._grad.requires_grad:
        var._grad = var._grad + g
    else:
        var._grad._inplace_assign(var._grad._k.add(var._grad._data, g._data))
