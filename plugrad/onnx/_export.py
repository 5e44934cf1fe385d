"""``plugrad.onnx.export``: the capture of a model's forward written as an ONNX model.

Steps: record the forward (:mod:`plugrad.onnx._trace`), once more per dynamic axis to tell
sizes that follow it; name the slots (inputs by ``input_names``, parameters and buffers by
``named_parameters()``/``named_buffers()``); convert the kernel calls that reach an output
(:mod:`plugrad.onnx._ops`); check the model with ``onnx.checker`` (full check: strict
shape inference too).
"""
from __future__ import annotations

import functools
import inspect
import warnings

from plugrad.capture.program import refs
from plugrad.core.tensor import Tensor
from plugrad.onnx import _trace
from plugrad.onnx._graph import Graph, onnx_type
from plugrad.onnx._trace import Dyn, OnnxExporterError, UnsupportedOperatorError

DEFAULT_OPSET = 17
MIN_OPSET = 13


def split_args(args, kwargs):
    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    if kwargs is None and args and isinstance(args[-1], dict):
        args, kwargs = args[:-1], args[-1]  # PyTorch's convention: a trailing dict is kwargs
    return args, dict(kwargs or {})


def default_input_names(model, args, kwargs) -> list:
    try:
        params = list(inspect.signature(model.forward if hasattr(model, "forward")
                                        else model).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            names.append(params[i] if i < len(params) else f"input_{i}")
    names += [k for k, v in kwargs.items() if isinstance(v, Tensor)]
    return names


def dynamic_spec(dynamic_axes, input_names, output_names) -> dict:
    """``{name: {axis: dim_name}}`` from PyTorch's two forms (a list gets generated names)."""
    spec = {}
    for name, axes in (dynamic_axes or {}).items():
        if name not in input_names and name not in output_names:
            warnings.warn(f"Provided key {name} for dynamic axes is not a valid input/output "
                          f"name", stacklevel=3)
            continue
        if isinstance(axes, dict):
            spec[name] = {int(a): str(d) for a, d in axes.items()}
        else:
            spec[name] = {int(a): f"{name}_dynamic_axes_{j + 1}" for j, a in enumerate(axes)}
    return spec


def live_slots(prog, outputs) -> set:
    live = set(outputs)
    for ins in reversed(prog.instrs):
        outs = ins.outs if isinstance(ins.outs, tuple) else (ins.outs,)
        if any(o in live for o in outs if o is not None):
            live.update(refs(ins.args))
    return live


def trace_model(model, args, kwargs, tensors, names, spec):
    module_names = {}
    if hasattr(model, "named_modules"):
        module_names = {id(m): n for n, m in model.named_modules()}
    rec, outputs, slots = _trace.record(model, args, kwargs, tensors, module_names)
    symbols: dict = {}
    for i, name in enumerate(names):
        for axis, dim in spec.get(name, {}).items():
            if axis >= tensors[i].ndim:
                raise ValueError(f"plugrad.onnx.export: dynamic axis {axis} of input {name!r} "
                                 f"is out of range for its shape {tuple(tensors[i].shape)}")
            symbols.setdefault(dim, []).append((i, axis))
    sym_values = {s: tensors[m[0][0]].shape[m[0][1]] for s, m in symbols.items()}
    others, steps, checks = {}, {}, {}
    for sym, members in symbols.items():
        sizes = {tensors[i].shape[a] for i, a in members}
        if len(sizes) != 1:
            raise ValueError(f"plugrad.onnx.export: the axes named {sym!r} have different "
                             f"sizes {sorted(sizes)}")
        failure = None
        for step in (1, -1):
            if step < 0 and sym_values[sym] < 2:
                continue
            try:
                others[sym] = _record_moved(model, args, kwargs, tensors, members, step)
            except Exception as exc:  # noqa: BLE001 - the forward refused that size
                failure = exc
                continue
            steps[sym] = step
            if sym_values[sym] + 2 * step >= 1:
                try:
                    checks[sym] = _record_moved(model, args, kwargs, tensors, members, 2 * step)
                except Exception:  # noqa: BLE001,S110 - that size too far: fewer checks
                    pass
            break
        else:
            raise OnnxExporterError(f"plugrad.onnx.export: the forward does not run with "
                                    f"dynamic axis {sym!r} of another size, so it cannot be "
                                    f"exported dynamic: {failure}") from failure
    for sym, (prog, _) in [*others.items(), *checks.items()]:
        if len(prog.instrs) != len(rec.prog.instrs):
            raise OnnxExporterError(f"plugrad.onnx.export: the forward makes "
                                    f"{len(rec.prog.instrs)} kernel calls at the export sizes "
                                    f"and {len(prog.instrs)} when axis {sym!r} changes size: "
                                    f"it cannot be exported with that axis dynamic")
    dyn_args = _trace.dynamic_args(rec.prog, others, sym_values, steps, rec.origins)

    def shape_of(v):
        shape = getattr(v, "shape", None)
        return tuple(shape) if shape is not None and not isinstance(v, float) else None
    dims = _trace.slot_dims(rec.values, others, sym_values, steps, shape_of)
    _trace.verify(dyn_args, dims, checks, sym_values, steps, rec.origins)
    return _trace.Trace(rec, outputs, slots, dims, dyn_args), symbols


def _record_moved(model, args, kwargs, tensors, members, step):
    moved = _trace.perturbed(tensors, members, step)
    alt_args, alt_kwargs = _substitute(args, kwargs, tensors, moved)
    alt = _trace.record(model, alt_args, alt_kwargs, moved, {})[0]
    return alt.prog, alt


def _substitute(args, kwargs, old, new):
    swap = {id(o): n for o, n in zip(old, new)}
    args = tuple(swap.get(id(a), a) for a in args)
    kwargs = {k: swap.get(id(v), v) for k, v in kwargs.items()}
    return args, kwargs


def build(model, trace, symbols, names, out_names, spec, opset, param_names):
    import onnx
    from onnx import helper
    rec, prog = trace.rec, trace.rec.prog
    sym_sources = {s: (names[m[0][0]], m[0][1]) for s, m in symbols.items()}
    read_names, used = {}, set(names)
    for n, r in enumerate(prog.reads):
        name = param_names.get(id(r.tensor()), f"_tensor_{n}")
        while name in used:
            name += "_"
        used.add(name)
        read_names[r.slot] = name
    table = rec.tables[0] if rec.tables else None
    for t in trace.outputs:
        table = t._k
        break
    g = Graph(opset, trace, table, sym_sources, read_names)
    for slot, name in zip(prog.inputs, names):
        g.names[slot] = name
    from plugrad.onnx._ops import CONVERTERS
    for slot, t in zip(trace.output_slots, trace.outputs):
        if slot is None:
            raise OnnxExporterError("plugrad.onnx.export: the model returned a tensor it did not "
                                    "compute (a parameter or buffer as it is); return a copy")
    live = live_slots(prog, trace.output_slots)
    g.live = live
    for n, ins in enumerate(prog.instrs):
        outs = ins.outs if isinstance(ins.outs, tuple) else (ins.outs,)
        if not any(o in live for o in outs if o is not None):
            continue
        g.current = (n, ins)
        convert = CONVERTERS.get(ins.name)
        if convert is None:
            g.unsupported("it has no ONNX translation")
        result = convert(g, _positional(ins.name, trace.args[n], ins.kwargs), ins)
        results = result if isinstance(result, tuple) else (result,)
        for o, r in zip(outs, results):
            if o is not None and r is not None:
                g.names[o] = r
    inputs = []
    for slot, name, i in zip(prog.inputs, names, range(len(names))):
        dims = [spec.get(name, {}).get(a, d) for a, d in enumerate(trace.dims[slot])]
        inputs.append(helper.make_tensor_value_info(name, onnx_type(g.dtype(_ref(slot))),
                                                    dims))
    outputs = []
    for slot, name in zip(trace.output_slots, out_names):
        node_in = g.value(_ref(slot))
        g.nodes.append(helper.make_node("Identity", [node_in], [name], name=f"output_{name}"))
        dims = []
        for a, d in enumerate(trace.dims[slot]):
            named = spec.get(name, {}).get(a)
            if named is None and isinstance(d, Dyn):
                single = len(d.syms) == 1 and d.coef == 1 and d.offset == 0 and not d.inverse
                named = d.syms[0] if single else f"{name}_dim_{a}"
            dims.append(named if named is not None else d)
        outputs.append(helper.make_tensor_value_info(name, onnx_type(g.dtype(_ref(slot))),
                                                     dims))
    graph = helper.make_graph(g.nodes, type(model).__name__, inputs, outputs,
                              initializer=g.initializers)
    opsets = [helper.make_opsetid("", opset)]
    model_proto = helper.make_model(graph, opset_imports=opsets, producer_name="plugrad")
    model_proto.ir_version = min(model_proto.ir_version, helper.find_min_ir_version_for(opsets))
    try:
        onnx.checker.check_model(model_proto, full_check=True)
    except onnx.checker.ValidationError as exc:
        raise OnnxExporterError(f"plugrad.onnx.export: the written graph does not pass "
                                f"onnx.checker (a plugrad bug, please report it): {exc}") from exc
    return model_proto


@functools.lru_cache(maxsize=None)
def _signature(name):
    from plugrad.backends.contract import Backend
    return inspect.signature(getattr(Backend, name))


def _positional(name, args, kwargs) -> tuple:
    """A kernel call's arguments in the contract's order, defaults filled in."""
    bound = _signature(name).bind(None, *args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.arguments.values())[1:]


def convert_down(proto, opset: int):
    """The model written for opset 13, converted down by onnx's version converter; where it
    cannot, the opset 13 model stays, with a warning (as PyTorch's exporter keeps its own)."""
    import onnx
    from onnx import version_converter
    try:
        converted = version_converter.convert_version(proto, opset)
        onnx.checker.check_model(converted, full_check=True)
    except Exception as exc:  # noqa: BLE001 - the converter's errors are of many kinds
        warnings.warn(f"plugrad.onnx.export: onnx's version converter could not take the "
                      f"graph down to opset {opset} ({str(exc).splitlines()[0][:200]}); it is "
                      f"saved at opset {MIN_OPSET}", stacklevel=3)
        return proto
    return converted


def _ref(slot):
    from plugrad.capture.program import Ref
    return Ref(slot)


__all__ = ["OnnxExporterError", "UnsupportedOperatorError", "DEFAULT_OPSET", "MIN_OPSET"]
