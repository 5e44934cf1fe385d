"""Reusing buffers in a captured program: a temporary that nothing reads after a kernel call
becomes that call's output buffer, where the backend has an in-place form of the kernel
(``Backend.inplace_kernels``). The same values in the same order, one allocation fewer
(for large activations, one fewer pass of page faults and memory traffic; a result written
over an operand still in cache, not into fresh memory). A form is ``f(dst, *others)`` for
the first operand's buffer, or ``{position: f}`` with ``f`` called with the kernel's own
arguments, writing into the one at that position (``where(cond, a, b)`` into ``b``)."""
from __future__ import annotations

from plugrad.capture.program import IMPURE, Program, Ref, refs, slot_sets

#: Kernels whose result is a new array (never a view of an argument), for a NumPy-like
#: backend; anything else may return a view and so aliases its arguments.
FRESH = frozenset({"matmul", "add", "sub", "mul", "div", "maximum", "minimum", "neg", "exp",
                   "tanh", "sigmoid", "pow", "where", "sqrt", "log", "gelu", "silu",
                   "softmax", "log_softmax", "layer_norm", "conv2d",
                   "cross_entropy_backward", "lt", "le", "gt", "ge", "eq", "ne"})
#: Where the result equals the kernel with its two operands swapped, bit for bit.
COMMUTATIVE = frozenset({"add", "mul"})


def reuse_buffers(prog: Program, variants: dict, meta: dict) -> int:
    """Rewrite ``prog`` in place; ``variants``: id(kernel function) -> in-place form;
    ``meta``: slot -> (shape, dtype) at capture. Returns how many calls were rewritten."""
    find, union = slot_sets(prog.n_slots)
    owned = set()
    for ins in prog.instrs:
        outs = ins.outs if isinstance(ins.outs, tuple) else (ins.outs,)
        args = list(refs(ins.args)) + list(refs(tuple(ins.kwargs.values())))
        if ins.name in FRESH and ins.name not in IMPURE:
            owned.update(o for o in outs if o is not None)
        elif ins.name == "update_" and len(ins.args) == 3 and isinstance(ins.args[1], Ref) \
                and not isinstance(ins.outs, tuple):
            # written into its destination (a bias added to the product that made it): the
            # result is that array, owned as it was; the value is only read
            union(ins.outs, ins.args[1].slot)
            if ins.args[1].slot in owned:
                owned.add(ins.outs)
        else:  # may be a view of (or the same object as) an argument
            for o in outs:
                if o is not None:
                    for a in args:
                        union(o, a)
    protected = {find(s) for s in prog.inputs + [r.slot for r in prog.reads] + prog.outputs
                 + [w.slot for w in prog.writes] + [c for ch in prog.checks for c in ch.slots]}
    last_use: dict = {}
    for i, ins in enumerate(prog.instrs):
        for s in list(refs(ins.args)) + list(refs(tuple(ins.kwargs.values()))):
            last_use[find(s)] = i
    rewritten = 0
    for i, ins in enumerate(prog.instrs):
        form = variants.get(id(ins.fn))
        if form is None or isinstance(ins.outs, tuple) or ins.kwargs:
            continue
        out_meta = meta.get(ins.outs)
        if isinstance(form, dict):  # {position: form called with the kernel's arguments}
            choices = [(pos, f, False) for pos, f in form.items()]
        else:  # form(dst, *others), dst the first operand (either one where commutative)
            choices = [(pos, form, True) for pos in
                       ((0, 1) if ins.name in COMMUTATIVE and len(ins.args) == 2 else (0,))]
        for pos, fn, first in choices:
            a = ins.args[pos] if pos < len(ins.args) else None
            if not isinstance(a, Ref) or a.slot not in owned:
                continue
            g = find(a.slot)
            if g in protected or last_use.get(g) != i or meta.get(a.slot) != out_meta \
                    or out_meta is None or not out_meta[0] or \
                    getattr(out_meta[1], "kind", "") != "f":
                continue
            others = [x for j, x in enumerate(ins.args) if j != pos]
            if any(find(s) == g for s in refs(others)):
                continue  # the operand is read again in this very call
            if first:
                ins.args = (a, *others)
            ins.fn, ins.name = fn, f"{ins.name}_into"
            uses = max(last_use.get(find(ins.outs), -1), last_use.get(g, -1))
            union(ins.outs, a.slot)
            last_use[find(g)] = uses
            owned.add(ins.outs)
            rewritten += 1
            break
    return rewritten
