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
from plugrad.core.grad_mode import _state
from plugrad.core.ops._base import _SCALARS, binary_operands
from plugrad.core.ops.declare import op
from plugrad.core.tensor import Tensor, _wrap


# ====================================================================== add, sub
class AddBackward0(Node):

    def grad(self, F, g):
        return (g if self.next[0] else None), (g if self.next[1] else None)


class SubBackward0(Node):

    def grad(self, F, g):
        return (g if self.next[0] else None), (F.neg(g) if self.next[1] else None)


def _add_like(name, node_cls, a, b, alpha):
    if alpha != 1:
        b = b * alpha
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


@op("add", method="add", inplace="add_", dunder="__add__ __radd__", augmented="__iadd__",
    fast_inplace="add")
def add(a, b, *, alpha=1):
    return _add_like("add", AddBackward0, a, b, alpha)


@op("sub subtract", method="sub subtract", inplace="sub_", dunder="__sub__",
    augmented="__isub__", fast_inplace="sub")
def sub(a, b, *, alpha=1):
    return _add_like("sub", SubBackward0, a, b, alpha)


@op("rsub", reflected="__rsub__")
def rsub(a, b, alpha=1):
    return sub(b, a, alpha=alpha)


# ====================================================================== mul
class MulBackward0(Node):

    def grad(self, F, g, a, b):
        return (F.mul(g, b) if self.next[0] else None), (F.mul(g, a) if self.next[1] else None)


@op("mul multiply", method="mul multiply", inplace="mul_", dunder="__mul__ __rmul__",
    augmented="__imul__", fast_inplace="mul")
def mul(a, b):
    k, dev, dt, ad, bd = binary_operands("mul", a, b)
    try:
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
        gb = F.div(F.mul(F.neg(g), a), F.mul(b, b)) if self.next[1] else None
        return ga, gb


def _float_operands(name, a, b):
    """Operands of an op that always computes in floating point (``int / int`` is float)."""
    k, dev, dt, ad, bd = binary_operands(name, a, b)
    if not dt.is_floating_point:
        dt = _dt.get_default_dtype()
        ad = k.astype(ad, dt.name) if not isinstance(ad, _SCALARS) else float(ad)
        bd = k.astype(bd, dt.name) if not isinstance(bd, _SCALARS) else float(bd)
    return k, dev, dt, ad, bd


@op("div divide true_divide", method="div divide true_divide", inplace="div_",
    dunder="__truediv__", augmented="__itruediv__", fast_inplace="div")
def div(a, b, *, rounding_mode=None):
    if rounding_mode == "floor":
        return floor_divide(a, b)
    if rounding_mode == "trunc":
        q = div(a, b)
        out = q.trunc()
        dt = binary_operands("div", a, b)[2]
        return out if dt.is_floating_point else out.to(dt)
    if rounding_mode is not None:
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    k, dev, dt, ad, bd = _float_operands("div", a, b)
    try:
        out = k.div(ad, bd)
    except Exception as exc:
        raise kernel_error("div", exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if recording(a, b):
        sa = a if isinstance(a, Tensor) else ad
        sb = b if isinstance(b, Tensor) else bd
        record_binary(r, DivBackward0(), a, b, (sa, sb), (ad, bd))
    return r


@op(reflected="__rtruediv__")
def rdiv(a, b):
    return div(b, a)


# ====================================================================== integer-style division
def _check_int_division(name, k, dt, bd):
    if dt.kind in "iu":
        if isinstance(bd, _SCALARS):
            zero = bd == 0
        else:
            zero = bool(k.to_numpy(k.max(k.eq(bd, 0), None, False)).item()) if bd.shape != (0,) \
                else False
        if zero:
            raise ZeroDivisionError(f"{name}: integer division by zero")


def _refuse_bool(name, a, b=None):
    """PyTorch implements no arithmetic ``name`` for bool tensors; neither do the backends."""
    if any(isinstance(v, Tensor) and v.dtype is _dt.bool_ for v in (a, b)):
        raise DTypeError(f"{name}: not implemented for 'Bool' tensors (convert with .long() or "
                         f".float() first)")


def _is_bool(v) -> bool:
    return v.dtype is _dt.bool_ if isinstance(v, Tensor) else isinstance(v, bool)


@op("floor_divide", method="floor_divide", inplace="floor_divide_", dunder="__floordiv__",
    augmented="__ifloordiv__")
def floor_divide(a, b):
    """``a // b`` rounding toward negative infinity (not differentiable)."""
    _refuse_bool("floor_divide", a, b)
    k, dev, dt, ad, bd = binary_operands("floor_divide", a, b)
    _check_int_division("floor_divide", k, dt, bd)
    try:
        out = k.floordiv(ad, bd)
    except Exception as exc:
        raise kernel_error("floor_divide", exc, a, b) from exc
    return _wrap(out, dt, dev, k)


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
    _refuse_bool("remainder", a, b)
    k, dev, dt, ad, bd = binary_operands("remainder", a, b)
    _check_int_division("remainder", k, dt, bd)
    try:
        out = k.remainder(ad, bd)
    except Exception as exc:
        raise kernel_error("remainder", exc, a, b) from exc
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
        gb = None
        if self.next[1]:
            q = F.div(a, b)
            gb = F.mul(F.neg(g), F.where(F.lt(q, 0.0), F.ceil(q), F.floor(q)))
        return ga, gb


@op("fmod", method="fmod", inplace="fmod_")
def fmod(a, b):
    """C's ``fmod``: the exact remainder of division rounded toward zero (sign of ``a``)."""
    _refuse_bool("fmod", a, b)
    if not isinstance(a, Tensor):
        raise TypeError(f"fmod(): argument 'input' must be Tensor, not {type(a).__name__}")
    k, dev, dt, ad, bd = binary_operands("fmod", a, b)
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
        if b == 2:
            return F.mul(F.mul(g, 2.0), a), None
        return F.mul(F.mul(g, float(b)), F.pow(a, float(b - 1))), None


class PowBackward1(KeepsOutput):
    """``a ** b`` for Tensors: PyTorch's formulas, the output kept differentiable (so the
    exponent's gradient ``g * a**b * log(a)`` has a correct gradient of its own)."""

    def grad(self, F, g, a, b, y):
        ga = gb = None
        if self.next[0]:
            zero = F.eq(b, 0.0)
            ga = F.where(zero, 0.0, F.mul(F.mul(g, b), F.pow(a, F.where(zero, 1.0,
                                                                         F.sub(b, 1.0)))))
        if self.next[1]:
            gb = F.where(F.logical_and(F.eq(a, 0.0), F.ge(b, 0.0)), 0.0,
                         F.mul(F.mul(g, y), F.log(a)))
        return ga, gb


class PowBackward2(KeepsOutput):
    """``a ** b`` for a number ``a`` and a Tensor ``b``."""

    def grad(self, F, g, b, y):
        a = self.base
        if a == 0:
            return None, F.where(F.ge(b, 0.0), 0.0, F.mul(F.mul(g, y), -math.inf))
        log_a = math.log(a) if a > 0 else math.nan
        return None, F.mul(F.mul(g, y), log_a)


@op("pow", method="pow", inplace="pow_", dunder="__pow__", augmented="__ipow__")
def pow(a, b):
    if not (b.__class__ in (int, float) and isinstance(a, Tensor) and a.dtype.kind == "f"):
        _refuse_bool("pow", a, b)
    k, dev, dt, ad, bd = binary_operands("pow", a, b)
    if dt.kind in "iu":
        negative = (bd < 0) if isinstance(bd, _SCALARS) else bool(
            k.to_numpy(k.max(k.lt(bd, 0), None, False)).item()) if _numel(bd) else False
        if negative:
            raise DTypeError("pow: Integers to negative integer powers are not allowed.")
    try:
        out = k.pow(ad, bd)
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


@op(reflected="__rpow__")
def rpow(a, b):
    return pow(b, a)


def _numel(arr) -> int:
    n = 1
    for s in arr.shape:
        n *= s
    return n


# ====================================================================== composites
@op("lerp", method="lerp", inplace="lerp_")
def lerp(a, b, weight):
    return a + (b - a) * weight


@op("addcmul", method="addcmul", inplace="addcmul_")
def addcmul(x, t1, t2, *, value=1):
    return x + t1 * t2 * value


@op("addcdiv", method="addcdiv", inplace="addcdiv_")
def addcdiv(x, t1, t2, *, value=1):
    return x + t1 / t2 * value
