"""The backward engine: an iterative walk of the graph in dependency order.

No recursion (a chain of 100,000 ops is fine); a node runs once every consumer of its
outputs has handed over its gradient, so gradients of a tensor used twice are summed first.
"""
from __future__ import annotations

import weakref

from plugrad.core.autograd import anomaly
from plugrad.core.autograd import array_mode
from plugrad.core.autograd import node as node_module
from plugrad.core.autograd import grad_mode
from plugrad.core.autograd.node import AccumulateGrad

_wrap = None  # plugrad.core.tensor._wrap, bound on first use (tensor imports this package)


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
    if (len(tensors) == 1 and inputs is None and accumulate and not create_graph
            and not anomaly._enabled and grad_tensors[0].dtype is tensors[0].dtype
            and grad_tensors[0].device is tensors[0].device
            and _on_arrays(tensors[0], grad_tensors[0]._data, retain_graph)):
        return None
    if len(tensors) == 1:  # the usual loss.backward(): skip the general bookkeeping
        edge = edge_of(tensors[0])
        if edge is None:
            raise RuntimeError("element 0 of tensors does not require grad and does not have "
                               "a grad_fn")
        roots = [(edge, grad_tensors[0])]
    else:
        roots = []
        for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
            edge = edge_of(t)
            if edge is None:
                raise RuntimeError(f"element {i} of tensors does not require grad and does "
                                   f"not have a grad_fn")
            roots.append((edge, g))

    # Count, for every node, how many edges lead into it: it runs when all have delivered.
    deps: dict = {}
    stack = [edge[0] for edge, _ in roots]
    while stack:
        node = stack.pop()
        for e in node.next:
            if e is not None:
                child = e[0]
                if child in deps:
                    deps[child] += 1
                else:
                    deps[child] = 1
                    stack.append(child)

    # A single-output node's pending gradient is stored bare, a multi-output one's as a list.
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

    stored_arrays = {id(g._data) for _, g in roots}  # user-given grads are never stored as-is
    ready = []
    for (node, _), _g in roots:
        if node not in deps and node not in ready:
            ready.append(node)

    state = grad_mode._state
    previous = state.enabled
    state.enabled = create_graph
    try:
        simple = not capture_at and not anomaly._enabled
        while ready:
            node = ready.pop()
            pending = buffers.pop(node, None)
            if simple and node.n_outputs == 1 and node.pre_hooks is None \
                    and node.post_hooks is None and type(node) is not AccumulateGrad \
                    and pending is not None:
                # The common node: one output, no hooks, nothing to capture.
                if node._freed or node.versions:
                    node.check_saved()
                outs = node.backward(pending)
                if not retain_graph:
                    node.saved = ()
                    node._freed = True
                    if node._keeps_output:
                        node.release()
            else:
                outs = _run_node(node, pending, buffers, capture_at, captured, accumulate,
                                 inputs, create_graph, retain_graph, stored_arrays)
                if outs is None:
                    continue
            for e, g in zip(node.next, outs):
                if e is None:
                    continue
                child = e[0]
                if g is not None:
                    if child.n_outputs == 1:
                        old = buffers.get(child)
                        buffers[child] = g if old is None else old + g
                    else:
                        _add_to_buffer(buffers, child, e[1], g)
                left = deps[child] - 1
                deps[child] = left
                if left == 0:
                    ready.append(child)
    finally:
        state.enabled = previous
    return captured


def backward_scalar(root, retain_graph: bool, create_graph: bool) -> None:
    """``loss.backward()`` of a one-element ``root`` with a graph: the usual call, kept short."""
    k = root._k
    seed = k.full(root._data.shape, 1.0, root.dtype.name, root.device.index)
    if create_graph or anomaly._enabled or not _on_arrays(root, seed, retain_graph):
        global _wrap
        if _wrap is None:
            from plugrad.core.tensor import _wrap
        run_backward((root,), (_wrap(seed, root.dtype, root.device, k),),
                     retain_graph=retain_graph, create_graph=create_graph)


def _on_arrays(root, seed, retain_graph: bool) -> bool:
    """Backward from ``root`` with the array ``seed`` on bare arrays (see :mod:`array_mode`);
    False when the graph needs the general path (hooks on nodes, several devices)."""
    fn = root.grad_fn
    if fn is None or (node_module.special_nodes and array_mode.needs_general_path(fn)):
        return False
    state = grad_mode._state
    previous = state.enabled
    state.enabled = False
    try:
        array_mode.run(fn, root._output_nr, seed, root._k, root.device, retain_graph,
                       {id(seed)})
    finally:
        state.enabled = previous
    return True


def _run_node(node, pending, buffers, capture_at, captured, accumulate, inputs, create_graph,
              retain_graph, stored_arrays):
    """One node in full generality (hooks, captures, anomaly mode, several outputs, leaves).
    Returns its input gradients, or None when it has none to hand on (a leaf)."""
    if node.n_outputs == 1:
        grads = [pending]
        missing = pending is None
    else:
        grads = pending or [None] * node.n_outputs
        missing = all(g is None for g in grads)
    if node.pre_hooks is not None and not missing:
        _run_pre_hooks(node, grads)
    if capture_at:
        for nr, g in enumerate(grads):
            for i in capture_at.get((node, nr), ()):
                captured[i] = g
    if type(node) is AccumulateGrad:
        if accumulate and not missing and (inputs is None or (node, 0) in capture_at):
            _accumulate_grad(node.variable, grads[0], create_graph, stored_arrays)
        return None
    if missing:
        return (None,) * len(node.next)
    if anomaly._enabled:  # checks saved tensors inside, to explain failures
        outs = anomaly.call_backward(node, grads)
    else:
        if node._freed or node.versions:
            node.check_saved()
        outs = node.backward(*grads)
    if node.post_hooks is not None:
        for hook in node.post_hooks:
            hook(outs, tuple(grads))
    if not retain_graph:
        node.saved = ()
        node._freed = True
        if node._keeps_output:
            node.release()
    return outs


def _add_to_buffer(buffers: dict, node, nr: int, g) -> None:
    if node.n_outputs == 1:
        old = buffers.get(node)
        buffers[node] = g if old is None else old + g
        return
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
    """``var.grad += g``, in place once it exists, as PyTorch's AccumulateGrad does; with
    ``create_graph`` the sum is recorded (``.grad`` then has a graph of its own)."""
    if not create_graph:
        array_mode.accumulate(var, g._data, g._k, stored_arrays)
        return
    if var._hooks:
        for hook in list(var._hooks):
            replaced = hook(g)
            if replaced is not None:
                g = replaced
    if var._grad is not None:
        var._grad = var._grad + g
        return
    data = g._data
    shared = id(data) in stored_arrays or getattr(data, "base", None) is not None
    grad = g.clone() if shared else g  # a later in-place op on .grad must not leak
    stored_arrays.add(id(grad._data))
    var._grad = grad if grad.dtype is var.dtype else grad.to(var.dtype)
