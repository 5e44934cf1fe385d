"""What every differentiable op shares: operand checks, type promotion, graph recording.

Ops are written as: check and convert operands, call the kernel table, wrap the result,
and -- only when grad mode is on and an input requires grad -- attach a backward node.
"""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core.autograd import anomaly
from plugrad.core import grad_mode
from plugrad.core.autograd.engine import edge_of
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import _sequence
from plugrad.core.tensor import Tensor, _wrap, table_for
from plugrad.core.device import get_default_device
from plugrad.core.factories import tensor
from plugrad.core.errors import (DeviceError, DTypeError, OpError, ShapeError,  # noqa: F401
                                 broadcast_shapes, check_device, check_dtype_supported,
                                 kernel_error, shape_str)

_state = grad_mode._state
_SCALARS = (bool, int, float)
_result_with_scalar = _dt.result_with_scalar
_result_type_of = _dt.result_type_of


def _edge(t):
    """``edge_of`` for an operand that may be a Python scalar (the hot path of ``attach``)."""
    if not isinstance(t, Tensor):
        return None
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return edge_of(t) if t._rg else None


def attach(out: Tensor, node: Node, inputs) -> Tensor:
    """Record ``node`` as the producer of ``out`` with edges to ``inputs``."""
    if len(inputs) == 2:
        a, b = inputs
        ea = eb = None
        if isinstance(a, Tensor):
            fn = a.grad_fn
            ea = (fn, a._output_nr) if fn is not None else (edge_of(a) if a._rg else None)
        if isinstance(b, Tensor):
            fn = b.grad_fn
            eb = (fn, b._output_nr) if fn is not None else (edge_of(b) if b._rg else None)
        node.next = (ea, eb)
    elif len(inputs) == 1:
        node.next = (_edge(inputs[0]),)
    else:
        node.next = tuple([_edge(t) for t in inputs])
    node.seq = next(_sequence)
    node.k = out._k
    node.device = out.device
    out.grad_fn = node
    out._rg = True
    if anomaly._enabled:
        anomaly.record_forward(node)
    return out


def needs_grad(*tensors) -> bool:
    """Whether an op on ``tensors`` should record the graph."""
    if not _state.enabled:
        return False
    for t in tensors:
        if isinstance(t, Tensor) and t._rg:
            return True
    return False


def save(node: Node, *tensors) -> None:
    """Keep ``tensors`` for backward, remembering their versions to catch in-place edits."""
    node.saved = tensors
    node.versions = tuple(t._vc[0] if t is not None else None for t in tensors)


def to_tensor_like(value, like: Tensor) -> Tensor:
    """A Python scalar or nested list as a tensor on ``like``'s device."""
    return tensor(value, device=like.device)


def binary_operands(op: str, a, b):
    """Check and convert the operands of a binary elementwise op.

    Returns ``(k, device, dtype, a_data, b_data)`` with both operands in the result dtype;
    a Python scalar stays a scalar (the backends treat it as weak).
    """
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if a.device is not b.device:
                check_device(op, a, b)
            if a.dtype is b.dtype:
                return a._k, a.device, a.dtype, a._data, b._data
            dtype = _result_type_of(((a.dtype, not a._data.shape), (b.dtype, not b._data.shape)))
            k = a._k
            ad = a._data if a.dtype is dtype else k.astype(a._data, dtype.name)
            bd = b._data if b.dtype is dtype else k.astype(b._data, dtype.name)
            return k, a.device, dtype, ad, bd
        cls = b.__class__
        if (cls is float or cls is int) and a.dtype.kind == "f":  # float tensor, number
            return a._k, a.device, a.dtype, a._data, b if cls is float else float(b)
        if type(b) in _SCALARS:
            dtype = _result_with_scalar(a.dtype, b)
            k = a._k
            ad = a._data if a.dtype is dtype else k.astype(a._data, dtype.name)
            return k, a.device, dtype, ad, _scalar_as(b, dtype)
        if isinstance(b, (list, tuple)) or hasattr(b, "__array__") or hasattr(b, "item"):
            return binary_operands(op, a, _coerce(b, a))
        raise TypeError(f"{op}: unsupported operand type {type(b).__name__} (expected a "
                        f"Tensor or a number)")
    if isinstance(b, Tensor):
        if type(a) in _SCALARS:
            dtype = _result_with_scalar(b.dtype, a)
            k = b._k
            bd = b._data if b.dtype is dtype else k.astype(b._data, dtype.name)
            return k, b.device, dtype, _scalar_as(a, dtype), bd
        return binary_operands(op, _coerce(a, b), b)
    raise TypeError(f"{op}: expected at least one Tensor, got {type(a).__name__} and "
                    f"{type(b).__name__}")


def _coerce(value, like: Tensor) -> Tensor:
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        return value.item()
    return to_tensor_like(value, like)


def _scalar_as(value, dtype):
    """A Python scalar in the form the result dtype wants (``True * 1.5`` is a float op)."""
    kind = dtype.kind
    if kind == "f":
        return value if type(value) is float else float(value)
    if kind in "iu":
        return int(value)
    return bool(value)


def sum_to(g: Tensor, shape: tuple) -> Tensor:
    """Reduce a broadcast gradient back to an input's ``shape``."""
    gshape = g._data.shape
    if gshape == shape:
        return g
    if not shape:  # a scalar operand: everything sums into it
        return _ops.reduction.sum(g)
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1)
    out = _ops.reduction.sum(g, axes, keepdim=True) if axes else g
    if lead:
        out = out.reshape(shape)
    return out


def sum_to_array(k, g, shape: tuple):
    """:func:`sum_to` on a bare array of kernel table ``k`` (the array-mode gradient rules)."""
    gshape = g.shape
    if gshape == shape:
        return g
    if not shape:
        return k.sum(g, None, False)
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1)
    out = k.sum(g, axes, True) if axes else g
    if lead:
        out = k.reshape(out, shape)
    return out


def grad_for(g: Tensor, t) -> Tensor | None:
    """``g`` reduced to the shape and dtype of operand ``t`` (None for a scalar operand)."""
    if not isinstance(t, Tensor):
        return None
    g = sum_to(g, t._data.shape)
    if g.dtype is not t.dtype:
        g = g.to(t.dtype)
    return g


class _LazyOps:
    """Sibling op modules, imported on first use (they import this module)."""

    def __getattr__(self, name):
        import importlib
        module = importlib.import_module(f"plugrad.core.ops.{name}")
        setattr(self, name, module)
        return module


_ops = _LazyOps()


def new_tensor(data, dtype, device, k) -> Tensor:
    return _wrap(data, dtype, device, k)


def default_table():
    return table_for(get_default_device())


class ExpandBackBackward(Node):
    """Adjoint of a reduction's gradient broadcast: sum over the broadcast axes again."""

    def backward(self, g):
        return (_ops.reduction.sum(g, self.axes, keepdim=self.keepdim),)

    def backward_arrays(self, k, g):
        return (k.sum(g, self.axes, self.keepdim),)


def expand_back_array(k, g, shape: tuple, axes, keepdim: bool):
    """:func:`expand_back` on a bare array."""
    if not keepdim and g.shape:  # a 0-d gradient broadcasts as it is
        g = k.reshape(g, tuple(1 if axes is None or i in axes else n
                               for i, n in enumerate(shape)))
    return k.broadcast_to(g, shape)


def expand_back(g: Tensor, shape: tuple, axes, keepdim: bool) -> Tensor:
    """A reduction's gradient broadcast back over its reduced ``axes`` in one op (the
    backward of ``sum``/``mean`` runs this once per step, so it skips reshape/expand's checks)."""
    k = g._k
    data = g._data
    if not keepdim:
        data = k.reshape(data, tuple(1 if axes is None or i in axes else n
                                     for i, n in enumerate(shape)))
    r = _wrap(k.broadcast_to(data, shape), g.dtype, g.device, k)
    if g._rg and _state.enabled:
        node = ExpandBackBackward()
        node.axes, node.keepdim = axes, keepdim
        attach(r, node, (g,))
    return r
