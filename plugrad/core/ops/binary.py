"""Binary arithmetic: add, sub, mul, div, pow, remainder and their relatives.

Each op: resolve operands (promotion, weak scalars, device check) with
:func:`binary_operands`, call one kernel, and record a node whose one rule returns
result-shaped gradients; ``record_binary`` notes where an operand was broadcast or
promoted, and the engine reduces and casts those gradients back.
"""
from __future__ import annotations

import math

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import OUTPUT, KeepsOutput, Node
from plugrad.core.autograd.record import record_binary, recording
from plugrad.core.errors import DTypeError, kernel_error
from plugrad.core.grad_mode import _state, no_grad as _no_grad
from plugrad.core.ops._base import _SCALARS, binary_operands
from plugrad.core.ops.declare import op
from plugrad.core.tensor import Tensor, _wrap


# ====================================================================== add, sub
class AddBackward0(Node):

    def grad(self, F, g):
        a, b = self.next
        return (g if a else None), (g if b else None)


class SubBackward0(Node):

    def grad(self, F, g):
        return (g if self.next[0] else None), (F.neg(g) if self.next[1] else None)


def _add_like(name, node_cls, a, b, alpha):
    if type(alpha) is not int or alpha != 1:
        b = b * _alpha(name, a, b, alpha)
    if node_cls is SubBackward0 and ((isinstance(a, Tensor) and a.dtype is _dt.bool_) or (
            isinstance(b, Tensor) and b.dtype is _dt.bool_) or isinstance(a, bool)
            or isinstance(b, bool)):
        raise DTypeError("sub: Subtraction, the `-` operator, with a bool tensor is not "
                         "supported. If you are trying to invert a mask, use the `~` or "
                         "`logical_not()` operator instead.")
    k, dev, dt, ad, bd = binary_operands(name, a, b)
    try:
        out = k.logical_or(ad, bd) if dt is _dt.bool_ else (
            k.add(ad, bd) if node_cls is AddBackward0 else k.sub(ad, bd))
    except Exception as exc:
        raise kernel_error(name, exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if _state.enabled and ((isinstance(a, Tensor) and a._rg) or (isinstance(b, Tensor) and b._rg)):
        record_binary(r, node_cls(), a, b)
    return r


def _alpha(name, a, b, alpha):
    """``alpha`` as PyTorch converts it to the result dtype: a float alpha with integer
    operands, or a bool one with non-bool operands, is an error; an integer result takes it
    with the overflow check of a fill value."""
    dt = binary_operands(name, a, b)[2]
    if type(alpha) is bool and dt is not _dt.bool_:
        raise DTypeError(f"{name}: Boolean alpha only supported for Boolean results.")
    if dt is _dt.bool_:
        return bool(alpha)
    if dt.kind in "iu":
        if isinstance(alpha, float):
            raise DTypeError(f"{name}: For integral input tensors, argument alpha must not be "
                             f"a floating point number.")
        return _dt.checked_scalar(name, alpha, dt)
    return alpha


@op("add", method="add", inplace="add_", dunder="__add__ __radd__", augmented="__iadd__",
    fast_inplace="add")
def add(a, b, *, alpha=1):
    return _add_like("add", AddBackward0, a, b, alpha)


@op("sub subtract", method="sub subtract", inplace="sub_ subtract_", dunder="__sub__",
    augmented="__isub__", fast_inplace="sub")
def sub(a, b, *, alpha=1):
    return _add_like("sub", SubBackward0, a, b, alpha)


@op("rsub", reflected="__rsub__")
def rsub(a, b, alpha=1):
    return sub(b, a, alpha=alpha)


# ====================================================================== half with a number
_NUMBER = (int, float)
_HALF = frozenset(d for d in (getattr(_dt, n, None) for n in ("float16", "bfloat16")) if d)


def _with_number(k, kernel, dt, ad, bd):
    """``kernel(ad, bd)``; a half tensor with a Python number is computed in float32 with
    the number kept in float32 and rounded once (PyTorch's CPU opmath), where the backends
    would first round the number to half (``x * 0.1`` differed in a third of the cases)."""
    if (ad.__class__ in _NUMBER) != (bd.__class__ in _NUMBER):
        a = ad if ad.__class__ in _NUMBER else k.astype(ad, "float32")
        b = bd if bd.__class__ in _NUMBER else k.astype(bd, "float32")
        return k.astype(kernel(a, b), dt.name)
    return kernel(ad, bd)


# ====================================================================== mul
class MulBackward0(Node):

    def grad(self, F, g, a, b):
        ea, eb = self.next
        return (F.mul(g, b) if ea else None), (F.mul(g, a) if eb else None)


@op("mul multiply", method="mul multiply", inplace="mul_ multiply_", dunder="__mul__ __rmul__",
    augmented="__imul__", fast_inplace="mul")
def mul(a, b):
    k, dev, dt, ad, bd = binary_operands("mul", a, b)
    try:
        if dt in _HALF:
            out = _with_number(k, k.mul, dt, ad, bd)
        else:
            out = k.logical_and(ad, bd) if dt is _dt.bool_ else k.mul(ad, bd)
    except Exception as exc:
        raise kernel_error("mul", exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if _state.enabled and ((isinstance(a, Tensor) and a._rg) or (isinstance(b, Tensor) and b._rg)):
        # each gradient needs only the other operand: save no more (an in-place update of
        # an operand that is not needed must not fail the version check)
        ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
        if ta and a._rg:
            if tb and b._rg:
                saved, arrays = (a, b), (ad, bd)
            else:
                saved, arrays = (None, b if tb else bd), (None, bd)
        else:
            saved, arrays = (a if ta else ad, None), (ad, None)
        record_binary(r, MulBackward0(), a, b, saved, arrays)
    return r


# ====================================================================== div
class DivBackward0(Node):

    def grad(self, F, g, a, b):
        ga = F.div(g, b) if self.next[0] else None
        # ``-g * ((a / b) / b)`` as PyTorch (``b * b`` under/overflows first)
        gb = F.mul(F.neg(g), F.div(F.div(a, b), b)) if self.next[1] else None
        return ga, gb


def _float_operands(name, a, b):
    """Operands of an op that always computes in floating point (``int / int`` is float)."""
    k, dev, dt, ad, bd = binary_operands(name, a, b)
    if not dt.is_floating_point:
        dt = _dt.get_default_dtype()
        ad = k.astype(ad, dt.name) if not isinstance(ad, _SCALARS) else float(ad)
        bd = k.astype(bd, dt.name) if not isinstance(bd, _SCALARS) else float(bd)
    return k, dev, dt, ad, bd


@op("div divide true_divide", method="div divide true_divide",
    inplace="div_ divide_ true_divide_",
    dunder="__truediv__", augmented="__itruediv__", fast_inplace="div")
def div(a, b, *, rounding_mode=None):
    if rounding_mode == "floor":
        return _floor_divide(a, b, DivFloorBackward0)
    if rounding_mode == "trunc":  # its gradient is 0 (PyTorch's), not 0 * d(a / b)
        with _no_grad():
            dt = binary_operands("div", a, b)[2]
            if dt.is_floating_point or dt is _dt.bool_:
                out = div(a, b).trunc()
                out = out if dt.is_floating_point else out.to(dt)
            else:  # exact integers (a float64 quotient rounds past 2**53): the floor, plus
                q = _floor_divide(a, b, DivFloorBackward0)  # one where it is below zero
                out = q + ((q < 0) & (q * b != a)).to(dt)   # and inexact
        if dt.is_floating_point and recording(a, b):
            record_binary(out, DivFloorBackward0(), a, b)
        return out
    if rounding_mode is not None:
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    k, dev, dt, ad, bd = _float_operands("div", a, b)
    try:
        out = _with_number(k, k.div, dt, ad, bd) if dt in _HALF else k.div(ad, bd)
    except Exception as exc:
        raise kernel_error("div", exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if recording(a, b):
        sa = a if isinstance(a, Tensor) else ad
        sb = b if isinstance(b, Tensor) else bd
        record_binary(r, DivBackward0(), a, b, (sa, sb), (ad, bd))
    return r


def one_over(v):
    """``1 / v`` in one division (``1.0 / v`` is PyTorch's ``v.reciprocal() * 1.0``)."""
    return div(1.0, v)


# ====================================================================== integer-style division
def _check_int_division(name, k, dt, bd):
    if dt.kind in "iu":
        if isinstance(bd, _SCALARS):
            zero = bd == 0
        else:
            zero = 0 not in tuple(bd.shape) and \
                bool(k.to_numpy(k.max(k.eq(bd, 0), None, False)).item())  # any empty shape
        if zero:
            raise ZeroDivisionError(f"{name}: integer division by zero")


def _refuse_bool(name, dt):
    """PyTorch implements no arithmetic ``name`` on bool (a bool operand promoted to another
    operand's dtype is fine: ``bool_tensor % 2`` is int64); neither do the backends."""
    if dt is _dt.bool_:
        raise DTypeError(f"{name}: not implemented for 'Bool' tensors (convert with .long() or "
                         f".float() first)")


def _is_bool(v) -> bool:
    return v.dtype is _dt.bool_ if isinstance(v, Tensor) else isinstance(v, bool)


class DivFloorBackward0(Node):
    """``div(rounding_mode='floor')``: a result that requires grad, its gradient 0."""

    def grad(self, F, g):
        zero = F.full(tuple(g.shape), 0.0, F.dtype_of(g), self.device.index)
        return (zero if self.next[0] else None), (zero if self.next[1] else None)


class FloorDivideBackward0(Node):
    """PyTorch's ``floor_divide`` has no derivative: its result requires grad, and
    backward through it raises."""

    def grad(self, F, g):
        raise RuntimeError("the derivative for 'floor_divide' is not implemented.")


@op("floor_divide", method="floor_divide", inplace="floor_divide_", dunder="__floordiv__",
    augmented="__ifloordiv__")
def floor_divide(a, b):
    """``a // b`` rounding toward negative infinity (not differentiable)."""
    return _floor_divide(a, b, FloorDivideBackward0)


def _floor_divide(a, b, node_cls):
    k, dev, dt, ad, bd = binary_operands("floor_divide", a, b)
    _refuse_bool("floor_divide", dt)
    _check_int_division("floor_divide", k, dt, bd)
    try:
        out = k.floordiv(ad, bd)
    except Exception as exc:
        raise kernel_error("floor_divide", exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if dt.is_floating_point and recording(a, b):
        record_binary(r, node_cls(), a, b)
    return r


@op(reflected="__rfloordiv__")
def rfloordiv(a, b):
    return floor_divide(b, a)


class RemainderBackward0(Node):

    def grad(self, F, g, a, b):
        ga = g if self.next[0] else None
        gb = F.mul(F.neg(g), F.floordiv(a, b)) if self.next[1] else None
        return ga, gb


@op("remainder", method="remainder", inplace="remainder_", dunder="__mod__",
    augmented="__imod__")
def remainder(a, b):
    """Python's ``%``: the result takes the sign of the divisor."""
    k, dev, dt, ad, bd = binary_operands("remainder", a, b)
    _refuse_bool("remainder", dt)
    _check_int_division("remainder", k, dt, bd)
    try:
        out = k.remainder(ad, bd)
    except Exception as exc:
        raise kernel_error("remainder", exc, a, b) from exc
    if dt.kind == "f":  # a zero result has the dividend's sign (PyTorch keeps fmod's zero)
        out = k.where(k.eq(out, 0.0), k.fmod(ad, bd), out)
    r = _wrap(out, dt, dev, k)
    if recording(a, b):
        sa = a if isinstance(a, Tensor) else ad
        sb = b if isinstance(b, Tensor) else bd
        record_binary(r, RemainderBackward0(), a, b, (sa, sb), (ad, bd))
    return r


@op(reflected="__rmod__")
def rremainder(a, b):
    return remainder(b, a)


class FmodBackward0(Node):
    """``d/da = 1`` (also where ``b == 0``, as PyTorch), ``d/db = -trunc(a / b)``."""

    def grad(self, F, g, a, b):
        ga = g if self.next[0] else None
        gb = F.mul(F.neg(g), _div_trunc(F, a, b)) if self.next[1] else None
        return ga, gb


def _div_trunc(F, a, b):
    """``trunc(a / b)`` with no gradient of its own, as PyTorch's ``div(rounding_mode=
    'trunc')`` (``0 * d(a / b)`` would be NaN at ``b == 0`` in a double backward): the op
    itself on Tensors, the kernels on arrays."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return div(a, b, rounding_mode="trunc")
    q = F.div(a, b)
    return F.where(F.lt(q, 0.0), F.ceil(q), F.floor(q))


@op("fmod", method="fmod", inplace="fmod_")
def fmod(a, b):
    """C's ``fmod``: the exact remainder of division rounded toward zero (sign of ``a``)."""
    if not isinstance(a, Tensor):
        raise TypeError(f"fmod(): argument 'input' must be Tensor, not {type(a).__name__}")
    k, dev, dt, ad, bd = binary_operands("fmod", a, b)
    _refuse_bool("fmod", dt)
    _check_int_division("fmod", k, dt, bd)
    try:
        out = k.fmod(ad, bd)
    except Exception as exc:
        raise kernel_error("fmod", exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if recording(a, b):
        sa = a if isinstance(a, Tensor) else ad
        sb = b if isinstance(b, Tensor) else bd
        record_binary(r, FmodBackward0(), a, b, (sa, sb), (ad, bd))
    return r


# ====================================================================== pow
class PowBackward0(Node):
    """``a ** b`` for a number ``b``; at ``b == 0`` the gradient is 0."""

    def grad(self, F, g, a):
        b = self.exponent
        if b == 0:
            return F.mul(g, 0.0), None
        if b == 2:  # ``g * (2 * a)`` as PyTorch: ``2 * a`` overflows first (0 * inf is NaN)
            return F.mul(g, F.mul(a, 2.0)), None
        return F.mul(g, F.mul(pow_number(F, a, float(b - 1)), float(b))), None


def pow_number(F, a, e):
    """``a ** e`` for a number ``e`` as PyTorch's kernel: ``e == 0.5`` is ``sqrt`` and
    ``e == -0.5`` is ``1 / sqrt`` (so ``(-0.0) ** -0.5`` is ``-inf`` and ``(-inf) ** 0.5``
    NaN there, where C's ``pow`` gives ``inf``). ``F`` a kernel table, or the Tensor ops:
    then the ``pow`` op itself (which does this) records PyTorch's node."""
    if isinstance(a, Tensor):
        return pow(a, e)  # the op (``F.pow`` is the plain kernel in both bindings)
    if F.dtype_of(a) not in ("float32", "float64"):
        return F.pow(a, e)  # (half and complex: the plain pow, as PyTorch's)
    if e == 0.5:
        return F.sqrt(a)
    if e == -0.5:
        return F.div(1.0, F.sqrt(a))
    return F.pow(a, e)


class PowBackward1(KeepsOutput):
    """``a ** b`` for Tensors: PyTorch's formulas term by term, the output kept
    differentiable (so the exponent's gradient ``g * (a**b * log(a))`` has a correct
    gradient of its own). ``a ** (b - 1)`` is computed where ``b == 0`` too and masked
    after, as there: the double backward is NaN where it is infinite."""

    def grad(self, F, g, a, b, y):
        ga = gb = None
        if self.next[0]:
            ga = F.where(F.eq(b, 0.0), 0.0, F.mul(g, F.mul(b, F.pow(a, F.sub(b, 1.0)))))
        if self.next[1]:
            gb = F.mul(g, F.where(F.logical_and(F.eq(a, 0.0), F.ge(b, 0.0)), 0.0,
                                  F.mul(y, F.log(a))))
        return ga, gb


class PowBackward2(KeepsOutput):
    """``a ** b`` for a number ``a`` and a Tensor ``b``: ``g * (a**b * log(a))``."""

    def grad(self, F, g, b, y):
        a = self.base
        if a == 0:
            return None, F.mul(g, F.where(F.ge(b, 0.0), 0.0, F.mul(y, -math.inf)))
        log_a = math.log(a) if a > 0 else math.nan
        return None, F.mul(g, F.mul(y, log_a))


@op("pow", method="pow", inplace="pow_", dunder="__pow__", augmented="__ipow__")
def pow(a, b):
    return _pow(a, b, True)


def pow_kernel(a, b):
    """``pow`` by the plain kernel (no sqrt shortcut): the gradient ops' ``F.pow``, so a
    rule's ``F.pow(x, 0.5)`` computes the same in both bindings."""
    return _pow(a, b, False)


def _pow(a, b, shortcut):
    k, dev, dt, ad, bd = binary_operands("pow", a, b)
    _refuse_bool("pow", dt)
    negative = False
    if dt.kind in "iu":
        if isinstance(bd, _SCALARS):
            if bd < 0:
                raise DTypeError("pow: Integers to negative integer powers are not allowed.")
        elif _numel(bd):
            negative = bool(k.to_numpy(k.max(k.lt(bd, 0), None, False)).item())
    try:
        if negative:
            out = _int_pow_negative(k, ad, bd, dt, dev)
        else:
            out = pow_number(k, ad, bd) if shortcut and bd.__class__ in _NUMBER else \
                k.pow(ad, bd)
    except Exception as exc:
        raise kernel_error("pow", exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if recording(a, b):
        if not isinstance(b, Tensor):
            node = PowBackward0()
            node.exponent = bd
            record_binary(r, node, a, b, (a,), (ad,))
        elif not isinstance(a, Tensor):
            node = PowBackward2()
            node.base = ad
            record_binary(r, node, a, b, (b, OUTPUT), (bd, None))
        else:
            node = PowBackward1()
            record_binary(r, node, a, b, (a, b, OUTPUT), (ad, bd, None))
    return r


def _int_pow_negative(k, ad, bd, dt, dev):
    """Integer ``a ** b`` with some ``b < 0`` in a tensor exponent (PyTorch's ``powi``; only
    a negative Python number is an error): 1 for ``a == 1``, ±1 by ``b``'s parity for
    ``a == -1``, else 0 (integer division's truncation of ``1 / a**|b|``)."""
    if isinstance(ad, _SCALARS):
        ad = k.full((), ad, dt.name, dev.index)
    neg = k.lt(bd, 0)
    plain = k.pow(ad, k.where(neg, 0, bd))
    ones = k.full(tuple(bd.shape), 1, dt.name, dev.index)
    minus_one = k.where(k.ne(k.remainder(bd, 2), 0), k.neg(ones), ones)
    below = k.where(k.eq(ad, 1), 1, k.where(k.eq(ad, -1), minus_one, 0))
    return k.where(neg, below, plain)


@op(reflected="__rpow__")
def rpow(a, b):
    return pow(b, a)


def _numel(arr) -> int:
    n = 1
    for s in arr.shape:
        n *= s
    return n
