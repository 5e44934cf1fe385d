"""``plugrad.compile`` for functions: record a call, trust it once it repeats, replay it.

Per guard (:mod:`plugrad.capture.guards`) a cache entry goes through three states:
*recording* (each call runs eagerly and is recorded), *replaying* (two consecutive
recordings were the same program: later calls run the generated replay), or *eager* (the
call cannot be captured -- a graph break -- or did not repeat; the reason is kept for
:meth:`CompiledFunction.explain`). A recording is trusted only once the next call records
the same program because the first call of a step often differs from the rest (optimizer
state made lazily, a cache filled) and because Python numbers or host data that change
from call to call show up as a difference instead of as a wrong replay.
"""
from __future__ import annotations

import functools
from collections import OrderedDict
from dataclasses import dataclass, field

from plugrad.capture import aot, program as _program
from plugrad.capture.buffers import FRESH, reuse_buffers
from plugrad.capture.fold import fold_constants
from plugrad.capture.guards import (call_key, hooked, rebuilder, state_guard, value_of,
                                    watch_list)
from plugrad.capture.recorder import Recorder, tables_in_use
from plugrad.core.autograd import anomaly
from plugrad.core.autograd.node import Node
from plugrad.core.tensor import _wrap

#: Recordings of one guard that may differ before the call is left to eager execution.
MAX_RECORDINGS = 4
#: Guards (shapes, flags, ...) kept per compiled function (least recently used dropped
#: first), as torch's cache size limit.
CACHE_SIZE_LIMIT = 8


class GraphBreakError(RuntimeError):
    """``fullgraph=True`` and the call could not be captured whole."""


@dataclass
class _Entry:
    last: object = None           # the previous recording's Program
    last_signature: object = None
    recordings: int = 0
    replay: object = None         # the generated function, once trusted
    rebuild: object = None
    eager_reason: str | None = None


@dataclass
class CaptureReport:
    """What ``explain()`` returns: how the calls of a compiled function were served."""
    replays: int = 0
    recorded_calls: int = 0
    eager_calls: int = 0
    graphs: int = 0
    break_reasons: list = field(default_factory=list)
    kernels_per_replay: list = field(default_factory=list)
    buffers_reused: int = 0  # kernel calls writing into a dead temporary (all captures)
    constants_folded: int = 0  # kernel calls of literals alone computed once (all captures)

    @property
    def graph_count(self) -> int:
        return self.graphs

    @property
    def graph_break_count(self) -> int:
        return len(self.break_reasons)

    def __str__(self) -> str:
        lines = [f"{self.graphs} captured program(s) ({', '.join(map(str, self.kernels_per_replay)) or '-'} "
                 f"kernel calls each, {self.buffers_reused} into reused buffers, "
                 f"{self.constants_folded} folded into constants); "
                 f"{self.replays} replayed call(s), {self.recorded_calls} "
                 f"recorded, {self.eager_calls} run eagerly"]
        lines += [f"  eager because: {r}" for r in self.break_reasons]
        return "\n".join(lines)


class SpentGraph(Node):
    """``grad_fn`` of a replayed output whose graph a backward inside the call ran through:
    as after an eager ``backward()``, there is nothing left to run."""

    def __init__(self, name):
        self._name = name

    def name(self) -> str:
        return self._name

    def grad(self, F, g):
        raise RuntimeError(
            f"Trying to backward through the graph a second time (in {self._name}): this "
            f"tensor is the output of a replayed call of a compiled function, whose backward "
            f"ran inside the call; its graph is gone.")


def _sizes(meta) -> dict:
    """slot -> bytes of its array at capture (``meta``: slot -> (shape, dtype))."""
    out = {}
    for slot, (shape, dtype) in meta.items():
        n = getattr(dtype, "itemsize", 4)
        for d in shape:
            n *= d
        out[slot] = n
    return out


class CompiledFunction:
    """A function whose calls are captured and replayed (see the module docstring)."""

    def __init__(self, fn, *, fullgraph: bool = False, dynamic=None):
        self.fn = fn
        self.fullgraph = fullgraph
        #: write temporaries' last uses in place (``Backend.inplace_kernels``) and compute
        #: kernel calls of literals alone once; off: the plain replay, kept for comparison
        self.reuse_buffers = True
        #: let each backend rewrite the program (``Backend.compile_program``: the NumPy
        #: backend calls its ufuncs directly); off: the kernels as captured
        self.backend_compile = True
        self.dynamic = dynamic
        self._watched = watch_list(fn)
        self._state = state_guard(self._watched)
        self._entries: OrderedDict = OrderedDict()
        self._evictions = 0
        self._thrashing: str | None = None
        self.report = CaptureReport()
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args, **kwargs):
        tensors: list = []
        key = call_key(args, kwargs, self._state, tensors)
        entry = self._entries.get(key)
        if entry is None:
            if self._thrashing is not None:
                return self._eager(self._thrashing, args, kwargs)
            if len(self._entries) >= CACHE_SIZE_LIMIT:
                self._entries.popitem(last=False)  # the least recently used guard goes
                self._evictions += 1
                if self._evictions > 4 * CACHE_SIZE_LIMIT and \
                        self.report.replays < 2 * self.report.recorded_calls:
                    self._thrashing = (f"the guards (shapes, flags, Python numbers) change on "
                                       f"almost every call: {self._evictions} captures were "
                                       f"dropped from a cache of {CACHE_SIZE_LIMIT}")
                    self.report.break_reasons.append(self._thrashing)
                    return self._eager(self._thrashing, args, kwargs)
            entry = self._entries[key] = _Entry()
        elif len(self._entries) > 1:  # the least recently used goes first when full
            self._entries.move_to_end(key)
        if entry.replay is not None:
            try:
                made = entry.replay(*[t._data for t in tensors]) if tensors else entry.replay()
            except _program.Diverged:
                entry.replay = None
                entry.eager_reason = "a decision on data made inside the call diverged"
                self.report.break_reasons.append(entry.eager_reason)
                raise
            except _program.Stale as stale:
                entry.replay = None
                entry.last = entry.last_signature = None
                entry.recordings = 0
                if f"recaptured: {stale}" not in self.report.break_reasons:
                    self.report.break_reasons.append(f"recaptured: {stale}")
            else:
                self.report.replays += 1
                return entry.rebuild(made)
        if entry.eager_reason is not None:
            self.report.eager_calls += 1
            return self.fn(*args, **kwargs)
        return self._record(entry, args, kwargs, tensors)

    # ------------------------------------------------------------------ recording
    def _record(self, entry, args, kwargs, tensors):
        reason = self._refusal(tensors)
        if reason is not None:
            return self._give_up(entry, reason, self.fn(*args, **kwargs))
        roots = [value_of(e) for e in self._watched] + [args, kwargs]
        rec = Recorder([t._data for t in tensors], tables_in_use(tensors), roots)
        mark = aot.sequence_mark()
        with rec:
            out = self.fn(*args, **kwargs)
        self.report.recorded_calls += 1
        outputs: list = []
        rebuild = rebuilder(out, outputs)
        cut = None
        if rec.broken is None and any(t._rg and id(t.grad_fn) not in rec.spent for t in outputs):
            cut = aot.record_backward(rec, outputs, mark)
            if isinstance(cut, str):
                rec.graph_break(f"an output requires grad and its backward cannot be "
                                f"captured: {cut}")
                cut = None
        prog = rec.finish(outputs, frozenset() if cut is None else cut.exempt) \
            if rec.broken is None else None
        if rec.broken is not None:
            return self._give_up(entry, rec.broken, out)
        signature = _program.signature(prog)
        if cut is not None:
            signature += ((cut.start, tuple(cut.seeds), tuple(cut.grads),
                           tuple(map(id, cut.leaves))),)
        if signature == entry.last_signature:
            metas = [(t.dtype, t.device, t._k, t.grad_fn.name() if t._rg else None)
                     for t in outputs]
            large = _sizes(rec.meta)
            if cut is None:
                entry.replay = _program.build(self._optimised(prog, rec), outputs=metas,
                                              wrap=_wrap, spent=SpentGraph, large=large)
            else:
                parts = aot.split(prog, cut)
                if isinstance(parts, str):
                    return self._give_up(entry, parts, out)
                fwd, bwd = (self._optimised(p, rec) for p in parts)
                entry.replay = aot.replayer(
                    _program.build(fwd, "forward", large=large),
                    _program.build(bwd, "backward", large=large),
                    cut, [m[:3] for m in metas], len(outputs))
            entry.rebuild = rebuild
            entry.last = None
            self.report.graphs += 1
            self.report.kernels_per_replay.append(len(prog))
        else:
            entry.recordings += 1
            if entry.recordings >= MAX_RECORDINGS:
                return self._give_up(entry, "the call does not repeat the same kernel calls: "
                                     + _program.first_difference(entry.last, prog), out)
            entry.last, entry.last_signature = prog, signature
        return out

    def _optimised(self, prog, rec):
        """``prog`` with dead calls dropped, literals folded, temporaries reused in place
        and each backend's own rewriting (``Backend.compile_program``) applied."""
        _program.simplify(prog)
        if self.reuse_buffers:
            self.report.constants_folded += fold_constants(prog, rec.constant, FRESH)
            self.report.buffers_reused += reuse_buffers(prog, rec.inplace_variants(), rec.meta)
        if self.backend_compile:
            meta = rec.meta
            for ins in prog.instrs:
                ins.arg_meta = tuple(meta.get(a.slot) if isinstance(a, _program.Ref) else None
                                     for a in ins.args)
                ins.out_meta = None if isinstance(ins.outs, tuple) else meta.get(ins.outs)
            for backend in rec.backends():
                hook = getattr(backend, "compile_program", None)  # optional
                if hook is not None:
                    prog.instrs = list(hook(prog.instrs))
        return prog

    def _refusal(self, tensors):
        if anomaly._enabled:
            return "anomaly detection is on"
        if any(t._rg for t in tensors):
            return "an argument requires grad (a replay could not give it a .grad)"
        if hooked(self._watched):
            return "a module has forward hooks (a replay would not call them)"
        return None

    def _give_up(self, entry, reason, out):
        entry.eager_reason = reason
        entry.last = entry.last_signature = None
        self.report.break_reasons.append(reason)
        if self.fullgraph:
            raise GraphBreakError(f"plugrad.compile(fullgraph=True): {self._name()} could "
                                  f"not be captured whole: {reason}")
        return out

    def _eager(self, reason, args, kwargs):
        if self.fullgraph:
            raise GraphBreakError(f"plugrad.compile(fullgraph=True): {self._name()}: {reason}")
        self.report.eager_calls += 1
        return self.fn(*args, **kwargs)

    def _name(self) -> str:
        return getattr(self.fn, "__qualname__", None) or type(self.fn).__name__

    # ------------------------------------------------------------------ reporting
    def explain(self) -> CaptureReport:
        """How the calls so far were served, and why any ran eagerly."""
        return self.report

    def replay_source(self) -> list:
        """The generated source of each captured program (for reading, and for tests)."""
        return [e.replay.source for e in self._entries.values() if e.replay is not None]
