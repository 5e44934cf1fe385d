"""A captured call as a flat program of kernel calls on bare arrays, and its replay.

Every array the call touched has a *slot*: the call's inputs, the arrays it *read* from
tensors that existed before it (parameters, gradients, optimizer state), and the result of
every kernel call, numbered in the order they appeared. :func:`build` turns a program into
one Python function (generated source, so a replay is nothing but the kernel calls, with
no Tensor, node or dispatch in between); :func:`signature` is what two recordings of the
same step must share before the step is trusted to repeat.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

#: Kernels that change state besides returning a value: never dropped as dead code.
IMPURE = frozenset({"assign", "update_", "uniform", "normal", "seed", "host_check"})


class Stale(Exception):
    """A replay's prologue found the world changed (a read tensor gone or reshaped, a host
    decision different): nothing has run yet, the call goes back to eager execution."""


class Diverged(RuntimeError):
    """A decision on data made inside a replayed call came out otherwise than when it was
    captured: the kernels before it have run, the rest cannot follow a path not captured."""

    def __init__(self):
        super().__init__(
            "plugrad.compile: a decision taken on data computed inside the compiled call came "
            "out differently than when the call was captured, in the middle of a replay (its "
            "effects up to there have happened). Run this function without compile, or keep "
            "such branches out of it.")


def _stale(tensor, requires_grad, shape, dtype=None, kernels=None):
    """Why a tensor the replay reads fails its check (the slow path of the prologue)."""
    if tensor._rg is not requires_grad:
        raise Stale("requires_grad of a tensor the step reads changed")
    if dtype is not None and tensor.dtype is not dtype:
        raise Stale(f"a tensor the step reads changed dtype ({tensor.dtype}, captured {dtype})")
    if kernels is not None and tensor._k is not kernels:
        raise Stale(f"a tensor the step reads moved to another device ({tensor.device})")
    raise Stale(f"a tensor the step reads changed shape ({tuple(tensor._data.shape)}, "
                f"captured {shape})")


@dataclass(frozen=True)
class Ref:
    """A slot in an instruction's arguments."""
    slot: int


@dataclass(frozen=True)
class Const:
    """An object the program holds (an array made before the call, a host array)."""
    index: int


@dataclass
class Instr:
    name: str
    fn: object
    args: tuple
    kwargs: dict
    outs: object  # an int slot, or a tuple of slots / None for a kernel returning a tuple
    key: object = None  # what else identifies the call across recordings (a host function)
    #: ``((exception types, callable), ...)``: where ``fn`` raises one of them, the replay
    #: calls that callable with the same arguments instead (a backend's fast form of a
    #: kernel, :meth:`Backend.compile_program`, falling back to the kernel itself)
    fallback: tuple = ()
    #: ``(shape, dtype)`` of each argument that is a slot (None for the others) and of the
    #: result, as captured: set before :meth:`Backend.compile_program` sees the step
    arg_meta: tuple = ()
    out_meta: object = None


@dataclass
class Read:
    """``slot = tensor._data`` at the start of each replay."""
    tensor: object  # weakref to the Tensor
    slot: int
    shape: tuple
    requires_grad: bool = False
    dtype: object = None    # the tensor's dtype and kernel table when captured: ``p.data = ``
    kernels: object = None  # ``p.data.half()`` or another device keeps the shape, not these


@dataclass
class Check:
    """A host decision (:func:`plugrad.core.tracing.host_read`) taken again on each replay."""
    decide: object
    to_numpy: object
    slots: tuple
    expected: object


@dataclass
class Write:
    """``tensor._data = slot`` at the end of each replay (state the call left in tensors)."""
    tensor: object  # weakref
    slot: int
    existed: bool = True  # the tensor existed before the call (else: made by it, e.g. a .grad)


@dataclass
class Program:
    inputs: list = field(default_factory=list)      # slots of the flattened input arrays
    reads: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    instrs: list = field(default_factory=list)
    writes: list = field(default_factory=list)
    consts: list = field(default_factory=list)
    outputs: list = field(default_factory=list)     # slots of the returned tensors' arrays
    n_slots: int = 0

    def __len__(self) -> int:
        return len(self.instrs)

    def kernel_counts(self) -> dict:
        counts: dict = {}
        for ins in self.instrs:
            counts[ins.name] = counts.get(ins.name, 0) + 1
        return counts


# ---------------------------------------------------------------------- comparison
def _const_key(obj):
    if obj is None or isinstance(obj, (bool, int, str)):
        return (type(obj).__name__, obj)
    if isinstance(obj, float):
        return ("float", repr(obj))
    if isinstance(obj, (tuple, list)):
        return (type(obj).__name__, tuple(_const_key(o) for o in obj))
    if isinstance(obj, slice):
        return ("slice", obj.start, obj.stop, obj.step)
    if isinstance(obj, dict):
        return ("dict", tuple((k, _const_key(v)) for k, v in obj.items()))
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.dtype.str, obj.shape, obj.tobytes())
    if isinstance(obj, (np.generic, np.dtype)):
        return ("np", str(obj), repr(obj))
    if isinstance(obj, (Ref, Const)):
        return obj
    return ("object", id(obj))


def decision_key(decide):
    """A host decision's identity across recordings: its code and the values it closes over."""
    if isinstance(decide, functools.partial):
        return (decision_key(decide.func), _const_key(decide.args),
                _const_key(dict(sorted(decide.keywords.items()))))
    code = getattr(decide, "__code__", None)
    if code is None:
        return ("object", id(decide))
    cells = tuple(_const_key(c.cell_contents) for c in (decide.__closure__ or ()))
    return (code, cells)


def signature(prog: Program, consts_by_value=True) -> tuple:
    """What must be equal between two recordings for the step to be replayable: the same
    kernels on the same slots with the same constants, reading and leaving the same tensors."""
    def arg_key(a):
        if isinstance(a, Const):
            return ("const", _const_key(prog.consts[a.index]))
        return _const_key(a)
    return (
        tuple(prog.inputs),
        tuple((id(r.tensor()), r.slot, r.shape, r.requires_grad) for r in prog.reads),
        tuple((decision_key(c.decide), c.slots, _const_key(c.expected)) for c in prog.checks),
        tuple((i.name, tuple(arg_key(a) for a in i.args),
               tuple((k, arg_key(v)) for k, v in i.kwargs.items()), i.outs, i.key)
              for i in prog.instrs),
        tuple((id(w.tensor()) if w.existed else "made", w.slot) for w in prog.writes),
        tuple(prog.outputs),
    )


def first_difference(a: Program, b: Program) -> str:
    """Where two recordings part: for the report of a step that does not repeat."""
    if len(a.reads) != len(b.reads) or any(
            x.tensor() is not y.tensor() for x, y in zip(a.reads, b.reads)):
        return "the tensors read differ (a tensor made or replaced on each call?)"
    for n, (x, y) in enumerate(zip(a.instrs, b.instrs)):
        if x.name != y.name:
            return f"kernel call {n}: {x.name} then {y.name}"
        xa = signature(Program(instrs=[x], consts=a.consts))[3]
        ya = signature(Program(instrs=[y], consts=b.consts))[3]
        if xa != ya:
            return (f"kernel call {n} ({x.name}): its arguments differ (a Python number or "
                    f"host data that changes from call to call)")
    if len(a.instrs) != len(b.instrs):
        return f"{len(a.instrs)} kernel calls, then {len(b.instrs)}"
    if len(a.writes) != len(b.writes):
        return "the tensors the call leaves state in differ"
    return "the host checks or the outputs differ"


# ---------------------------------------------------------------------- optimisation
def simplify(prog: Program) -> Program:
    """Drop pure kernel calls whose results nothing uses, so a replay does only the work
    that reaches an output, a tensor left behind, or state (in-place kernels, RNG draws)."""
    live = set(prog.outputs) | {w.slot for w in prog.writes}
    kept = []
    for ins in reversed(prog.instrs):
        outs = ins.outs if isinstance(ins.outs, tuple) else (ins.outs,)
        impure = ins.name in IMPURE or ins.name.endswith("_")
        if not impure and not any(o in live for o in outs if o is not None):
            continue
        kept.append(ins)
        live.update(refs(ins.args))
        live.update(refs(tuple(ins.kwargs.values())))
    kept.reverse()
    prog.instrs = kept
    return prog


def slot_sets(n: int):
    """``(find, union)`` over slots ``0..n-1`` (union-find with path halving): which slots
    hold one storage (a view and its base, a buffer and what reuses it)."""
    parent = list(range(n))

    def find(s):
        while parent[s] != s:
            parent[s] = parent[parent[s]]
            s = parent[s]
        return s

    def union(a, b):
        parent[find(a)] = find(b)

    return find, union


def refs(args):
    """The slots an instruction's arguments name, nested tuples, lists and dicts included."""
    for a in args:
        if isinstance(a, Ref):
            yield a.slot
        elif isinstance(a, (tuple, list)):
            yield from refs(a)
        elif isinstance(a, dict):
            yield from refs(tuple(a.values()))


# ---------------------------------------------------------------------- code generation
#: Temporaries of at least this many bytes are deleted after their last use in a replay.
LARGE_BYTES = 1 << 16


def _instruction(ins, bind, expr, env) -> list:
    """The source lines of one kernel call."""
    if ins.name == "host_check":
        c = ins.fn
        d, h, e = bind(c.decide, "D"), bind(c.to_numpy, "H"), bind(c.expected, "E")
        args = ", ".join(f"_asarray({h}(s{s}))" for s in c.slots)
        env["_asarray"], env["Diverged"] = np.asarray, Diverged
        return [f"    if {d}({args}) != {e}: raise Diverged()"]
    k = bind(ins.fn, "K")
    host = ins.name == "from_numpy"
    args = [expr(a, host) for a in ins.args]
    args += [f"{kw}={expr(v)}" for kw, v in ins.kwargs.items()]
    if isinstance(ins.outs, tuple):
        target = ", ".join("_" if o is None else f"s{o}" for o in ins.outs)
        target = target + "," if len(ins.outs) == 1 else target
    else:
        target = f"s{ins.outs}"

    def call(fn):
        return f"{target} = {fn}({', '.join(args)})"
    if not ins.fallback:
        return ["    " + call(k)]
    lines = ["    try:", "        " + call(k)]
    for excs, alt in ins.fallback:
        excs = excs if isinstance(excs, tuple) else (excs,)
        lines += [f"    except ({', '.join(bind(e, 'X') for e in excs)},):",
                  "        " + call(bind(alt, "K"))]
    return lines


def build(prog: Program, name: str = "replay", outputs=None, wrap=None, spent=None,
          large=None):
    """One Python function ``f(*input_arrays) -> tuple of output arrays`` for ``prog``; with
    ``outputs`` (per output ``(dtype, device, kernels, grad_fn name or None)``), a list of
    the output tensors instead, made by ``wrap(array, dtype, device, kernels)`` and given a
    ``spent(name)`` grad_fn where named (in the generated code: no frame per output);
    ``large``: slot -> bytes of its array at capture (:data:`LARGE_BYTES`)."""
    # warnings raised by kernels called from the replay are plugrad's (the NumPy backend
    # filters its floating-point warnings by module name)
    env: dict = {"Stale": Stale, "_copy": np.copy, "__name__": "plugrad.capture.replay"}
    names: dict = {}

    def bind(obj, prefix):
        key = id(obj)
        if key not in names:
            names[key] = f"{prefix}{len(names)}"
            env[names[key]] = obj
        return names[key]

    def expr(a, host_copy=False):
        if isinstance(a, Ref):
            return f"s{a.slot}"
        if isinstance(a, Const):
            const = prog.consts[a.index]
            ref = bind(const, "C")
            return f"_copy({ref})" if host_copy and isinstance(const, np.ndarray) else ref
        if isinstance(a, tuple):
            inner = ", ".join(expr(x) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, list):
            return "[" + ", ".join(expr(x) for x in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {expr(v)}" for k, v in a.items()) + "}"
        if a.__class__ is float and not math.isfinite(a):
            return bind(a, "C")
        if a is None or a.__class__ in (bool, int, float, str):  # not NumPy scalars: bound
            return repr(a)
        if isinstance(a, slice):
            return f"slice({a.start!r}, {a.stop!r}, {a.step!r})"
        return bind(a, "C")

    lines = [f"def {name}({', '.join(f's{i}' for i in prog.inputs)}):"]
    # a read tensor gone: its weakref gives None, whose ._data raises (no test per read)
    read_local: dict = {}
    if prog.reads:
        lines.append("    try:")
        for i, r in enumerate(prog.reads):
            lines += [f"        t{i} = {bind(r.tensor, 'W')}()", f"        s{r.slot} = t{i}._data"]
            if r.tensor() is not None:
                read_local[id(r.tensor())] = f"t{i}"
        lines += ["    except AttributeError:",
                  "        raise Stale('a tensor the step reads is gone') from None"]
        env["_stale"] = _stale
    for i, r in enumerate(prog.reads):
        dt, k = bind(r.dtype, "T"), bind(r.kernels, "K")
        lines.append(f"    if t{i}._rg is not {r.requires_grad!r} or s{r.slot}.shape != "
                     f"{r.shape!r} or t{i}.dtype is not {dt} or t{i}._k is not {k}: "
                     f"_stale(t{i}, {r.requires_grad!r}, {r.shape!r}, {dt}, {k})")
    for c in prog.checks:
        d, h = bind(c.decide, "D"), bind(c.to_numpy, "H")
        e = bind(c.expected, "E")
        args = ", ".join(f"_asarray({h}(s{s}))" for s in c.slots)
        env["_asarray"] = np.asarray
        lines.append(f"    if {d}({args}) != {e}: raise Stale('a decision on the data changed')")
    # a large temporary is let go after its last use (as eager code lets it go), so its
    # memory is reused by the next allocation instead of a fresh one being faulted in
    last_use: dict = {}
    for i, ins in enumerate(prog.instrs):
        for slot in list(refs(ins.args)) + list(refs(tuple(ins.kwargs.values()))):
            last_use[slot] = i
    kept = set(prog.inputs) | {r.slot for r in prog.reads} | set(prog.outputs) | \
        {w.slot for w in prog.writes}
    dying: dict = {}
    for slot, i in last_use.items():
        if slot not in kept and (large or {}).get(slot, 0) >= LARGE_BYTES:
            dying.setdefault(i, []).append(f"s{slot}")
    for i, ins in enumerate(prog.instrs):
        lines += _instruction(ins, bind, expr, env)
        if i in dying:
            lines.append(f"    del {', '.join(sorted(dying[i]))}")
    for wr in prog.writes:
        local = read_local.get(id(wr.tensor())) if wr.tensor() is not None else None
        if local is not None:  # a tensor read above: held since
            lines.append(f"    {local}._data = s{wr.slot}")
            continue
        w = bind(wr.tensor, "W")
        lines += [f"    t = {w}()", f"    if t is not None: t._data = s{wr.slot}"]
    if outputs is None:
        outs = ", ".join(f"s{o}" for o in prog.outputs)
        lines.append(f"    return ({outs}{',' if len(prog.outputs) == 1 else ''})")
    else:
        make, grad_fn = bind(wrap, "O"), bind(spent, "O")
        for i, (slot, (dtype, device, k, node)) in enumerate(zip(prog.outputs, outputs)):
            lines.append(f"    o{i} = {make}(s{slot}, {bind(dtype, 'M')}, {bind(device, 'M')}, "
                         f"{bind(k, 'M')})")
            if node is not None:
                lines += [f"    o{i}._rg = True", f"    o{i}.grad_fn = {grad_fn}({node!r})"]
        lines.append(f"    return [{', '.join(f'o{i}' for i in range(len(prog.outputs)))}]")
    source = "\n".join(lines) + "\n"
    code = compile(source, f"<plugrad.compile {name}>", "exec")
    exec(code, env)  # noqa: S102 - our own generated source
    fn = env[name]
    fn.source = source
    return fn
