"""``torch.onnx``: :func:`export` writes the capture of a model's forward (DESIGN.md,
"Capture and replay") as an ONNX graph, with the ``onnx`` package (``pip install
'plugrad[onnx]'``). See docs/onnx.md for the kernels covered and how dynamic axes work."""
from __future__ import annotations

import os

from plugrad.onnx._trace import OnnxExporterError, UnsupportedOperatorError

__all__ = ["export", "is_in_onnx_export", "ONNXProgram", "OnnxExporterError",
           "UnsupportedOperatorError"]

_exporting = False


def is_in_onnx_export() -> bool:
    """True while :func:`export` runs the model's forward (models branch on it)."""
    return _exporting


class ONNXProgram:
    """What :func:`export` returns (PyTorch's name): the ``onnx.ModelProto`` and ``save``."""

    def __init__(self, model_proto):
        self.model_proto = model_proto

    def save(self, destination, *, external_data: bool | None = None) -> None:
        import onnx
        large = self.model_proto.ByteSize() > 2 ** 31 - 2 ** 20
        if hasattr(destination, "write"):
            destination.write(self.model_proto.SerializeToString())
            return
        path = os.fspath(destination)
        if external_data or (external_data is None and large):
            onnx.save_model(self.model_proto, path, save_as_external_data=True,
                            location=os.path.basename(path) + ".data")
        else:
            onnx.save_model(self.model_proto, path)

    def __repr__(self) -> str:
        g = self.model_proto.graph
        return (f"ONNXProgram({g.name}: {len(g.node)} nodes, inputs "
                f"{[i.name for i in g.input]}, outputs {[o.name for o in g.output]}, opset "
                f"{self.model_proto.opset_import[0].version})")


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=None, operator_export_type=None, do_constant_folding=True,
           custom_opsets=None, export_modules_as_functions=False, autograd_inlining=True):
    """Export ``model``'s forward on ``args`` (a tensor, or a tuple whose last entry may be a
    dict of keyword arguments) as an ONNX model written to ``f`` (a path or a binary file)
    and returned as an :class:`ONNXProgram`. PyTorch's signature; ``dynamic_axes`` (per
    input/output name, a list of axes or ``{axis: name}``) makes those axes symbolic and the
    sizes computed from them follow at run time. The model runs once in eval mode under
    no_grad (its mode is restored), and once more per dynamic axis."""
    global _exporting
    try:
        import onnx  # noqa: F401
    except ImportError as exc:
        raise ImportError("plugrad.onnx.export needs the onnx package: pip install "
                          "'plugrad[onnx]' (or pip install onnx)") from exc
    from plugrad.core.tensor import Tensor
    from plugrad.onnx import _export
    for name, value, default in (("dynamic_shapes", dynamic_shapes, None),
                                 ("custom_translation_table", custom_translation_table, None),
                                 ("custom_opsets", custom_opsets, None),
                                 ("export_modules_as_functions", export_modules_as_functions,
                                  False), ("keep_initializers_as_inputs",
                                           keep_initializers_as_inputs, False),
                                 ("export_params", export_params, True)):
        if value != default:
            raise NotImplementedError(f"plugrad.onnx.export: {name}={value!r} is not "
                                      f"supported (use dynamic_axes for dynamic sizes)")
    mode = getattr(training, "name", training)
    if mode not in (None, "EVAL") and not (mode == "PRESERVE" and not model.training):
        raise NotImplementedError(f"plugrad.onnx.export: training={training} is not "
                                  f"supported: the forward is exported in eval mode")
    opset = _export.DEFAULT_OPSET if opset_version is None else int(opset_version)
    import onnx.defs
    newest = onnx.defs.onnx_opset_version()
    if opset > newest:
        raise ValueError(f"plugrad.onnx.export: opset_version {opset} is newer than the "
                         f"installed onnx package knows ({newest})")
    args, kwargs = _export.split_args(args, kwargs)
    tensors = [a for a in args if isinstance(a, Tensor)]
    tensors += [v for v in kwargs.values() if isinstance(v, Tensor)]
    names = list(input_names or [])
    defaults = _export.default_input_names(model, args, kwargs)
    names += defaults[len(names):len(tensors)]
    if len(names) > len(tensors):
        raise ValueError(f"plugrad.onnx.export: {len(names)} input_names for "
                         f"{len(tensors)} tensor inputs")
    training_mode = getattr(model, "training", None)
    if training_mode is not None:
        model.train(False)
    _exporting = True
    try:
        inputs_spec = {k: v for k, v in (dynamic_axes or {}).items() if k in names}
        trace, symbols = _export.trace_model(model, args, kwargs, tensors, names,
                                             _export.dynamic_spec(inputs_spec, names, []))
        n_out = len(trace.outputs)
        outs = list(output_names or [])
        outs += (["output"] if n_out == 1 else [f"output_{i}" for i in range(n_out)])[len(outs):]
        outs = outs[:n_out]
        spec = _export.dynamic_spec(dynamic_axes, names, outs)
        params = {}
        for getter in ("named_buffers", "named_parameters"):
            if hasattr(model, getter):
                params.update({id(t): n for n, t in getattr(model, getter)()})
        build_opset = max(opset, _export.MIN_OPSET)
        proto = _export.build(model, trace, symbols, names, outs, spec, build_opset, params)
    finally:
        _exporting = False
        if training_mode is not None:
            model.train(training_mode)
    if opset < build_opset:
        proto = _export.convert_down(proto, opset)
    program = ONNXProgram(proto)
    if f is not None:
        program.save(f, external_data=None if external_data else False)
    if verbose:
        import onnx
        print(onnx.helper.printable_graph(proto.graph))
    return program
