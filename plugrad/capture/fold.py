"""Constant folding of a captured program: a kernel call whose arguments are literals and
earlier such results only (the backward seed ``full((), 1.0)`` and its broadcast, an
``arange(T)``) gives the same array on every replay, so it is computed once, when the
program is trusted, and held as a constant. Only where nothing could change that array
afterwards: no kernel call writes into it (or into a view of it), and it is not an output
or left in a tensor (where the user could write into it)."""
from __future__ import annotations

from plugrad.capture.program import IMPURE, Const, Program, Ref, refs, slot_sets


def _impure(ins) -> bool:
    return ins.name in IMPURE or ins.name.endswith("_") or ins.name.endswith("_into")


def fold_constants(prog: Program, constant: set, fresh: frozenset) -> int:
    """Rewrite ``prog`` in place; ``constant``: the slots the recorder found made of literals
    alone; ``fresh``: kernels whose result is never a view of an argument. Returns how many
    kernel calls were folded away."""
    if not constant:
        return 0
    find, union = slot_sets(prog.n_slots)
    for ins in prog.instrs:  # a result that may be a view shares its arguments' fate
        if ins.name in fresh:
            continue
        outs = ins.outs if isinstance(ins.outs, tuple) else (ins.outs,)
        for o in outs:
            if o is not None:
                for a in list(refs(ins.args)) + list(refs(tuple(ins.kwargs.values()))):
                    union(o, a)
    unsafe = {find(s) for s in prog.outputs + [w.slot for w in prog.writes]}
    for ins in prog.instrs:
        if _impure(ins):
            unsafe.update(find(s) for s in refs(ins.args))
            unsafe.update(find(s) for s in refs(tuple(ins.kwargs.values())))

    values: dict = {}
    kept = []
    for ins in prog.instrs:
        if isinstance(ins.outs, int) and ins.outs in constant and not _impure(ins) \
                and find(ins.outs) not in unsafe and all(s in values for s in refs(ins.args)) \
                and all(s in values for s in refs(tuple(ins.kwargs.values()))):
            args = _substitute(ins.args, values)
            kwargs = {k: _substitute((v,), values)[0] for k, v in ins.kwargs.items()}
            values[ins.outs] = ins.fn(*args, **kwargs)  # the same kernel, once
            continue
        kept.append(ins)
    if not values:
        return 0
    index: dict = {}
    for ins in kept:
        ins.args = _to_consts(ins.args, values, index, prog)
        ins.kwargs = {k: _to_consts((v,), values, index, prog)[0] for k, v in ins.kwargs.items()}
    folded = len(prog.instrs) - len(kept)
    prog.instrs = kept
    return folded


def _substitute(args, values):
    out = []
    for a in args:
        if isinstance(a, Ref):
            out.append(values[a.slot])
        elif isinstance(a, tuple):
            out.append(tuple(_substitute(a, values)))
        elif isinstance(a, list):
            out.append(list(_substitute(a, values)))
        elif isinstance(a, dict):
            out.append(dict(zip(a, _substitute(tuple(a.values()), values))))
        else:
            out.append(a)
    return tuple(out)


def _to_consts(args, values, index, prog):
    out = []
    for a in args:
        if isinstance(a, Ref) and a.slot in values:
            if a.slot not in index:
                prog.consts.append(values[a.slot])
                index[a.slot] = Const(len(prog.consts) - 1)
            out.append(index[a.slot])
        elif isinstance(a, tuple):
            out.append(tuple(_to_consts(a, values, index, prog)))
        elif isinstance(a, list):
            out.append(list(_to_consts(a, values, index, prog)))
        elif isinstance(a, dict):
            out.append(dict(zip(a, _to_consts(tuple(a.values()), values, index, prog))))
        else:
            out.append(a)
    return tuple(out)
