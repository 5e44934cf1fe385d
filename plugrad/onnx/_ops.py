"""Kernel -> ONNX node(s): the primitives and optional kernels of the backend contract
(elementwise math, comparisons, reductions, movement, indexing, creation, casts).

Each converter ``fn(g, args, ins)`` gets the :class:`~plugrad.onnx._graph.Graph`, the
kernel call's arguments (slots as ``Ref``, sizes that follow a dynamic axis as ``Dyn``) and
the instruction, and returns the ONNX name of each result, in the order and meaning the
contract's docstring gives the kernel (``plugrad/backends/contract*.py``).
"""
from __future__ import annotations

import numpy as np

from plugrad.capture.program import Const, Ref
from plugrad.onnx._trace import Dyn

CONVERTERS: dict = {}

_UNARY = {"neg": "Neg", "abs": "Abs", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
          "sin": "Sin", "cos": "Cos", "tanh": "Tanh", "floor": "Floor", "round": "Round",
          "logical_not": "Not", "ceil": "Ceil", "sign": "Sign", "isnan": "IsNaN",
          "sigmoid": "Sigmoid", "erf": "Erf", "asin": "Asin", "acos": "Acos", "atan": "Atan",
          "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh",
          "atanh": "Atanh", "copy": "Identity"}
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
           "eq": "Equal", "lt": "Less", "gt": "Greater", "le": "LessOrEqual",
           "ge": "GreaterOrEqual", "logical_and": "And", "logical_or": "Or",
           "logical_xor": "Xor", "maximum": "Max", "minimum": "Min"}
_BITWISE = {"bitwise_and": "BitwiseAnd", "bitwise_or": "BitwiseOr",
            "bitwise_xor": "BitwiseXor"}
_INT64_MIN = np.iinfo(np.int64).min


def converts(*names):
    def register(fn):
        for name in names:
            CONVERTERS[name] = fn
        return fn
    return register


def array_dtype(g, *args) -> str:
    """The dtype of the first array among ``args`` (a weak scalar takes it)."""
    for a in args:
        if isinstance(a, (Ref, Const)):
            return g.dtype(a)
    raise ValueError("no array argument")


def operands(g, *args):
    dt = array_dtype(g, *args)
    return dt, [g.value(a, dt) for a in args]


# ---------------------------------------------------------------------- elementwise
def _unary(op):
    def convert(g, args, ins):
        if op == "Abs" and g.dtype(args[0]) == "bool":
            return g.node("Identity", [g.value(args[0])])
        return g.node(op, [g.value(args[0])])
    return convert


def _binary(op):
    def convert(g, args, ins):
        _, (a, b) = operands(g, *args)
        return g.node(op, [a, b])
    return convert


for _name, _op in _UNARY.items():
    CONVERTERS[_name] = _unary(_op)
for _name, _op in _BINARY.items():
    CONVERTERS[_name] = _binary(_op)


@converts("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")
def _bitwise(g, args, ins):
    dt, names = operands(g, *args)
    if dt == "bool":
        op = {"bitwise_and": "And", "bitwise_or": "Or", "bitwise_xor": "Xor",
              "bitwise_not": "Not"}[ins.name]
        return g.node(op, names)
    if g.opset < 18:
        g.unsupported("bitwise operations on integers need opset 18")
    return g.node(_BITWISE.get(ins.name, "BitwiseNot"), names)


@converts("ne")
def _ne(g, args, ins):
    _, (a, b) = operands(g, *args)
    return g.node("Not", [g.node("Equal", [a, b])])


@converts("log1p", "expm1", "erfc")
def _shifted(g, args, ins):
    dt, (x,) = operands(g, *args)
    one = g.value(1, dt)
    if ins.name == "log1p":
        return g.node("Log", [g.node("Add", [x, one])])
    if ins.name == "expm1":
        return g.node("Sub", [g.node("Exp", [x]), one])
    return g.node("Sub", [one, g.node("Erf", [x])])


@converts("floordiv")
def _floordiv(g, args, ins):
    dt, (a, b) = operands(g, *args)
    if dt.startswith(("float", "bfloat")):
        return g.node("Floor", [g.node("Div", [a, b])])
    # exact: (a - a mod b) / b, with mod's sign that of b (Python's)
    return g.node("Div", [g.node("Sub", [a, g.node("Mod", [a, b], fmod=0)]), b])


@converts("remainder", "fmod")
def _remainder(g, args, ins):
    dt, (a, b) = operands(g, *args)
    floating = dt.startswith(("float", "bfloat"))
    if ins.name == "fmod":
        return g.node("Mod", [a, b], fmod=1)
    if not floating:
        return g.node("Mod", [a, b], fmod=0)
    return g.node("Sub", [a, g.node("Mul", [g.node("Floor", [g.node("Div", [a, b])]), b])])


@converts("hypot")
def _hypot(g, args, ins):
    _, (a, b) = operands(g, *args)
    return g.node("Sqrt", [g.node("Add", [g.node("Mul", [a, a]), g.node("Mul", [b, b])])])


@converts("where")
def _where(g, args, ins):
    cond, a, b = args
    dt = array_dtype(g, a, b)
    return g.node("Where", [g.value(cond), g.value(a, dt), g.value(b, dt)])


@converts("astype")
def _astype(g, args, ins):
    x, dtype = args
    if g.dtype(x) == dtype:
        return g.node("Identity", [g.value(x)])
    return g.cast(g.value(x), dtype)


@converts("update_")
def _update(g, args, ins):
    op, dst, value = args
    dt = g.dtype(dst)
    return g.node(_BINARY[op], [g.value(dst), g.value(value, dt)])


# ---------------------------------------------------------------------- reductions
_REDUCE = {"sum": "ReduceSum", "prod": "ReduceProd", "max": "ReduceMax", "min": "ReduceMin",
           "logsumexp": "ReduceLogSumExp"}


@converts(*_REDUCE)
def _reduce(g, args, ins):
    x, axes, keepdims = args
    name = g.value(x)
    if g.dtype(x) == "bool":  # min/max of bools: all/any
        return g.cast(g.reduce(_REDUCE[ins.name], g.cast(name, "int32"), axes, keepdims),
                      "bool")
    return g.reduce(_REDUCE[ins.name], name, axes, keepdims)


@converts("argmax", "argmin")
def _argmax(g, args, ins):
    x, axis, keepdims = args
    name = g.value(x)
    op = "ArgMax" if ins.name == "argmax" else "ArgMin"
    if g.dtype(x) == "bool":
        name = g.cast(name, "int32")
    if axis is not None:
        return g.node(op, [name], axis=int(axis), keepdims=int(bool(keepdims)))
    flat = g.node(op, [g.node("Reshape", [name, g.ints([-1])])], axis=0, keepdims=0)
    if keepdims:
        return g.node("Reshape", [flat, g.ints([1] * len(g.dims(x)))])
    return flat


@converts("cumsum")
def _cumsum(g, args, ins):
    x, axis = args
    return g.node("CumSum", [g.value(x), g.const(np.asarray(axis, dtype=np.int64))])


# ---------------------------------------------------------------------- movement
@converts("reshape")
def _reshape(g, args, ins):
    x, shape = args
    return g.reshape(g.value(x), g.dims(x), tuple(shape))


@converts("permute")
def _permute(g, args, ins):
    x, axes = args
    return g.node("Transpose", [g.value(x)], perm=[int(a) for a in axes])


@converts("broadcast_to")
def _broadcast_to(g, args, ins):
    x, shape = args
    in_dims = g.dims(x)
    lead = len(shape) - len(in_dims)
    target = [1 if i >= lead and in_dims[i - lead] == d else d for i, d in enumerate(shape)]
    return g.node("Expand", [g.value(x), g.shape_vector(target)])


@converts("slice")
def _slice(g, args, ins):
    x, key = args
    dims = g.dims(x)
    axes, starts, ends, steps = [], [], [], []
    for axis, s in enumerate(key):
        if s.start == 0 and s.step == 1 and s.stop == dims[axis]:
            continue
        axes.append(axis)
        starts.append(s.start)
        ends.append(s.stop)
        steps.append(s.step)
    if not axes:
        return g.node("Identity", [g.value(x)])
    return g.node("Slice", [g.value(x), g.shape_vector(starts), g.shape_vector(ends),
                            g.ints(axes), g.shape_vector(steps)])


@converts("flip")
def _flip(g, args, ins):
    x, axes = args
    n = len(axes)
    return g.node("Slice", [g.value(x), g.ints([-1] * n), g.ints([_INT64_MIN] * n),
                            g.ints(axes), g.ints([-1] * n)])


@converts("concat")
def _concat(g, args, ins):
    arrays, axis = args
    return g.node("Concat", [g.value(a) for a in arrays], axis=int(axis))


@converts("pad")
def _pad(g, args, ins):
    x, widths, value = args
    dt = g.dtype(x)
    pads = [w[0] for w in widths] + [w[1] for w in widths]
    return g.node("Pad", [g.value(x), g.shape_vector(pads), g.value(value, dt)],
                  mode="constant")


# ---------------------------------------------------------------------- indexing
@converts("gather")
def _gather(g, args, ins):
    x, axis, index = args
    return g.node("GatherElements", [g.value(x), g.value(index)], axis=int(axis))


@converts("take")
def _take(g, args, ins):
    x, axis, index = args
    return g.node("Gather", [g.value(x), g.value(index)], axis=int(axis))


@converts("scatter_add", "scatter")
def _scatter(g, args, ins):
    x, axis, index, src = args
    if ins.name == "scatter_add" and g.opset < 16:
        g.unsupported("scatter with accumulation needs opset 16")
    extra = {"reduction": "add"} if ins.name == "scatter_add" else {}
    return g.node("ScatterElements", [g.value(x), g.value(index), g.value(src)],
                  axis=int(axis), **extra)


@converts("matmul")
def _matmul(g, args, ins):
    dt, (a, b) = operands(g, *args)
    if dt == "bool":
        g.unsupported("ONNX MatMul has no bool form")
    return g.node("MatMul", [a, b])


@converts("assign")
def _assign(g, args, ins):
    dst, key, value = args
    dims = g.dims(dst)
    if any(isinstance(d, Dyn) for d in dims) or any(
            isinstance(v, Dyn) for s in key for v in (s.start, s.stop, s.step)):
        g.unsupported("an in-place write into a region of a tensor with a dynamic axis")
    ranges = [range(s.start, s.stop, s.step) for s in key]
    ranges += [range(d) for d in dims[len(key):]]
    region = tuple(len(r) for r in ranges)
    if 0 in region:
        return g.node("Identity", [g.value(dst)])
    grids = np.meshgrid(*[np.asarray(r, dtype=np.int64) for r in ranges], indexing="ij")
    indices = np.stack(grids, axis=-1) if grids else np.zeros((0,), np.int64)
    updates = g.node("Expand", [g.value(value, g.dtype(dst)), g.ints(region)])
    return g.node("ScatterND", [g.value(dst), g.const(indices, "where"), updates])


# ---------------------------------------------------------------------- creation
def _static(args) -> bool:
    def dynamic(a):
        if isinstance(a, (Dyn, Ref)):
            return True
        if isinstance(a, (tuple, list)):
            return any(dynamic(x) for x in a)
        return False
    return not dynamic(args)


@converts("full")
def _full(g, args, ins):
    from onnx import helper
    shape, value, dtype, _device = args
    from plugrad.onnx._graph import np_dtype, onnx_type
    fill = np.asarray([value]).astype(np_dtype(dtype))
    tensor = helper.make_tensor("value", onnx_type(dtype), [1],
                                fill.astype(np.float32) if dtype == "bfloat16" else fill)
    return g.node("ConstantOfShape", [g.shape_vector(shape)], value=tensor)


@converts("arange")
def _arange(g, args, ins):
    start, stop, step, dtype, _device = args
    if _static(args):
        return g.const(g.host(g.value_of(ins.outs)), "arange", dtype=dtype)
    return g.node("Range", [g.value(start, dtype), g.value(stop, dtype),
                            g.value(step, dtype)])


@converts("from_numpy")
def _from_numpy(g, args, ins):
    a, dtype, _device = args
    return g.const(g.host(g.value_of(ins.outs)), "host", dtype=dtype)


@converts("uniform", "normal")
def _random(g, args, ins):
    shape, dtype, _device = args
    from plugrad.onnx._graph import onnx_type
    if not _static(args):
        g.unsupported("random draws of a shape that follows a dynamic axis")
    op = "RandomUniform" if ins.name == "uniform" else "RandomNormal"
    return g.node(op, [], shape=[int(d) for d in shape], dtype=onnx_type(dtype))


from plugrad.onnx import _ops_nn  # noqa: E402,F401 - registers the nn kernels
