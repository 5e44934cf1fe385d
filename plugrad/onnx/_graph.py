"""Building the ONNX graph: names of slots, constants, and sizes computed at run time.

A :class:`Graph` is handed to each kernel's converter (:mod:`plugrad.onnx._ops`,
:mod:`plugrad.onnx._ops_nn`): ``g.value(arg, dtype)`` is the ONNX name of an argument (a
slot, a host constant, a Python scalar rounded to ``dtype`` as the contract's weak scalars
are, or a :class:`~plugrad.onnx._trace.Dyn` size computed from the inputs' shapes),
``g.node(op, inputs, **attrs)`` adds a node, ``g.shape_vector(dims)`` an int64 shape with
the dynamic sizes computed.
"""
from __future__ import annotations

import numpy as np

from plugrad.capture.program import Const, Ref
from plugrad.onnx._trace import Dyn, UnsupportedOperatorError

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64")


def onnx_type(dtype: str) -> int:
    from onnx import TensorProto
    return {"bool": TensorProto.BOOL, "uint8": TensorProto.UINT8, "int8": TensorProto.INT8,
            "int16": TensorProto.INT16, "int32": TensorProto.INT32,
            "int64": TensorProto.INT64, "float16": TensorProto.FLOAT16,
            "bfloat16": TensorProto.BFLOAT16, "float32": TensorProto.FLOAT,
            "float64": TensorProto.DOUBLE}[dtype]


def np_dtype(dtype: str):
    if dtype == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


class Graph:
    """The nodes and initializers being written, and what each slot is called in them."""

    def __init__(self, opset: int, trace, table, sym_sources: dict, read_names: dict):
        self.opset = opset
        self.trace = trace
        self.k = table
        self.sym_sources = sym_sources  # dim name -> (ONNX input name, axis)
        self.read_names = read_names    # slot -> initializer name (for reads)
        self.nodes: list = []
        self.initializers: list = []
        self.names: dict = {}
        self._used: set = set()
        self._cache: dict = {}
        self._count = 0
        self.current = None  # (index, Instr) being converted, for errors
        self.live: set = set()  # the slots that reach an output

    # ------------------------------------------------------------------ naming, nodes
    def fresh(self, hint: str) -> str:
        self._count += 1
        name = f"{hint}_{self._count}"
        self._used.add(name)
        return name

    def node(self, op: str, inputs, n_out: int = 1, **attrs):
        from onnx import helper
        outs = [self.fresh(op) for _ in range(n_out)]
        inputs = list(inputs)
        while inputs and inputs[-1] is None:  # trailing optional inputs left out
            inputs.pop()
        inputs = ["" if i is None else i for i in inputs]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.fresh(f"n_{op}"),
                                           **{k: v for k, v in attrs.items() if v is not None}))
        return outs[0] if n_out == 1 else outs

    def const(self, array: np.ndarray, hint: str = "const", dtype: str | None = None,
              name: str | None = None) -> str:
        from onnx import numpy_helper
        array = np.asarray(array)
        if dtype is not None:
            array = array.astype(np_dtype(dtype))
        if name is not None:
            self.initializers.append(numpy_helper.from_array(array, name))
            return name
        key = (array.dtype.str, array.shape, array.tobytes()) if array.size <= 64 else None
        if key is not None and key in self._cache:
            return self._cache[key]
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(array, name))
        if key is not None:
            self._cache[key] = name
        return name

    def ints(self, values) -> str:
        return self.const(np.asarray(list(values), dtype=np.int64), "ints")

    # ------------------------------------------------------------------ slots
    def value_of(self, slot):
        return self.trace.rec.values[slot]

    def dtype(self, a) -> str:
        if isinstance(a, Ref):
            return self.k.dtype_of(self.value_of(a.slot))
        if isinstance(a, Const):
            c = self.trace.rec.prog.consts[a.index]
            return str(c.dtype) if isinstance(c, np.ndarray) else self.k.dtype_of(c)
        raise TypeError(a)

    def dims(self, a) -> tuple:
        if isinstance(a, Ref):
            return self.trace.dims[a.slot]
        return tuple(np.shape(self.trace.rec.prog.consts[a.index]))

    def static_shape(self, a) -> tuple:
        return tuple(self.value_of(a.slot).shape) if isinstance(a, Ref) else self.dims(a)

    def host(self, array) -> np.ndarray:
        if isinstance(array, np.ndarray):
            return array
        to_numpy = getattr(self.k.to_numpy, "__wrapped__", self.k.to_numpy)
        return np.asarray(to_numpy(array))

    def value(self, a, dtype: str | None = None) -> str:
        """The ONNX name of an argument; scalars become constants of ``dtype``."""
        if isinstance(a, Ref):
            name = self.names.get(a.slot)
            if name is None and a.slot in self.read_names:
                name = self.const(self.host(self.value_of(a.slot)), dtype=self.dtype(a),
                                  name=self.read_names[a.slot])
                self.names[a.slot] = name
            if name is None:
                raise UnsupportedOperatorError(f"plugrad.onnx.export: slot {a.slot} was used "
                                               f"before it was made")
            return name
        if isinstance(a, Const):
            c = self.trace.rec.prog.consts[a.index]
            return self.const(self.host(c), "host", dtype=self.dtype(a))
        if isinstance(a, Dyn):
            return self.dyn_scalar(a, dtype or "int64")
        if dtype is None:
            raise UnsupportedOperatorError(f"plugrad.onnx.export: no dtype for scalar {a!r}")
        return self.const(np.asarray(a).astype(np_dtype(dtype)), "scalar")

    # ------------------------------------------------------------------ dynamic sizes
    def sym(self, name: str) -> str:
        key = ("sym", name)
        if key not in self._cache:
            source, axis = self.sym_sources[name]
            shape = self.node("Shape", [source])
            self._cache[key] = self.node("Gather", [shape, self.ints([axis])], axis=0)
        return self._cache[key]

    def dyn_vector(self, d: Dyn) -> str:
        """An int64 ``[1]`` tensor holding the size ``d`` at run time."""
        if d.inverse or isinstance(d.coef, float) or isinstance(d.offset, float):
            raise UnsupportedOperatorError("plugrad.onnx.export: a fractional size is used "
                                           "as a shape")
        key = ("dyn", d)
        if key not in self._cache:
            v = self.sym(d.syms[0])
            for s in d.syms[1:]:
                v = self.node("Mul", [v, self.sym(s)])
            if d.coef != 1:
                v = self.node("Mul", [v, self.ints([d.coef])])
            if d.offset:
                v = self.node("Add", [v, self.ints([d.offset])])
            self._cache[key] = v
        return self._cache[key]

    def dyn_scalar(self, d: Dyn, dtype: str) -> str:
        """A 0-d tensor of ``dtype`` holding ``d`` (a Python number that follows the sizes)."""
        key = ("dyns", d, dtype)
        if key not in self._cache:
            v = self.sym(d.syms[0])
            for s in d.syms[1:]:
                v = self.node("Mul", [v, self.sym(s)])
            v = self.node("Cast", [self.node("Reshape", [v, self.ints([])])],
                          to=onnx_type(dtype))
            if d.coef != 1:
                v = self.node("Mul", [v, self.value(d.coef, dtype)])
            if d.offset:
                v = self.node("Add", [v, self.value(d.offset, dtype)])
            if d.inverse:
                v = self.node("Reciprocal", [v])
            self._cache[key] = v
        return self._cache[key]

    def shape_vector(self, dims) -> str:
        """An int64 1-D tensor of ``dims`` (ints and :class:`Dyn`)."""
        if not any(isinstance(d, Dyn) for d in dims):
            return self.ints(dims)
        parts, run = [], []
        for d in dims:
            if isinstance(d, Dyn):
                if run:
                    parts.append(self.ints(run))
                    run = []
                parts.append(self.dyn_vector(d))
            else:
                run.append(int(d))
        if run:
            parts.append(self.ints(run))
        return parts[0] if len(parts) == 1 else self.node("Concat", parts, axis=0)

    def reshape(self, x: str, in_dims: tuple, out_dims: tuple) -> str:
        """``x`` reshaped to ``out_dims``; a dynamic size becomes ``0`` (copied from the
        same position of the input) or ``-1`` where that says it, else it is computed."""
        out_dims = tuple(out_dims)
        if tuple(in_dims) == out_dims:
            return x
        zero = any(not isinstance(d, Dyn) and d == 0 for d in out_dims)
        allow = 1 if zero and self.opset >= 14 else None
        if not any(isinstance(d, Dyn) for d in out_dims):
            return self.node("Reshape", [x, self.ints(out_dims)], allowzero=allow)
        if not zero:
            spec = [0 if isinstance(d, Dyn) and i < len(in_dims) and in_dims[i] == d else d
                    for i, d in enumerate(out_dims)]
            left = [i for i, d in enumerate(spec) if isinstance(d, Dyn)]
            if len(left) == 1:
                spec[left[0]] = -1
            if not left or len(left) == 1:
                return self.node("Reshape", [x, self.ints(spec)])
        return self.node("Reshape", [x, self.shape_vector(out_dims)], allowzero=allow)

    # ------------------------------------------------------------------ reductions
    def reduce(self, op: str, x: str, axes, keepdims: bool) -> str:
        """``op`` (ReduceSum, ReduceMax, ...) over ``axes`` (None: all) for this opset."""
        keep = int(bool(keepdims))
        if axes is None:
            return self.node(op, [x], keepdims=keep)
        axes = [int(a) for a in axes]
        if not axes:
            return self.node("Identity", [x])
        if op == "ReduceSum" or self.opset >= 18:
            return self.node(op, [x, self.ints(axes)], keepdims=keep)
        return self.node(op, [x], axes=axes, keepdims=keep)

    def cast(self, x: str, dtype: str) -> str:
        return self.node("Cast", [x], to=onnx_type(dtype))

    def unsupported(self, why: str):
        n, ins = self.current
        origin = self.trace.rec.origins[n] if n < len(self.trace.rec.origins) else ""
        raise UnsupportedOperatorError(f"plugrad.onnx.export: kernel {ins.name!r}{origin} "
                                       f"cannot be exported to ONNX: {why}")
