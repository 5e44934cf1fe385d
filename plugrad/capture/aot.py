"""Compiled calls whose outputs need a graph: the forward replayed now, the backward later.

``model = torch.compile(model); loss_fn(model(x), y).backward()`` is how most programs use
a compiled module: the call returns tensors that require grad and the backward runs outside
it. While such a call is recorded, its backward is recorded too, from the outputs to the
parameters (``autograd.grad`` with placeholder output gradients, the eager graph kept for the
caller). The recording is then cut in two programs: the *forward* (the kernel calls of the
call, also returning the arrays the backward reads) and the *backward* (from those arrays and
the output gradients to one gradient per parameter). A replay runs the forward and gives its
outputs one ``CompiledFunctionBackward`` node (PyTorch's name) whose rule runs the backward
program; the engine accumulates its gradients into ``.grad`` as for any node.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

from plugrad.capture.program import Program, refs
from plugrad.core.autograd import functional, record as _record
from plugrad.core.autograd.node import AccumulateGrad, Node
from plugrad.core.tensor import Tensor, _wrap

#: Instructions a backward program may not hold: a host decision there would be taken
#: after the forward replay returned, with no eager path left to fall back to.
_DECISIONS = frozenset({"host_check", "host_scalars"})


@dataclass
class Split:
    """Where a recording's backward starts, and what it connects."""
    start: int          # index of the backward's first kernel call
    reads: int          # tensors read before the backward started
    seeds: list         # slots of the placeholder output gradients
    grads: list         # slot of each parameter's gradient
    leaves: list        # the parameters (tensors existing before the call)
    graph_outputs: list  # index, among the call's output tensors, of each one needing a graph
    exempt: set         # ids of tensors alive only through the eager graph (not state)


def sequence_mark() -> int:
    """A node sequence number no node made after this call has (see ``Node.seq``)."""
    return next(_record._sequence)


def record_backward(rec, outputs, mark: int):
    """Record the backward of the ``outputs`` that need a graph, from placeholders of
    their gradients to the leaves the call's graph reaches. Returns a :class:`Split`, or a
    reason why the call cannot be served this way."""
    graph_outputs = [i for i, t in enumerate(outputs) if t._rg]
    if any(id(outputs[i].grad_fn) in rec.spent for i in graph_outputs):
        return "an output's graph was already used by a backward inside the call"
    roots = [outputs[i] for i in graph_outputs]
    if any(t.grad_fn is None for t in roots):
        return "an output is a tensor requiring grad that the call did not compute (a leaf)"
    found = _leaves_and_saved(roots, mark)
    if isinstance(found, str):
        return found
    leaves, exempt = found
    for leaf in leaves:
        if id(leaf) not in rec.before:
            return ("a tensor requiring grad that the call reaches other than through its "
                    "module, optimizer, arguments or closure")
    start, n_reads = len(rec.prog.instrs), len(rec.prog.reads)
    seeds = [_wrap(t._k.full(t._data.shape, 1.0, t.dtype.name, t.device.index), t.dtype,
                   t.device, t._k) for t in roots]
    seed_slots = [rec._new_slot(s._data) for s in seeds]
    with rec:
        grads = functional.grad(roots, leaves, grad_outputs=seeds, retain_graph=True,
                                allow_unused=True)
    if rec.broken is not None:
        reason, rec.broken = rec.broken, None  # reported as the backward's, by the caller
        return f"in its backward, {reason}"
    if any(ins.name in _DECISIONS for ins in rec.prog.instrs[start:]):
        return ("the backward takes a decision on computed data (a replay of it could not "
                "fall back to eager execution)")
    kept = [(leaf, g) for leaf, g in zip(leaves, grads) if g is not None]
    grad_slots = []
    for _, g in kept:
        slot = rec.slot_of.get(id(g._data))
        if slot is None:
            return "a parameter's gradient was not made by the backward's kernels"
        grad_slots.append(slot)
    exempt.update(id(t) for t in seeds)
    exempt.update(id(g) for _, g in kept)
    return Split(start, n_reads, seed_slots, grad_slots, [leaf for leaf, _ in kept],
                 graph_outputs, exempt)


def _leaves_and_saved(roots, mark: int):
    """The leaves the call's part of the graph ends in, and the ids of the tensors its
    nodes save; a reason instead where that graph continues into one made before the call."""
    leaves, seen_leaf, exempt = [], set(), set()
    stack, seen = [t.grad_fn for t in roots], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for s in node.saved:
            if isinstance(s, Tensor):
                exempt.add(id(s))
        for edge in node.next:
            if edge is None:
                continue
            child = edge[0]
            if child.__class__ is AccumulateGrad:
                leaf = child.variable
                if leaf is not None and id(leaf) not in seen_leaf:
                    seen_leaf.add(id(leaf))
                    leaves.append(leaf)
            elif child.seq <= mark:
                return ("an output's graph continues into a graph made before the call "
                        "(a tensor computed outside it, requiring grad)")
            else:
                stack.append(child)
    return leaves, exempt


def split(prog: Program, cut: Split) -> tuple:
    """The recording as a forward program (returning its outputs, then what the backward
    reads) and a backward program (``(*saved, *output gradients) -> gradients``); the slots
    saved; or a reason why it cannot be cut."""
    bwd_instrs = prog.instrs[cut.start:]
    made = set(cut.seeds) | {r.slot for r in prog.reads[cut.reads:]}
    needed: set = set()
    for ins in bwd_instrs:
        for s in list(refs(ins.args)) + list(refs(tuple(ins.kwargs.values()))):
            if s not in made:
                needed.add(s)
        outs = ins.outs if isinstance(ins.outs, tuple) else (ins.outs,)
        made.update(o for o in outs if o is not None)
    needed.update(s for s in cut.grads if s not in made)
    if any(w.slot in made for w in prog.writes):
        return "the backward leaves state in a tensor"
    saved = sorted(needed)
    fwd = Program(inputs=list(prog.inputs), reads=prog.reads[:cut.reads], checks=prog.checks,
                  instrs=prog.instrs[:cut.start], writes=prog.writes, consts=prog.consts,
                  outputs=list(prog.outputs) + saved, n_slots=prog.n_slots)
    bwd = Program(inputs=saved + list(cut.seeds), reads=prog.reads[cut.reads:], checks=[],
                  instrs=bwd_instrs, writes=[], consts=prog.consts, outputs=list(cut.grads),
                  n_slots=prog.n_slots)
    return fwd, bwd


class CompiledFunctionBackward(Node):
    """The backward of a replayed compiled call: its captured backward program, run on the
    arrays the forward replay saved and the gradients of the call's outputs."""

    def __init__(self, backward, saved_arrays, out_meta):
        self.backward = backward
        self.arrays = tuple(saved_arrays)
        self.out_meta = out_meta  # per output needing a graph: (shape, dtype name, index)
        self.n_outputs = len(out_meta)

    def grad(self, F, g, *saved):
        gs = [g] if self.n_outputs == 1 else list(g)
        for i, gi in enumerate(gs):
            if gi is None:
                shape, dtype, index = self.out_meta[i]
                gs[i] = self.k.full(shape, 0.0, dtype, index)
        return tuple(self.backward(*saved, *gs))

    def saved_tensors(self):
        raise RuntimeError(
            "plugrad.compile: a second-order gradient (create_graph=True) through the output "
            "of a replayed compiled call is not supported: its backward is a captured program "
            "of kernel calls, not a graph. Call the function without plugrad.compile there.")


def replayer(forward, backward, cut: Split, metas: list, n_outputs: int):
    """``run(*input_arrays) -> output tensors``: the forward replay, its outputs needing a
    graph joined to one :class:`CompiledFunctionBackward` with edges to the leaves."""
    leaves = [weakref.ref(t) for t in cut.leaves]
    graph_outputs = cut.graph_outputs
    out_meta = [(metas[i][0].name, metas[i][1].index) for i in graph_outputs]

    def run(*inputs):
        arrays = forward(*inputs)
        outs = [_wrap(a, dt, dev, k) for a, (dt, dev, k) in zip(arrays[:n_outputs], metas)]
        tensors = [ref() for ref in leaves]
        node = CompiledFunctionBackward(
            backward, arrays[n_outputs:],
            [(tuple(outs[i]._data.shape),) + m for i, m in zip(graph_outputs, out_meta)])
        first = outs[graph_outputs[0]]
        _record.record(first, node, tensors)
        node.saved, node.versions = tuple(tensors), tuple(t._vc[0] for t in tensors)
        for nr, i in enumerate(graph_outputs[1:], 1):
            t = outs[i]
            t.grad_fn, t._rg, t._output_nr = node, True, nr
        return outs
    run.source = forward.source + backward.source
    return run
