"""Recording a model's forward for export, and finding which sizes follow the dynamic axes.

The forward runs under no_grad in eval mode inside a :class:`ExportRecorder` (the capture of
:mod:`plugrad.capture`), which also notes where each kernel call came from (module, source
line, plugrad function) for error messages. With ``dynamic_axes``, the forward is recorded
once more per named axis with that axis one longer (or shorter): an integer in a kernel's
arguments, or a slot's dimension, that changes with it is a :class:`Dyn`, a size computed
from the inputs' shapes at run time (``c * B * T + b``), not a number written in the graph.
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from plugrad.capture.program import Const, Ref, _const_key
from plugrad.capture.recorder import Recorder, tables_in_use, user_location
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops.join import cat, narrow
from plugrad.core.tensor import Tensor

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_EXPORTER = os.path.dirname(os.path.abspath(__file__))
#: Function names of the op-declaration and dispatch machinery, left out of origins.
_PLUMBING = frozenset({"forward", "public", "wrapper", "inner", "method", "dispatch", "call"})
_MODULE_MACHINERY = os.path.join("nn", "modules", "module.py")


class OnnxExporterError(RuntimeError):
    """``torch.onnx.OnnxExporterError``: the model could not be exported."""


class UnsupportedOperatorError(OnnxExporterError):
    """A kernel call of the forward has no ONNX translation."""


@dataclass(frozen=True)
class Dyn:
    """A size known at run time: ``coef * prod(dims of syms) + offset`` (a float for the
    Python numbers derived from sizes, as a mean's ``1 / N``; ``inverse``: ``1 / that``)."""
    coef: object
    syms: tuple
    offset: object = 0
    inverse: bool = False
    value: object = None  # its value in the recording being exported

    def __eq__(self, other):
        return isinstance(other, Dyn) and (self.coef, self.syms, self.offset, self.inverse) == (
            other.coef, other.syms, other.offset, other.inverse)

    def __hash__(self):
        return hash((self.coef, self.syms, self.offset, self.inverse))


@dataclass
class Origin:
    module: str
    location: str
    functions: tuple

    def __str__(self) -> str:
        where = f" in module {self.module}" if self.module else ""
        via = f" (from {' -> '.join(self.functions)})" if self.functions else ""
        return f"{where} at {self.location}{via}"


class ExportRecorder(Recorder):
    """The capture recorder, with the host checks of the forward (an index in range) taken at
    export time only, and the origin of every kernel call noted."""

    def __init__(self, input_arrays, kernel_tables, module_names, roots=()):
        super().__init__(input_arrays, kernel_tables, roots)
        self.origins: list = []
        self._module_names = module_names

    def host_read(self, decide, k, arrays):
        to_numpy = getattr(k.to_numpy, "__wrapped__", k.to_numpy)
        return decide(*[np.asarray(to_numpy(a)) for a in arrays])

    def __enter__(self):
        super().__enter__()
        for table, name, _fn in self._saved:
            setattr(table, name, self._note(getattr(table, name)))
        return self

    def _note(self, recorded):
        def noted(*args, **kwargs):
            before = len(self.prog.instrs)
            out = recorded(*args, **kwargs)
            if len(self.prog.instrs) > before:
                self.origins.append(self._origin())
            return out
        noted.__wrapped__ = getattr(recorded, "__wrapped__", recorded)
        return noted

    def _origin(self) -> Origin:
        module, functions = "", []
        frame = sys._getframe(2)
        while frame is not None:
            path = os.path.abspath(frame.f_code.co_filename)
            if path.startswith(_EXPORTER):
                break
            inside = path.startswith(_PACKAGE)
            if frame.f_code.co_name == "forward" and not module:
                owner = frame.f_locals.get("self")
                name = self._module_names.get(id(owner))
                if name is not None:
                    module = f"{name or '<model>'} ({type(owner).__name__})"
            if inside and not path.endswith(_MODULE_MACHINERY) and "capture" not in path \
                    and not frame.f_code.co_name.startswith(("_", "<")) \
                    and frame.f_code.co_name not in _PLUMBING:
                functions.insert(0, frame.f_code.co_name)
            if not inside and "importlib" not in path:
                break
            frame = frame.f_back
        return Origin(module, user_location(), tuple(functions[:3]))


@dataclass
class Trace:
    rec: ExportRecorder
    outputs: list        # output tensors
    output_slots: list   # their slots (None: a tensor from before the call, see outputs)
    dims: dict           # slot -> tuple of int | Dyn
    args: list           # each instruction's args with Dyn in place of changing ints


def flatten_outputs(out, into: list) -> None:
    if isinstance(out, Tensor):
        into.append(out)
    elif isinstance(out, (tuple, list)):
        for o in out:
            flatten_outputs(o, into)
    elif isinstance(out, dict):
        for o in out.values():
            flatten_outputs(o, into)
    elif out is not None and not isinstance(out, (int, float, bool, str)):
        raise OnnxExporterError(f"plugrad.onnx.export: the model returned a "
                                f"{type(out).__name__}; only tensors (in tuples, lists, dicts) "
                                f"can be graph outputs")


def record(model, args, kwargs, tensors, module_names):
    roots = [model, *args, *kwargs.values()]  # the state the forward reads: its parameters
    rec = ExportRecorder([t._data for t in tensors], tables_in_use(tensors), module_names,
                         roots)
    with no_grad(), rec:
        out = model(*args, **kwargs)
    if rec.broken is not None:
        raise OnnxExporterError(f"plugrad.onnx.export: the forward cannot be written as a "
                                f"graph: {rec.broken}")
    outputs: list = []
    flatten_outputs(out, outputs)
    if not outputs:
        raise OnnxExporterError("plugrad.onnx.export: the model returned no tensor")
    slots = [rec.slot_of.get(id(t._data)) for t in outputs]
    return rec, outputs, slots


# ---------------------------------------------------------------------- dynamic sizes
def perturbed(tensors, members, step):
    """The input tensors with each ``(input index, axis)`` of ``members`` ``step`` longer:
    the first entry repeated (keeps indices valid), or the last ones dropped."""
    out = list(tensors)
    for i, axis in members:
        t = out[i]
        n = t.shape[axis]
        if step > 0:
            out[i] = cat([t] + [narrow(t, axis, 0, 1)] * step, axis)
        else:
            out[i] = narrow(t, axis, 0, n + step).clone()
    return out


def _sizes_fit(base, changed, sym_values, steps):
    """Fit ``v = c * prod(S) + b`` (one symbol: affine; several: a product) to the values of one
    int (or float) across recordings; None when no such form explains them."""
    deps = tuple(s for s in sym_values if changed.get(s, base) != base)
    if not deps:
        return None
    exact = all(isinstance(v, int) for v in [base, *changed.values()])
    num = Fraction if exact else float
    if len(deps) == 1:
        s = deps[0]
        coef = num(changed[s] - base) / steps[s]
        offset = num(base) - coef * sym_values[s]
        if exact and (coef.denominator != 1 or offset.denominator != 1):
            return None
        return Dyn(_plain(coef), deps, _plain(offset), value=base)
    prod = math.prod(sym_values[s] for s in deps)
    coef = num(base) / prod
    for s in deps:
        moved = math.prod(sym_values[t] + (steps[t] if t == s else 0) for t in deps)
        if not _close(coef * moved, changed[s]):
            return None
    return Dyn(_plain(coef), deps, 0, value=base)


def _plain(x):
    if isinstance(x, Fraction):
        return int(x) if x.denominator == 1 else float(x)
    return x


def _close(a, b) -> bool:
    a, b = float(a), float(b)
    if a == b or (math.isnan(a) and math.isnan(b)):
        return True
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def fit(base, changed, sym_values, steps, what):
    dyn = _sizes_fit(base, changed, sym_values, steps)
    if dyn is None and isinstance(base, float) and base != 0:
        inv = _sizes_fit(1 / base, {s: 1 / v for s, v in changed.items() if v}, sym_values,
                         steps)
        if inv is not None:
            dyn = Dyn(inv.coef, inv.syms, inv.offset, inverse=True, value=base)
    if dyn is None:
        raise OnnxExporterError(f"plugrad.onnx.export: {what} changes with the dynamic axes "
                                f"({base} at the export sizes) in a way that is not "
                                f"c * size + b or a product of sizes")
    return dyn


def dynamic_args(base, others, sym_values, steps, origins):
    """Each instruction's arguments with :class:`Dyn` where an int (or float) follows the
    dynamic sizes; raises where anything else in the program changes with them."""
    result = []
    for n, ins in enumerate(base.instrs):
        def where():
            return f"kernel call {n} ({ins.name}){origins[n] if n < len(origins) else ''}"
        for sym, (prog, _) in others.items():
            if n >= len(prog.instrs) or prog.instrs[n].name != ins.name:
                raise OnnxExporterError(
                    f"plugrad.onnx.export: the forward makes different kernel calls when "
                    f"dynamic axis {sym!r} changes size (at {where()}): it cannot be "
                    f"exported with that axis dynamic")

        def walk(a, path, ins=ins, n=n):
            try:
                alts = {s: _at(others[s][0].instrs[n], path, others[s][0]) for s in others}
            except (IndexError, KeyError, TypeError, AttributeError):
                raise OnnxExporterError(f"plugrad.onnx.export: the arguments of {where()} "
                                        f"change form with the dynamic axes") from None
            if isinstance(a, Ref):
                if any(not isinstance(v, Ref) or v.slot != a.slot for v in alts.values()):
                    raise OnnxExporterError(f"plugrad.onnx.export: {where()} reads different "
                                            f"arrays when a dynamic axis changes size")
                return a
            if isinstance(a, (tuple, list)):
                out = [walk(x, path + (i,)) for i, x in enumerate(a)]
                return tuple(out) if isinstance(a, tuple) else out
            if isinstance(a, slice):
                parts = [walk(getattr(a, f), path + (f,)) for f in ("start", "stop", "step")]
                return slice(*parts)
            if isinstance(a, dict):
                return {k: walk(v, path + (k,)) for k, v in a.items()}
            if isinstance(a, (int, float)) and not isinstance(a, bool):
                if all(v == a for v in alts.values()):
                    return a
                return fit(a, alts, sym_values, steps, f"a number in {where()}")
            if isinstance(a, Const):
                mine = _const_key(base.consts[a.index])
                for s, (prog, _) in others.items():
                    v = alts[s]
                    if not isinstance(v, Const) or _const_key(prog.consts[v.index]) != mine:
                        raise OnnxExporterError(
                            f"plugrad.onnx.export: host data given to {where()} changes with "
                            f"dynamic axis {s!r}; it cannot follow the axis in a graph")
                return a
            if any(_const_key(v) != _const_key(a) for v in alts.values()):
                raise OnnxExporterError(f"plugrad.onnx.export: an argument of {where()} "
                                        f"changes with the dynamic axes")
            return a
        result.append(walk(ins.args, ()))
    return result


def _at(ins, path, prog):
    a = ins.args
    for p in path:
        a = getattr(a, p) if isinstance(p, str) and isinstance(a, slice) else a[p]
    return a


def slot_dims(base_values, others, sym_values, steps, shape_of) -> dict:
    """Each array slot's dimensions, a :class:`Dyn` where it follows the dynamic axes."""
    dims = {}
    for slot, v in enumerate(base_values):
        shape = shape_of(v)
        if shape is None:
            continue
        alt_shapes = {s: shape_of(rec.values[slot]) if slot < len(rec.values) else None
                      for s, (_, rec) in others.items()}
        out = []
        for axis, d in enumerate(shape):
            alts = {s: sh[axis] for s, sh in alt_shapes.items()
                    if sh is not None and len(sh) == len(shape)}
            if all(a == d for a in alts.values()):
                out.append(d)
            else:
                dyn = _sizes_fit(d, alts, sym_values, steps)
                out.append(dyn if dyn is not None else d)
        dims[slot] = tuple(out)
    return dims


# ---------------------------------------------------------------------- verification
def evaluate(v, sym_values, sym, delta):
    """``v`` (an int, a float or a :class:`Dyn`) with dimension ``sym`` ``delta`` longer."""
    if not isinstance(v, Dyn):
        return v
    sizes = dict(sym_values)
    sizes[sym] += delta
    value = v.coef * math.prod(sizes[s] for s in v.syms) + v.offset
    return 1 / value if v.inverse else value


def _literals(a, path=()):
    if isinstance(a, (Dyn, int, float)) and not isinstance(a, bool):
        yield path, a
    elif isinstance(a, (tuple, list)):
        for i, x in enumerate(a):
            yield from _literals(x, path + (i,))
    elif isinstance(a, slice):
        for f in ("start", "stop", "step"):
            yield from _literals(getattr(a, f), path + (f,))
    elif isinstance(a, dict):
        for k, x in a.items():
            yield from _literals(x, path + (k,))


def verify(trace_args, dims, checks, sym_values, steps, origins):
    """Each size found against one more recording per axis (that axis ``2 * step`` longer):
    a size that only looked like ``c * size + b`` (``B // 2``) is found out here."""
    for sym, (prog, rec) in checks.items():
        delta = 2 * steps[sym]
        for n, args in enumerate(trace_args):
            if n >= len(prog.instrs):
                break
            for path, v in _literals(args):
                try:
                    actual = _at(prog.instrs[n], path, prog)
                except (IndexError, KeyError, TypeError, AttributeError):
                    actual = None
                if not isinstance(actual, (int, float)) or not _close(
                        evaluate(v, sym_values, sym, delta), actual):
                    where = origins[n] if n < len(origins) else ""
                    raise OnnxExporterError(
                        f"plugrad.onnx.export: a number in kernel call {n} "
                        f"({prog.instrs[n].name}){where} does not follow dynamic axis {sym!r} "
                        f"as c * size + b (or a product of sizes): the graph would be wrong at "
                        f"other sizes")
        for slot, shape in dims.items():
            alt = getattr(rec.values[slot], "shape", None) if slot < len(rec.values) else None
            if alt is None or len(alt) != len(shape):
                continue
            if any(not _close(evaluate(d, sym_values, sym, delta), a)
                   for d, a in zip(shape, alt)):
                raise OnnxExporterError(f"plugrad.onnx.export: an intermediate shape does not "
                                        f"follow dynamic axis {sym!r} as c * size + b")
