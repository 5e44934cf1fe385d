"""The backward engine: one loop for every pass.

Nodes run newest first (a heap keyed by ``Node.seq``): a node is always newer than its
inputs' nodes, so it runs after every consumer of its outputs has handed over its gradient,
with no walk of the graph to count them beforehand, and no recursion (deep graphs work).

One loop serves ``backward()``, ``autograd.grad``, hooks on nodes and leaves,
``retain_grad``, anomaly mode and graphs that span devices. What differs is the binding of
the gradient ops (see :mod:`plugrad.core.autograd.node`): without ``create_graph``,
gradients are bare arrays and each node's rule runs on its own kernel table (so a graph
across devices needs nothing special); with it, gradients are Tensors and rules run on the
differentiable Tensor ops, recording the graph of the backward pass. Hooks see Tensors in
both: arrays are wrapped only where a hook is called.
"""
from __future__ import annotations

from heapq import heappop, heappush

from plugrad.core import dtypes as _dt
from plugrad.core import tracing
from plugrad.core.autograd import anomaly
from plugrad.core.autograd.grad_ops import to_inputs
from plugrad.core.autograd.node import AccumulateGrad
from plugrad.core.grad_mode import _state
from plugrad.core.tensor import Tensor, _wrap

#: ``tensor_ops_for(kernel_table)`` gives the differentiable Tensor binding of the gradient
#: ops for that table's device type. Set by :mod:`plugrad.core.ops.tensor_ops` (the ops sit
#: above the engine, which must not import them).
tensor_ops_for = None
#: ``link_constants(node, outs)``: see :mod:`plugrad.core.autograd.constant_grads`, which
#: sets it (it sits above the engine)
link_constants = None


def edge_of(t):
    """The graph edge a tensor's gradient flows into, or None if it needs no gradient."""
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._rg:
        edge = t._accum  # a leaf keeps the edge to its accumulator: made once, not per op
        if edge is None:
            edge = t._accum = (AccumulateGrad(t), 0)
        return edge
    return None


def run_backward(tensors, grad_tensors, *, retain_graph: bool, create_graph: bool,
                 inputs=None, accumulate: bool = True):
    """Propagate ``grad_tensors`` (Tensors) from ``tensors`` to the leaves.

    With ``inputs``, return their gradients (Tensors or None); ``accumulate`` says whether
    ``.grad`` is updated (``backward``, only of ``inputs`` when given) or not
    (``autograd.grad``).
    """
    starts = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        edge = edge_of(t)
        if edge is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               f"have a grad_fn")
        starts.append((edge, g if create_graph else g._data))
    targets = None
    if inputs is not None:
        targets = []
        for i, t in enumerate(inputs):
            edge = edge_of(t)
            if edge is None:
                raise RuntimeError(f"input {i} of autograd.grad does not require grad")
            targets.append(edge)
    stored = {id(g) for _, g in starts}  # user-given grads are never stored as-is
    return run(starts, tensor_mode=create_graph, retain_graph=retain_graph, stored=stored,
               targets=targets, accumulate=accumulate,
               into=list(inputs) if inputs is not None and accumulate else None)


def run(starts, *, tensor_mode: bool, retain_graph: bool, stored: set, targets=None,
        accumulate: bool = True, into=None):
    """The loop. ``starts``: ``((node, nr), grad)`` pairs, grads in the pass's binding
    (arrays, or Tensors when ``tensor_mode``). ``targets``: edges whose gradients are
    returned; only nodes leading to them run. ``into``: the tensors whose ``.grad`` a
    ``backward(inputs=...)`` accumulates (None: every leaf).

    A node takes the detailed path (:func:`_run_detailed`: hooks, captures, anomaly
    checks, user rules on Tensors) when it is ``special`` or the pass watches nodes;
    every other node is one rule call on its own kernel table.
    """
    if tracing.recorder is not None:
        tracing.backward_from(edge[0] for edge, _ in starts)
    sinks: dict = {}
    if len(starts) == 1 and starts[0][0][0].n_outputs == 1 \
            and type(starts[0][0][0]) is not AccumulateGrad:
        (node, _), g = starts[0]  # the usual loss.backward()
        buffers = {node: g}
        heap = [(-node.seq, node)]
    else:
        buffers, heap = {}, []
        for (node, nr), g in starts:
            _deposit(node, nr, g, buffers, sinks, heap, tensor_mode)
    watch = None
    needed = None
    if targets is not None or into is not None or anomaly._enabled:
        watch = _Watch(targets, into, starts)
        needed = watch.needed
    previous = _state.enabled
    _state.enabled = tensor_mode
    take, get = buffers.pop, buffers.get
    try:
        while heap:
            node = heappop(heap)[1]
            g = take(node)
            if watch is not None or node.special:
                outs = _run_detailed(node, g, tensor_mode, watch, stored)
            else:
                versions = node.versions
                if versions or node._freed:
                    # the comparisons of check_saved (Node's, and KeepsOutput's of the
                    # output's version) done here: no method call in the usual case,
                    # nothing changed; the method runs to raise, with its message
                    if node._freed:
                        node.check_saved()
                    for t, v in zip(node.saved, versions):
                        if v is not None and t._vc[0] != v:
                            node.check_saved()
                    if node._keeps_output and node.out_data is not None \
                            and node.out_vc[0] != node.out_version:
                        node.check_saved()
                if tensor_mode:
                    F = tensor_ops_for(node.k)
                    outs = node.grad(F, g, *node.saved_tensors())
                    if node.meta is not None:
                        outs = to_inputs(F, outs, node.meta)
                    if node.records_inputs:
                        outs = link_constants(node, outs)
                else:
                    arrays = node.arrays
                    # fixed arity where it is common: a plain call, no argument tuple built
                    n = len(arrays)
                    if n == 2:
                        outs = node.grad(node.k, g, arrays[0], arrays[1])
                    elif n == 0:
                        outs = node.grad(node.k, g)
                    elif n == 1:
                        outs = node.grad(node.k, g, arrays[0])
                    else:
                        outs = node.grad(node.k, g, *arrays)
                    if node.meta is not None:
                        outs = to_inputs(node.k, outs, node.meta)
            if not retain_graph and node.saved:
                node.saved = node.arrays = ()
                node._freed = True
                if node._keeps_output:
                    node.release()
            for e, go in zip(node.next, outs):
                if e is None or go is None:
                    continue
                child = e[0]
                if needed is not None and child not in needed:
                    continue
                if type(child) is AccumulateGrad:  # (type(): no attribute lookup)
                    old = sinks.get(child)
                    sinks[child] = go if old is None else (
                        old + go if tensor_mode else _sink_table(child).add(old, go))
                elif child.n_outputs == 1:
                    old = get(child)
                    if old is None:
                        buffers[child] = go
                        heappush(heap, (-child.seq, child))
                    else:
                        buffers[child] = old + go if tensor_mode else child.k.add(old, go)
                else:
                    _deposit(child, e[1], go, buffers, sinks, heap, tensor_mode)
        for acc, g in sinks.items():
            if watch is not None:
                watch.capture(acc, g)
                if not accumulate or not watch.accumulates(acc):
                    continue
            elif not accumulate:
                continue
            var = acc._variable()  # (AccumulateGrad.variable without the property call)
            if var is None:  # the leaf is gone: nobody can see its gradient
                continue
            if tensor_mode:
                _accumulate_tensor(var, g, stored)
            else:
                accumulate_array(var, g, var._k, stored)
    finally:
        _state.enabled = previous
    return None if watch is None else watch.results(tensor_mode)


class _Watch:
    """What a pass watches besides gradients: the edges ``autograd.grad`` returns (and the
    nodes leading to them, the only ones that need to run), the non-leaf ``inputs`` of
    ``backward(inputs=...)``, and anomaly mode's per-node checks."""

    def __init__(self, targets, into, starts):
        self.targets = targets
        self.at = None
        self.captured = None
        self.needed = None
        if targets is not None:
            self.at = {}
            for i, edge in enumerate(targets):
                self.at.setdefault(edge, []).append(i)
            self.captured = [None] * len(targets)
            self.needed = _leading_to({e[0] for e in targets}, [e[0][0] for e in starts])
        self.into = None if into is None else {edge_of(t)[0]: t for t in into}

    def capture(self, node, g) -> None:
        if self.at is not None:
            _capture(node, g, self.at, self.captured)

    def accumulates(self, acc) -> bool:
        return self.into is None or acc in self.into

    def results(self, tensor_mode):
        if self.captured is None:
            return None
        return [c if c is None or tensor_mode else _as_tensor(c, _edge_table(edge),
                                                                _edge_device(edge))
                for c, edge in zip(self.captured, self.targets)]


def _run_detailed(node, g, tensor_mode, watch, stored):
    """One node with everything a node may need: its hooks (on Tensors), the pass's
    captures and ``backward(inputs=...)`` targets, anomaly checks, a rule on Tensors."""
    if node.pre_hooks is not None:
        g = _run_pre_hooks(node, g, tensor_mode)
    if watch is not None:
        watch.capture(node, g)
        if watch.into is not None:
            t = watch.into.get(node)
            if t is not None:
                _accumulate_non_leaf(t, g, node, tensor_mode, stored)
    if anomaly._enabled:
        outs = anomaly.call_rule(node, g, tensor_mode, _apply, _input_table)
    else:
        if node._freed or node.versions:
            node.check_saved()
        outs = _apply(node, g, tensor_mode)
    if node.post_hooks is not None:
        _run_post_hooks(node, outs, g, tensor_mode)
    return outs


def _sink_table(acc):
    """``acc.k`` (the leaf's table now) without the property's call through C."""
    v = acc._variable()
    return acc._k_made if v is None else v._k


def _deposit(child, nr, g, buffers, sinks, heap, tensor_mode) -> None:
    """Hand gradient ``g`` of output ``nr`` to ``child``, summing with what it has."""
    if type(child) is AccumulateGrad:
        old = sinks.get(child)
        sinks[child] = g if old is None else (
            old + g if tensor_mode else _sink_table(child).add(old, g))
        return
    if child.n_outputs == 1:
        old = buffers.get(child)
        if old is None:
            buffers[child] = g
            heappush(heap, (-child.seq, child))
        else:
            buffers[child] = old + g if tensor_mode else child.k.add(old, g)
        return
    slots = buffers.get(child)
    if slots is None:
        slots = buffers[child] = [None] * child.n_outputs
        heappush(heap, (-child.seq, child))
    old = slots[nr]
    slots[nr] = g if old is None else (old + g if tensor_mode else child.k.add(old, g))


def _apply(node, g, tensor_mode: bool):
    """Run ``node``'s rule in the pass's binding; gradients reduced/cast to the inputs."""
    if node.tensor_rule:
        return _run_tensor_rule(node, g, tensor_mode)
    if tensor_mode:
        F = tensor_ops_for(node.k)
        outs = node.grad(F, g, *node.saved_tensors())
    else:
        F = node.k
        outs = node.grad(F, g, *node.arrays)
    if node.meta is not None:
        outs = to_inputs(F, outs, node.meta)
    if tensor_mode and node.records_inputs:
        outs = link_constants(node, outs)
    return outs


# ---------------------------------------------------------------------- hooks and Tensors
def _as_tensor(data, k, device):
    return _wrap(data, _dt.get_dtype(k.dtype_of(data)), device, k)


def _edge_table(edge):
    node = edge[0]
    return node.k


def _edge_device(edge):
    node = edge[0]
    return node.variable.device if node.__class__ is AccumulateGrad else node.device


def _tensors_of(node, g, tensor_mode):
    """The output gradients of ``node`` as Tensors (a list; None where missing)."""
    grads = [g] if node.n_outputs == 1 else list(g)
    if tensor_mode:
        return grads
    return [None if x is None else _as_tensor(x, node.k, node.device) for x in grads]


def _back(node, grads, tensor_mode):
    if not tensor_mode:
        grads = [None if t is None else t._data for t in grads]
    return grads[0] if node.n_outputs == 1 else grads


def _run_pre_hooks(node, g, tensor_mode):
    tracing.graph_break(f"a hook on {node.name()} ran during backward")
    grads = _tensors_of(node, g, tensor_mode)
    for nr, hooks in list(node.pre_hooks.items()):
        for hook in list(hooks):
            if nr == -1:
                replaced = hook(tuple(grads))
                if replaced is not None:
                    grads = list(replaced)
            elif grads[nr] is not None:
                replaced = hook(grads[nr])
                if replaced is not None:
                    grads[nr] = replaced
    return _back(node, grads, tensor_mode)


def _run_post_hooks(node, outs, g, tensor_mode) -> None:
    tracing.graph_break(f"a hook on {node.name()} ran during backward")
    grads = tuple(_tensors_of(node, g, tensor_mode))
    if tensor_mode:
        ins = tuple(outs)
    else:
        ins = tuple(None if x is None else _as_tensor(x, _input_table(node, i, x),
                                                     _input_device(node, i))
                    for i, x in enumerate(outs))
    for hook in node.post_hooks:
        hook(ins, grads)


def _input_table(node, i, x):
    e = node.next[i] if i < len(node.next) else None
    return e[0].k if e is not None and e[0].k is not None else node.k


def _input_device(node, i):
    e = node.next[i] if i < len(node.next) else None
    if e is None:
        return node.device
    child = e[0]
    return child.variable.device if child.__class__ is AccumulateGrad else child.device


def _run_tensor_rule(node, g, tensor_mode):
    """A rule written as user code on Tensors (``autograd.Function``): Tensors in and out."""
    outs = node.backward(*_tensors_of(node, g, tensor_mode))
    if tensor_mode:
        return outs
    return tuple(None if t is None else t._data for t in outs)


def _capture(node, g, at, captured) -> None:
    if node.n_outputs == 1:
        for i in at.get((node, 0), ()):
            captured[i] = g
        return
    for nr, x in enumerate(g):
        for i in at.get((node, nr), ()):
            captured[i] = x


def _leading_to(target_nodes: set, start_nodes) -> set:
    """The nodes reachable from ``start_nodes`` from which some target node is reachable
    (only these need to run for ``autograd.grad``)."""
    order, seen, stack = [], set(), list(start_nodes)
    while stack:  # iterative DFS, post-order by the seq numbers below
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        for e in node.next:
            if e is not None and e[0] not in seen:
                stack.append(e[0])
    needed = set(target_nodes)
    # children are older (smaller seq) than parents: decide children first
    for node in sorted(order, key=lambda n: n.seq):
        if node in needed:
            continue
        for e in node.next:
            if e is not None and e[0] in needed:
                needed.add(node)
                break
    return needed


# ---------------------------------------------------------------------- accumulation
def accumulate_array(var, g, k, stored: set) -> None:
    """``var.grad += g`` for an array ``g``: in place once ``.grad`` exists (as PyTorch's
    AccumulateGrad does); a first gradient is stored without a copy unless the array may be
    shared (a view, or already stored or given by the caller)."""
    if var._hooks:
        tracing.graph_break("a hook on a leaf tensor ran during backward")
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
        elif id(g) in stored or getattr(g, "base", None) is not None:
            g = k.copy(g)
        stored.add(id(g))
        var._grad = _wrap(g, var.dtype, var.device, k)
    elif grad._rg:  # a .grad that itself records a graph: keep it out of place
        var._grad = grad + _as_tensor(g, k, var.device)
    else:
        if k.dtype_of(g) != grad.dtype.name:
            g = k.astype(g, grad.dtype.name)
        grad._data = grad._k.update_("add", grad._data, g)
        grad._vc[0] += 1


def _accumulate_tensor(var, g, stored: set) -> None:
    """``var.grad += g`` under ``create_graph``: the sum is recorded (``.grad`` then has a
    graph of its own)."""
    if var._hooks:
        for hook in list(var._hooks):
            replaced = hook(g)
            if replaced is not None:
                g = replaced
    if var._grad is not None:
        var._grad = var._grad + g
        return
    data = g._data
    shared = id(data) in stored or getattr(data, "base", None) is not None or \
        g._root is not None
    grad = g.clone() if shared else g  # a later in-place op on .grad must not leak
    stored.add(id(grad._data))
    var._grad = grad if grad.dtype is var.dtype else grad.to(var.dtype)


def _accumulate_non_leaf(t, g, node, tensor_mode, stored) -> None:
    """``backward(inputs=[t])`` for a non-leaf ``t``: its ``.grad`` takes the gradient."""
    if node.__class__ is AccumulateGrad:
        return  # leaves accumulate at the sinks
    if node.n_outputs != 1:
        g = g[t._output_nr]
    if g is None:
        return
    if tensor_mode:
        t._grad = g if t._grad is None else t._grad + g
    else:
        gt = _as_tensor(node.k.copy(g), node.k, t.device)
        t._grad = gt if t._grad is None else t._grad + gt
