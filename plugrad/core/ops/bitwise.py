"""Bit operations: ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` and the ``bitwise_*`` functions.

On every integer dtype (two's complement, PyTorch's promotion with weak scalars) and, for
and/or/xor/not, on bool. Shifts follow PyTorch where C leaves them undefined: a shift by a
negative amount or by the bit width or more gives 0 (``<<``) or the sign fill (``>>``). Not
differentiable; floating operands raise as in PyTorch.
"""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core.errors import DTypeError, DTypeNotImplementedError, c_dtype_name, kernel_error
from plugrad.core.ops._base import _SCALARS, binary_operands
from plugrad.core.ops.declare import op
from plugrad.core.tensor import Tensor, _wrap

_BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}


def _refuse(name, kernel_name, dt):
    raise DTypeNotImplementedError(f'{name}: "{kernel_name}_cpu" not implemented for {c_dtype_name(dt)!r}')


def _logic(name, kernel, logical, a, b):
    k, dev, dt, ad, bd = binary_operands(name, a, b)
    if dt.is_floating_point:
        _refuse(name, name, dt)
    try:
        if dt is _dt.bool_:
            out = getattr(k, logical)(bool(ad) if isinstance(ad, _SCALARS) else ad,
                                      bool(bd) if isinstance(bd, _SCALARS) else bd)
        else:
            out = getattr(k, kernel)(ad, bd)
    except Exception as exc:
        raise kernel_error(name, exc, a, b) from exc
    return _wrap(out, dt, dev, k)


@op("bitwise_and", method="bitwise_and", inplace="bitwise_and_",
    dunder="__and__ __rand__", augmented="__iand__")
def bitwise_and(input, other):
    return _logic("bitwise_and", "bitwise_and", "logical_and", input, other)


@op("bitwise_or", method="bitwise_or", inplace="bitwise_or_", dunder="__or__ __ror__",
    augmented="__ior__")
def bitwise_or(input, other):
    return _logic("bitwise_or", "bitwise_or", "logical_or", input, other)


@op("bitwise_xor", method="bitwise_xor", inplace="bitwise_xor_", dunder="__xor__ __rxor__",
    augmented="__ixor__")
def bitwise_xor(input, other):
    return _logic("bitwise_xor", "bitwise_xor", "logical_xor", input, other)


@op("bitwise_not", method="bitwise_not", inplace="bitwise_not_", dunder="__invert__")
def bitwise_not(input):
    if not isinstance(input, Tensor):
        raise TypeError(f"bitwise_not(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    k, dt = input._k, input.dtype
    if dt.is_floating_point:
        _refuse("bitwise_not", "bitwise_not", dt)
    out = k.logical_not(input._data) if dt is _dt.bool_ else k.bitwise_not(input._data)
    return _wrap(out, dt, input.device, k)


def _shift(name, kernel_name, a, b):
    k, dev, dt, ad, bd = binary_operands(name, a, b)
    if dt.kind not in "iu":
        _refuse(name, kernel_name, dt)
    if isinstance(bd, _SCALARS) and not 0 <= bd < _BITS[dt.name]:
        # out of range (a weak scalar need not even fit the dtype): 0, or the sign fill
        if name == "bitwise_left_shift" or dt.kind == "u":
            out = k.mul(ad, 0)
        else:
            out = k.neg(k.astype(k.lt(ad, 0), dt.name))
        return _wrap(out, dt, dev, k)
    try:
        out = (k.left_shift if name == "bitwise_left_shift" else k.right_shift)(ad, bd)
    except Exception as exc:
        raise kernel_error(name, exc, a, b) from exc
    return _wrap(out, dt, dev, k)


@op("bitwise_left_shift", method="bitwise_left_shift", inplace="bitwise_left_shift_",
    dunder="__lshift__", augmented="__ilshift__")
def bitwise_left_shift(input, other):
    return _shift("bitwise_left_shift", "lshift", input, other)


@op("bitwise_right_shift", method="bitwise_right_shift", inplace="bitwise_right_shift_",
    dunder="__rshift__", augmented="__irshift__")
def bitwise_right_shift(input, other):
    return _shift("bitwise_right_shift", "rshift", input, other)


@op(reflected="__rlshift__")
def rlshift(a, b):
    return bitwise_left_shift(b, a)


@op(reflected="__rrshift__")
def rrshift(a, b):
    return bitwise_right_shift(b, a)
