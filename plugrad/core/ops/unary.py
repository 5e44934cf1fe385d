"""Elementwise unary math, one table row per op: its kernel, what it saves, its rule.

A row's rule ``grad(F, g, s)`` gets the gradient of the output and the one saved value
(the input ``x`` or the output ``y``), in either binding of the gradient ops.
"""
from __future__ import annotations

import math

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import OUTPUT, KeepsOutput, Node
from plugrad.core.autograd.record import record
from plugrad.core.errors import DTypeError, DTypeNotImplementedError
from plugrad.core.grad_mode import _state, no_grad
from plugrad.core.ops._opmath import half_in_float32, half_kernel, half_node
from plugrad.core.ops.binary import div, mul, one_over
from plugrad.core.ops.binary import pow as _pow
from plugrad.core.ops.declare import op
from plugrad.core.tensor import Tensor, _wrap

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def unary_input(name, x, float_only=True):
    """The array an elementwise op computes on and the result dtype (integers and bools
    promote to the default float dtype for float-valued math)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if float_only and not x.dtype.is_floating_point:
        dt = _dt.get_default_dtype()
        return x._k.astype(x._data, dt.name), dt
    return x._data, x.dtype


def _node_class(name, rule, saves):
    """The node of unary op ``name``: one rule, keeping its input, its output or nothing."""
    base = KeepsOutput if saves == "output" else Node
    node_name = "".join(p.capitalize() for p in name.split("_")) + "Backward0"
    if saves == "none":
        def grad(self, F, g):
            return (rule(F, g, None),)
    else:
        def grad(self, F, g, s):
            return (rule(F, g, s),)
    return type(node_name, (base,), {"grad": grad, "__doc__": f"Gradient of ``{name}``."})


def unary(name, kernel=None, *, grad, saves="input", float_only=True, inplace=True,
          torch=None, method=None, dunder=None, declare=True, opmath=False):
    """Define (and, unless ``declare`` is False, declare) an elementwise op from its kernel
    and its gradient rule; ``opmath``: half precision runs in float32 (a rule of several
    products, rounded once, as PyTorch's backward kernel)."""
    kernel = kernel or name
    node_cls = _node_class(name, grad, saves)
    if opmath is True:  # "forward": PyTorch's backward is a composite (rounds each step)
        half_node(node_cls)
    saved = {"input": None, "output": (OUTPUT,), "none": ()}[saves]

    def fn(x):
        data, dt = unary_input(name, x, float_only)
        r = _wrap(half_kernel(x._k, data, getattr(x._k, kernel)) if opmath else
                  getattr(x._k, kernel)(data), dt, x.device, x._k)
        if x._rg and _state.enabled:
            if saved is None:
                record(r, node_cls(), (x,), (x,), (data,))
            else:
                record(r, node_cls(), (x,), saved)
        return r

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (kernel ``{kernel}``)."
    fn.node = node_cls
    if not declare:
        return fn
    spell = inplace if isinstance(inplace, str) else name + "_"  # or its spellings, given
    return op(torch or name, method=method or name, inplace=spell if inplace else None,
              dunder=dunder, name=name)(fn)


def _zeros(F, g, s):
    """PyTorch's ``zeros_like(grad)``: 0 also where ``g`` is inf or NaN (``g * 0`` is NaN
    there), on ``g``'s device, recording nothing."""
    return F.astype(F.lt(g, g), F.dtype_of(g))


_neg = unary("neg", grad=lambda F, g, s: F.neg(g), saves="none", float_only=False,
             declare=False)


@op("neg negative", method="neg negative", inplace="neg_ negative_", dunder="__neg__")
def neg(x):
    if isinstance(x, Tensor) and x.dtype is _dt.bool_:
        raise DTypeError("neg: Negation, the `-` operator, on a bool tensor is not supported. "
                         "If you are trying to invert a mask, use the `~` or `logical_not()` "
                         "operator instead.")
    return _neg(x)


def _no_bool(name, x):
    """PyTorch has no kernel of these ops for bool tensors (``"abs_cpu" not implemented
    for 'Bool'``): neither have we, rather than a result PyTorch programs never see."""
    if isinstance(x, Tensor) and x.dtype is _dt.bool_:
        raise DTypeNotImplementedError(f"{name}: not implemented for 'Bool' tensors (as in "
                                       "PyTorch; convert with .long() or .float() first)")


_abs = unary("abs", grad=lambda F, g, x: F.mul(g, F.sign(x)), float_only=False,
             declare=False)


@op("abs absolute", method="abs absolute", inplace="abs_ absolute_", dunder="__abs__")
def abs(x):
    _no_bool("abs", x)
    return _abs(x)


exp = unary("exp", grad=lambda F, g, y: F.mul(g, y), saves="output")
log = unary("log", grad=lambda F, g, x: F.div(g, x))
sqrt = unary("sqrt", grad=lambda F, g, y: F.div(g, F.mul(y, 2.0)), saves="output")
sin = unary("sin", grad=lambda F, g, x: F.mul(g, F.cos(x)))
cos = unary("cos", grad=lambda F, g, x: F.mul(F.neg(g), F.sin(x)))
tanh = unary("tanh", grad=lambda F, g, y: F.mul(g, F.sub(1.0, F.mul(y, y))), saves="output",
             opmath=True)
sigmoid = unary("sigmoid", grad=lambda F, g, y: F.mul(F.mul(g, F.sub(1.0, y)), y),
                saves="output", opmath=True)
log1p = unary("log1p", grad=lambda F, g, x: F.div(g, F.add(x, 1.0)))
expm1 = unary("expm1", grad=lambda F, g, y: F.mul(g, F.add(y, 1.0)), saves="output")
erf = unary("erf", grad=lambda F, g, x: F.mul(F.mul(g, _TWO_OVER_SQRT_PI),
                                              F.exp(F.neg(F.mul(x, x)))), opmath="forward")
_sign = unary("sign", grad=_zeros, saves="none", float_only=False, declare=False)
_floor = unary("floor", grad=_zeros, saves="none", float_only=False, declare=False)
_ceil = unary("ceil", grad=_zeros, saves="none", float_only=False, declare=False)
_round = unary("round", grad=_zeros, saves="none", float_only=False, declare=False)


@op("sign", method="sign", inplace="sign_")
def sign(x):
    """-1, 0 or 1 by sign, and 0 for NaN (PyTorch's); a bool tensor is its own sign (no
    arithmetic on bool arrays)."""
    if isinstance(x, Tensor) and x.dtype is _dt.bool_:
        return x.clone()
    r = _sign(x)
    if x.dtype.is_floating_point:
        k = r._k
        r._data = k.where(k.isnan(r._data), 0.0, r._data)  # a fresh array: no alias
    return r


@op("floor", method="floor", inplace="floor_")
def floor(x):
    """Rounding leaves integer tensors as they are."""
    _no_bool("floor", x)
    return _floor(x) if x.dtype.is_floating_point else x.clone()


@op("ceil", method="ceil", inplace="ceil_")
def ceil(x):
    _no_bool("ceil", x)
    return _ceil(x) if x.dtype.is_floating_point else x.clone()


@op("round", method="round", inplace="round_")
def round(x, *, decimals: int = 0):
    _no_bool("round", x)
    if not x.dtype.is_floating_point:
        return x.clone()
    if decimals:
        scale = 10.0 ** decimals
        return _round(x * scale) / scale
    return _round(x)


class TruncBackward0(Node):

    def grad(self, F, g):
        return (F.mul(g, 0.0),)


@op("trunc fix", method="trunc fix", inplace="trunc_ fix_")
def trunc(x):
    """Round toward zero (integer tensors stay as they are)."""
    _no_bool("trunc", x)
    if not x.dtype.is_floating_point:
        return x.clone()
    k, d = x._k, x._data
    r = _wrap(k.where(k.lt(d, 0.0), k.ceil(d), k.floor(d)), x.dtype, x.device, k)
    if x._rg and _state.enabled:
        record(r, TruncBackward0(), (x,))
    return r


# ---------------------------------------------------------------------- composites
class RsqrtBackward0(KeepsOutput):
    """PyTorch's ``-0.5 * g * result ** 3`` (keeping the result, as its in-place checks)."""

    def grad(self, F, g, y):
        return (F.mul(F.mul(g, -0.5), F.mul(y, F.mul(y, y))),)


class TanBackward0(KeepsOutput):
    """PyTorch's ``g * (1 + result ** 2)`` (keeping the result, as its in-place checks)."""

    def grad(self, F, g, y):
        return (F.mul(g, F.add(F.mul(y, y), 1.0)),)


def _keeping_result(x, compute, node_cls):
    """``compute(x)`` (a composite) recorded as one node that keeps its result."""
    xf = x if x.dtype.is_floating_point else x.float()
    with no_grad():
        r = compute(xf)
    if xf._rg and _state.enabled:
        record(r, node_cls(), (xf,), (OUTPUT,))
    return r


@op("rsqrt", method="rsqrt", inplace="rsqrt_")
@half_in_float32
def rsqrt(x):
    return _keeping_result(x, lambda v: one_over(sqrt(v)), RsqrtBackward0)


class ReciprocalBackward0(KeepsOutput):
    """PyTorch's ``-g * result * result``: the node keeps its output, so an in-place change
    of the result before backward (``x.reciprocal_().mul_(2)``) is an error, as there."""

    def grad(self, F, g, y):
        return (F.neg(F.mul(g, F.mul(y, y))),)


@op("reciprocal", method="reciprocal", inplace="reciprocal_")
@half_in_float32
def reciprocal(x):
    return _keeping_result(x, one_over, ReciprocalBackward0)


@op("square", method="square", inplace="square_")
def square(x):
    """PyTorch's ``pow(x, 2)`` (the kernel multiplies; the gradient is ``g * (2 * x)``,
    NaN where ``2 * x`` overflows and ``g`` is 0, as there); a bool input squares as
    int64 (that promotion)."""
    if x.dtype is _dt.bool_:
        x = x.long()
    return _pow(x, 2)


@op("log2", method="log2", inplace="log2_")
@half_in_float32
def log2(x):
    return log(x) * (1.0 / math.log(2.0))


@op("log10", method="log10", inplace="log10_")
@half_in_float32
def log10(x):
    return log(x) * (1.0 / math.log(10.0))


@op("exp2", method="exp2", inplace="exp2_")
@half_in_float32
def exp2(x):
    return exp(x * math.log(2.0))


@op("tan", method="tan", inplace="tan_")
@half_in_float32
def tan(x):
    return _keeping_result(x, lambda v: sin(v) / cos(v), TanBackward0)


@op(reflected="__rtruediv__")
def rdiv(a, b):
    """``number / tensor`` is PyTorch's ``tensor.reciprocal() * number`` (its Python
    ``__rtruediv__``): two roundings, which the results show."""
    if isinstance(a, Tensor) and b.__class__ in (int, float):
        return mul(reciprocal(a), b)
    return div(b, a)
