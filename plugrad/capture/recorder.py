"""Recording one eager call into a :class:`~plugrad.capture.program.Program`.

While a call runs, every kernel table in use has its kernels wrapped: each call is noted
with its arguments resolved to slots (an array made by an earlier kernel call, an input,
an array read from a tensor that existed before the call) or constants. Nothing else
changes: the call runs eagerly, forward, backward and optimizer update alike, and its
results are the eager ones. What a replay could not repeat -- a value read back to Python,
a shape decided by data, a hook -- marks the recording broken with the reason, and the
rest of the call runs unrecorded.
"""
from __future__ import annotations

import gc
import os
import sys
import weakref

import numpy as np

from plugrad.capture.program import (IMPURE, Check, Const, Instr, Program, Read, Ref,
                                     Write, decision_key)
from plugrad.core import tracing
from plugrad.core.registry import get_registry
from plugrad.core.tensor import Tensor

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LITERALS = (bool, int, float, str, complex, type(None), slice)

#: Kernels whose result's shape depends on the data: a replay could not trust it.
DATA_SHAPED = frozenset({"nonzero"})


def user_location() -> str:
    """``file:line`` of the innermost frame outside plugrad (where the user's code stood)."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_PACKAGE) and "importlib" not in path:
            return f"{os.path.basename(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return "plugrad"


def live_tensors() -> list:
    """Every tensor the collector tracks (garbage in cycles included: callers that would
    act on one confirm with :func:`_held_as_state`, which collects first)."""
    return [o for o in gc.get_objects() if isinstance(o, Tensor)]


def reachable_tensors(roots, lists: bool = True) -> dict:
    """``id -> tensor`` for the state a call reaches through ``roots`` (what it names: its
    arguments, closure, globals): tensors, modules' parameters and buffers, optimizers'
    parameters and state, and of each its ``.grad`` and the base it views. An array of a
    tensor not found here is a constant of the program, compared by value between two
    recordings: a tensor rebound behind the capture's back makes the call not repeat."""
    found: dict = {}

    def add(t):
        while t is not None and id(t) not in found:
            found[id(t)] = t
            if t._grad is not None:
                add(t._grad)
            t = t.__dict__.get("_root") if "_root" in t.__dict__ else None

    def visit(obj, depth):
        if isinstance(obj, Tensor):
            add(obj)
        elif hasattr(obj, "named_modules") and hasattr(obj, "parameters"):
            for p in obj.parameters():
                add(p)
            for b in obj.buffers():
                add(b)
        elif hasattr(obj, "param_groups") and hasattr(obj, "state"):
            for group in obj.param_groups:
                for p in group["params"]:
                    add(p)
            for st in obj.state.values():
                for v in st.values():
                    if isinstance(v, Tensor):
                        add(v)
        elif lists and depth < 2 and isinstance(obj, (list, tuple)) and len(obj) <= 256:
            for o in obj:
                visit(o, depth + 1)
        elif depth < 2 and isinstance(obj, dict) and len(obj) <= 256:
            for o in obj.values():
                visit(o, depth + 1)
        elif depth == 0 and isinstance(getattr(obj, "__dict__", None), dict):
            visit(vars(obj), 1)  # a plain object named by the call: its attributes
    for r in roots:
        visit(r, 0)
    return found


class Recorder:
    """Notes kernel calls while installed (``with recorder:``)."""

    def __init__(self, input_arrays, kernel_tables, roots=()):
        self.prog = Program()
        self.slot_of: dict = {}
        self.values: list = []   # capture-time array of each slot (keeps ids unique)
        self.keep: list = []     # every other object an id was taken of
        self.broken: str | None = None
        self.depth = 0
        self.tables = list(kernel_tables)
        self._saved: list = []
        self.spent: dict = {}    # id -> node: the graphs a backward pass ran through
        self.scalar_slots = 0    # floats made by host_scalars: kernel arguments by identity
        self.constant: set = set()  # slots computed from literals alone (arange(T), full)
        self.roots = list(roots)
        self.before = reachable_tensors(self.roots)
        self.tensor_of = {}
        for t in self.before.values():
            self.tensor_of.setdefault(id(t._data), t)
        for a in input_arrays:
            self.prog.inputs.append(self._new_slot(a))

    # ------------------------------------------------------------------ installation
    def __enter__(self):
        if tracing.recorder is not None:
            raise RuntimeError("plugrad.compile: a compiled function was called while another "
                               "was being captured; nesting is not supported")
        from plugrad.backends.contract import optional_kernels, required_primitives
        names = required_primitives() + optional_kernels()
        for table in self.tables:
            for name in names:
                fn = table.__dict__.get(name)
                if fn is not None:
                    self._saved.append((table, name, fn))
                    setattr(table, name, self._wrap(name, fn))
        tracing.recorder = self
        return self

    def __exit__(self, *exc):
        tracing.recorder = None
        for table, name, fn in self._saved:
            setattr(table, name, fn)
        self._saved_for_variants = self._saved
        self._saved = []
        return False

    def _wrap(self, name, fn):
        def recorded(*args, **kwargs):
            if self.depth or self.broken is not None:
                return fn(*args, **kwargs)
            if name == "to_numpy":
                self.graph_break("a tensor's value was read to Python (.item(), bool(), "
                                 f".tolist(), .numpy() or printing) at {user_location()}")
                return fn(*args, **kwargs)
            if name == "seed":
                self.graph_break(f"the random generator was seeded at {user_location()}")
                return fn(*args, **kwargs)
            if name in DATA_SHAPED:
                self.graph_break(f"{name}: the result's shape depends on the data (at "
                                 f"{user_location()})")
                return fn(*args, **kwargs)
            spec = self._resolve(args)
            kwspec = {k: self._resolve_one(v) for k, v in kwargs.items()}
            self.depth += 1
            try:
                out = fn(*args, **kwargs)
            finally:
                self.depth -= 1
            if isinstance(out, (tuple, list)):
                outs = tuple(None if o is None else self._new_slot(o) for o in out)
            else:
                outs = self._new_slot(out)
            if name not in IMPURE and not name.endswith("_") and _made_of(
                    spec + tuple(kwspec.values()), self.constant):
                self.constant.update(outs if isinstance(outs, tuple) else (outs,))
            self.prog.instrs.append(Instr(name, fn, spec, kwspec, outs))
            return out
        recorded.__wrapped__ = fn
        return recorded

    # ------------------------------------------------------------------ slots
    def _new_slot(self, array) -> int:
        slot = len(self.values)
        self.values.append(array)
        self.slot_of[id(array)] = slot
        return slot

    def _resolve(self, args) -> tuple:
        return tuple(self._resolve_one(a) for a in args)

    def _resolve_one(self, a):
        if a.__class__ in _LITERALS:  # not NumPy's float64 (a float subclass): a result
            if a.__class__ is float and self.scalar_slots and id(a) in self.slot_of:
                return Ref(self.slot_of[id(a)])
            return a
        if isinstance(a, tuple):
            return tuple(self._resolve_one(x) for x in a)
        if isinstance(a, list):
            return [self._resolve_one(x) for x in a]
        if isinstance(a, dict):
            return {k: self._resolve_one(v) for k, v in a.items()}
        slot = self.slot_of.get(id(a))
        if slot is not None:
            return Ref(slot)
        owner = self.tensor_of.get(id(a))
        if owner is not None and owner._data is a:
            slot = self._new_slot(a)
            self.prog.reads.append(Read(weakref.ref(owner), slot, tuple(a.shape), owner._rg,
                                        owner.dtype, owner._k))
            return Ref(slot)
        if isinstance(a, np.ndarray):
            a = a.copy()  # host data as it was at this call (the caller may change it later)
        self.keep.append(a)
        self.prog.consts.append(a)
        return Const(len(self.prog.consts) - 1)

    # ------------------------------------------------------------------ the core's calls
    def graph_break(self, reason: str) -> None:
        if self.broken is None:
            self.broken = reason

    def host_read(self, decide, k, arrays):
        to_numpy = getattr(k.to_numpy, "__wrapped__", k.to_numpy)
        value = decide(*[np.asarray(to_numpy(a)) for a in arrays])
        if self.broken is None:
            slots = []
            for a in arrays:
                ref = self._resolve_one(a)
                if isinstance(ref, Ref) and ref.slot in self.constant:
                    continue  # the same on every call: nothing to check again
                if not isinstance(ref, Ref):
                    self.graph_break("a Python decision was taken on data the capture cannot "
                                     f"follow (at {user_location()})")
                    return value
                slots.append(ref.slot)
            if not slots:
                return value
            check = Check(decide, to_numpy, tuple(slots), value)
            known = set(self.prog.inputs) | {r.slot for r in self.prog.reads}
            if all(s in known for s in slots):
                self.prog.checks.append(check)  # before anything runs: a guard
            else:  # on values made by the call: checked where it stands
                self.prog.instrs.append(Instr("host_check", check, tuple(map(Ref, slots)), {},
                                              None, key=(decision_key(decide), repr(value))))
        return value

    def backward_from(self, nodes) -> None:
        for node in nodes:
            self.spent[id(node)] = node

    def host_scalars(self, compute, k, arrays, key=None) -> tuple:
        to_numpy = None if k is None else getattr(k.to_numpy, "__wrapped__", k.to_numpy)

        def on_host(*arrs):
            return tuple(compute(*[np.asarray(to_numpy(a)) for a in arrs]))
        spec = self._resolve(arrays)
        values = on_host(*arrays)
        if self.broken is None:
            values = tuple(float(v) for v in values)  # fresh objects: matched by identity
            outs = tuple(self._new_slot(v) for v in values)
            self.scalar_slots += len(outs)
            self.prog.instrs.append(Instr("host_scalars", on_host, spec, {}, outs,
                                          key=decision_key(compute) if key is None else key))
        return values

    # ------------------------------------------------------------------ the end
    def finish(self, output_tensors, exempt=frozenset()) -> Program:
        """Close the program: the outputs' slots, and the tensors the call left data in
        (``exempt``: ids of tensors that are neither, such as those an output's graph saves)."""
        prog = self.prog
        for t in output_tensors:
            slot = self.slot_of.get(id(t._data))
            if slot is None:
                owner = self.tensor_of.get(id(t._data))
                if owner is None:
                    self.graph_break("an output's data was not made by the call's kernels")
                    return prog
                slot = self._resolve_one(t._data).slot
            prog.outputs.append(slot)
        before = self.before
        state = reachable_tensors(self.roots, lists=False)  # a list entry is not state
        outputs = {id(t) for t in output_tensors}
        made = set(range(len(self.values))) - set(prog.inputs) - {r.slot for r in prog.reads}
        for collected in (False, True):
            left, unexplained = [], False
            for t in live_tensors():
                slot = self.slot_of.get(id(t._data))
                if slot is None or slot not in made or id(t) in outputs or id(t) in exempt:
                    continue
                existed = id(t) in before
                if not existed and id(t) not in state:
                    if not collected:  # perhaps garbage in a cycle (a graph): collect, look again
                        unexplained = True
                        break
                    if not _held_as_state(t):
                        self.graph_break("a tensor made inside the call outlives it in a list "
                                         "(a replay could not make a new one each call)")
                        return prog
                left.append(Write(weakref.ref(t), slot, existed))
            if not unexplained:
                break
            del t
            gc.collect()
        prog.writes.extend(left)
        prog.writes.sort(key=lambda w: (w.slot, w.existed, id(w.tensor()) if w.existed else 0))
        prog.n_slots = len(self.values)
        self.meta = {i: (tuple(v.shape), getattr(v, "dtype", None)) for i, v in
                     enumerate(self.values) if hasattr(v, "shape")}
        return prog

    def backends(self) -> list:
        """The backends of the kernel tables the recording wrapped (each once)."""
        found: dict = {}
        for table, _, _ in self._saved_for_variants:
            backend = getattr(table, "backend", None)
            if backend is not None:
                found.setdefault(id(backend), backend)
        return list(found.values())

    def inplace_variants(self) -> dict:
        """id(kernel function as captured) -> the backend's in-place form of it."""
        variants = {}
        for table, name, fn in self._saved_for_variants:
            form = table.backend.inplace_kernels().get(name)
            if form is not None:
                variants[id(fn)] = form
        return variants


def _made_of(args, constant: set) -> bool:
    """Whether arguments are literals and constant slots only (no input, read or held
    object): a pure kernel of them gives the same result on every call."""
    for a in args:
        if isinstance(a, Ref):
            if a.slot not in constant:
                return False
        elif isinstance(a, Const):
            return False
        elif isinstance(a, (tuple, list)):
            if not _made_of(a, constant):
                return False
        elif isinstance(a, dict):
            if not _made_of(tuple(a.values()), constant):
                return False
    return True


def _held_as_state(t) -> bool:
    """A tensor made during the call that stays as state: another tensor's ``.grad`` or an
    entry of a dict (a module's buffers, an optimizer's state). The slow path, for tensors
    the call's roots do not reach."""
    gc.collect()
    for ref in gc.get_referrers(t):
        if isinstance(ref, (Tensor, dict)):
            return True
    return False


def tables_in_use(arrays_of_tensors=()) -> list:
    """Every kernel table a call may reach: the registry's, and those of live tensors."""
    tables = {id(t): t for t in get_registry()._tables.values()}
    for t in arrays_of_tensors:
        tables.setdefault(id(t._k), t._k)
    return list(tables.values())
