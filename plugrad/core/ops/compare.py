"""Comparison, logic and classification: ``==``, ``<``, ``&``, ``isnan``, ``isclose``.

None is differentiable: results are bool tensors.
"""
from __future__ import annotations

import math

from plugrad.core import dtypes as _dt
from plugrad.core.errors import DTypeError, c_dtype_name, kernel_error
from plugrad.core.ops._base import _SCALARS, binary_operands, tensors_only
from plugrad.core.ops.declare import op
from plugrad.core.tensor import Tensor, _wrap


def _compare(name, kernel, a, b):
    k, dev, dt, ad, bd = binary_operands(name, a, b)
    try:
        out = getattr(k, kernel)(ad, bd)
    except Exception as exc:
        raise kernel_error(name, exc, a, b) from exc
    return _wrap(out, _dt.bool_, dev, k)


@op("eq", method="eq", inplace="eq_", dunder="__eq__")
def eq(a, b): return _compare("eq", "eq", a, b)


@op("ne not_equal", method="ne not_equal", inplace="ne_ not_equal_", dunder="__ne__")
def ne(a, b): return _compare("ne", "ne", a, b)


@op("lt less", method="lt less", inplace="lt_ less_", dunder="__lt__")
def lt(a, b): return _compare("lt", "lt", a, b)


@op("le less_equal", method="le less_equal", inplace="le_ less_equal_", dunder="__le__")
def le(a, b): return _compare("le", "le", a, b)


@op("gt greater", method="gt greater", inplace="gt_ greater_", dunder="__gt__")
def gt(a, b): return _compare("gt", "gt", a, b)


@op("ge greater_equal", method="ge greater_equal", inplace="ge_ greater_equal_",
    dunder="__ge__")
def ge(a, b): return _compare("ge", "ge", a, b)


def _logical(name, kernel, a, b):
    tensors_only(name, a, b)
    k, dev, dt, ad, bd = binary_operands(name, a, b)  # both operands now have dtype dt
    is_bool = dt is _dt.bool_
    ad = bool(ad) if isinstance(ad, _SCALARS) else (ad if is_bool else k.ne(ad, 0))
    bd = bool(bd) if isinstance(bd, _SCALARS) else (bd if is_bool else k.ne(bd, 0))
    return _wrap(getattr(k, kernel)(ad, bd), _dt.bool_, dev, k)


@op("logical_and", method="logical_and", inplace="logical_and_")
def logical_and(a, b): return _logical("logical_and", "logical_and", a, b)


@op("logical_or", method="logical_or", inplace="logical_or_")
def logical_or(a, b): return _logical("logical_or", "logical_or", a, b)


@op("logical_xor", method="logical_xor", inplace="logical_xor_")
def logical_xor(a, b): return _logical("logical_xor", "logical_xor", a, b)


@op("logical_not", method="logical_not", inplace="logical_not_")
def logical_not(x):
    k = x._k
    data = x._data if x.dtype is _dt.bool_ else k.ne(x._data, 0)
    return _wrap(k.logical_not(data), _dt.bool_, x.device, k)


# ---------------------------------------------------------------------- classification
@op("isnan", method="isnan")
def isnan(x):
    if not x.dtype.is_floating_point:
        return _wrap(x._k.full(x._data.shape, False, "bool", x.device.index), _dt.bool_,
                     x.device, x._k)
    return _wrap(x._k.isnan(x._data), _dt.bool_, x.device, x._k)


@op("isinf", method="isinf")
def isinf(x):
    if not x.dtype.is_floating_point:
        return isnan(x)
    return _wrap(x._k.eq(x._k.abs(x._data), math.inf), _dt.bool_, x.device, x._k)


@op("isfinite", method="isfinite")
def isfinite(x):
    return logical_not(logical_or(isnan(x), isinf(x)))


@op("isclose", method="isclose")
def isclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    """PyTorch's closeness: equal values (infinities included) are close, else a finite
    ``|a - b| <= atol + |rtol * b|``; both operands of one dtype (bool and integers compare
    as floats)."""
    for name, t in (("input", a), ("other", b)):
        if not isinstance(t, Tensor):
            raise TypeError(f"isclose(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    if a.dtype is not b.dtype:
        raise DTypeError(f"isclose: {c_dtype_name(a.dtype)} did not match {c_dtype_name(b.dtype)} "
                         f"(input is {a.dtype.name}, other is {b.dtype.name}; isclose needs "
                         f"one dtype)")
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose: rtol and atol must be greater than or equal to zero, but "
                         f"got rtol={rtol}, atol={atol}")
    close = a == b
    if equal_nan and a.dtype.is_floating_point:
        close = close | (a.isnan() & b.isnan())
    if rtol == 0 and atol == 0:
        return close
    if not a.dtype.is_floating_point:  # bool and integers: the errors in the default float
        # dtype, as PyTorch (no integer wraparound of a - b; 2**24 + 1 is close to 2**24)
        a, b = a.to(_dt.get_default_dtype()), b.to(_dt.get_default_dtype())
    actual = (a - b).abs()
    return close | (isfinite(actual) & (actual <= atol + (rtol * b).abs()))


def allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False) -> bool:
    return bool(isclose(a, b, rtol, atol, equal_nan).all())


def equal(a, b) -> bool:
    """True if both tensors have the same shape and values."""
    return tuple(a.shape) == tuple(b.shape) and bool((a == b).all())
