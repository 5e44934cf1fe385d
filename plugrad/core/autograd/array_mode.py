"""Backward on bare backend arrays: the engine's fast path for the usual ``loss.backward()``.

When no graph of the backward pass is wanted (``create_graph=False``), gradients need not
be Tensors: a node whose class defines ``backward_arrays(k, g)`` computes its input
gradients straight with the kernel table ``k``, skipping each Tensor op's checks, promotion
and wrapping. Every node keeps its Tensor rule (``backward``) as the reference: a node
without an array rule runs it on wrapped gradients, and tests hold the two rules to the
same results. Hooks on nodes and graphs spanning devices make the caller take the general
path instead; hooks on leaves (DDP's) are run here.

Nodes run newest first (a heap keyed by ``Node.seq``): a node is always newer than its
inputs' nodes, so each runs after all its consumers have delivered, with no walk of the
graph to count them beforehand. Only to *find* hooked or device-spanning nodes is the graph
walked (:func:`needs_general_path`), and only once any node in the process has had a hook
or spanned devices (``node.special_nodes``).
"""
from __future__ import annotations

import contextlib
from heapq import heappop, heappush

from plugrad.core import dtypes as _dt
from plugrad.core.autograd import node as node_module
from plugrad.core.autograd.node import AccumulateGrad

_wrap = None  # plugrad.core.tensor._wrap, bound on first use (tensor imports this package)


def _bind_wrap():
    global _wrap
    from plugrad.core.tensor import _wrap as wrap
    _wrap = wrap
    return wrap


@contextlib.contextmanager
def forced_walk(walk: bool):
    """Make ``loss.backward()`` walk each graph for special nodes first (``walk``) or not,
    for tests of both. Forcing no walk is only right for graphs without hooks."""
    previous, events = node_module.special_nodes, node_module.special_events
    node_module.special_nodes = walk
    try:
        yield
    finally:  # a hook registered meanwhile keeps the walk on
        node_module.special_nodes = previous or node_module.special_events != events


def needs_general_path(root_node) -> bool:
    """Whether a node reachable from ``root_node`` has hooks or spans two devices."""
    seen = {root_node}
    stack = [root_node]
    pop, push, add = stack.pop, stack.append, seen.add
    while stack:
        node = pop()
        if node.pre_hooks is not None or node.post_hooks is not None or node.crosses_devices:
            return True
        for e in node.next:
            if e is not None and e[0] not in seen:
                add(e[0])
                push(e[0])
    return False


def run(root_node, output_nr: int, seed, k, device, retain_graph: bool,
        stored_arrays: set) -> None:
    """Propagate the array ``seed`` (gradient of output ``output_nr`` of ``root_node``) to
    the leaves, accumulating into their ``.grad``; pending nodes wait in a heap, newest
    first, and the leaves' gradients are summed on the way and accumulated at the end.
    Grad mode must be off (the caller's job)."""
    buffers: dict = {}
    _add(buffers, root_node, output_nr, seed, k)
    sinks: dict = {}
    heap = [(-root_node.seq, root_node)]
    take, get, add = buffers.pop, buffers.get, k.add
    while heap:
        node = heappop(heap)[1]
        g = take(node)
        if node._freed or node.versions:
            node.check_saved()
        rule = node.backward_arrays
        if rule is not None and node.n_outputs == 1:
            outs = rule(k, g)
            if outs is None:  # the array rule declined this case
                outs = _tensor_rule(node, g, k, device)
        else:
            outs = _tensor_rule(node, g, k, device)
        if not retain_graph:
            node.saved = ()
            node._freed = True
            if node._keeps_output:
                node.release()
        for e, go in zip(node.next, outs):
            if e is None or go is None:
                continue
            child = e[0]
            if child.__class__ is AccumulateGrad:
                old = sinks.get(child)
                sinks[child] = go if old is None else add(old, go)
            elif child.n_outputs == 1:
                old = get(child)
                if old is None:
                    buffers[child] = go
                    heappush(heap, (-child.seq, child))
                else:
                    buffers[child] = add(old, go)
            else:
                if child not in buffers:
                    heappush(heap, (-child.seq, child))
                _add(buffers, child, e[1], go, k)
    for acc, g in sinks.items():
        accumulate(acc.variable, g, k, stored_arrays)


def _add(buffers: dict, node, nr: int, g, k) -> None:
    if node.n_outputs == 1:
        old = buffers.get(node)
        buffers[node] = g if old is None else k.add(old, g)
        return
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * node.n_outputs
    slots[nr] = g if slots[nr] is None else k.add(slots[nr], g)


def _tensor_rule(node, g, k, device):
    """Run ``node``'s Tensor rule on wrapped gradients; hand back arrays."""
    if node.n_outputs == 1:
        grads = (_as_tensor(g, k, device),)
    else:
        grads = [None if x is None else _as_tensor(x, k, device) for x in g]
    return tuple(None if t is None else t._data for t in node.backward(*grads))


def _as_tensor(data, k, device):
    return (_wrap or _bind_wrap())(data, _dt.get_dtype(k.dtype_of(data)), device, k)


def accumulate(var, g, k, stored_arrays: set) -> None:
    """``var.grad += g`` for an array ``g``: in place once ``.grad`` exists (as PyTorch's
    AccumulateGrad does); a first gradient is stored without a copy unless the array may be
    shared (a view, or already stored or given by the caller)."""
    if var._hooks:
        t = _as_tensor(g, k, var.device)
        for hook in list(var._hooks):
            replaced = hook(t)
            if replaced is not None:
                t = replaced
        g = t._data
    grad = var._grad
    if grad is None:
        if k.dtype_of(g) != var.dtype.name:
            g = k.astype(g, var.dtype.name)
        elif id(g) in stored_arrays or getattr(g, "base", None) is not None:
            g = k.copy(g)
        stored_arrays.add(id(g))
        var._grad = (_wrap or _bind_wrap())(g, var.dtype, var.device, k)
    elif grad._rg:  # a .grad that itself records a graph: keep it out of place
        var._grad = grad + _as_tensor(g, k, var.device)
    else:
        if k.dtype_of(g) != grad.dtype.name:
            g = k.astype(g, grad.dtype.name)
        grad._data = grad._k.update_("add", grad._data, g)
        grad._vc[0] += 1
