"""Selection by condition or comparison: ``where``, ``clamp``, ``maximum``, ``minimum``."""
from __future__ import annotations

import warnings

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import input_meta, record, record_binary, recording
from plugrad.core.errors import (DTypeError, DTypeNotImplementedError, c_dtype_name, check_device,
                                 kernel_error)
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops._base import binary_operands
from plugrad.core.ops._bounds import clamp_data
from plugrad.core.ops.declare import op
from plugrad.core.tensor import Tensor, _wrap


# ====================================================================== where
class WhereBackward0(Node):

    def grad(self, F, g, cond):
        return (None, F.where(cond, g, 0.0) if self.next[1] else None,
                F.where(cond, 0.0, g) if self.next[2] else None)


@op("where", method={"where": lambda self, cond, other: where(cond, self, other)})
def where(cond, a=None, b=None):
    """``a`` where ``cond`` else ``b``; with only ``cond``, the indices of its non-zeros."""
    if a is None and b is None:
        return cond.nonzero(as_tuple=True)
    if not isinstance(cond, Tensor):
        raise TypeError("where: condition must be a Tensor")
    if cond.dtype is not _dt.bool_:
        if cond.dtype is not _dt.uint8:
            raise DTypeError(f"where expected condition to be a boolean tensor, but got a "
                             f"tensor with dtype {c_dtype_name(cond.dtype)}")
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated "
                      "and will be removed in a future version of PyTorch. Use a boolean "
                      "condition instead.", UserWarning, stacklevel=2)
        cond = cond != 0
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if isinstance(a, Tensor) != isinstance(b, Tensor):  # a scalar operand: checked
            t, s = (a, b) if isinstance(a, Tensor) else (b, a)
            if type(s) is int and t.dtype.kind in "iu":
                _dt.checked_scalar("where", s, t.dtype)
        k, dev, dt, ad, bd = binary_operands("where", a, b)
        other = a if isinstance(a, Tensor) else b
        if cond.device is not dev:
            check_device("where", cond, other)
    else:
        k, dev = cond._k, cond.device
        dt = _dt.result_type_of(((_dt.scalar_dtype(a), True), (_dt.scalar_dtype(b), True)))
        ad = k.full((), a, dt.name, dev.index)
        bd = b
    try:
        out = k.where(cond._data, ad, bd)
    except Exception as exc:
        raise kernel_error("where", exc, cond, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if recording(a, b):
        node = WhereBackward0()
        record(r, node, (cond, a, b), (cond,))
        node.meta = input_meta(r, (cond, a, b))
    return r


# ====================================================================== maximum, minimum
class MaximumBackward0(Node):
    """PyTorch's rule: ties split the gradient evenly; where a comparison is false both
    ways (a NaN operand), both operands get the whole gradient."""

    def grad(self, F, g, a, b):
        half = F.where(F.eq(a, b), F.mul(g, 0.5), g)
        a_loses, b_loses = (F.gt(a, b), F.lt(a, b)) if self.flip else (F.lt(a, b), F.gt(a, b))
        return (F.where(a_loses, 0.0, half) if self.next[0] else None,
                F.where(b_loses, 0.0, half) if self.next[1] else None)


def _extremum(name, a, b, flip):
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{name}(): argument 'other' must be Tensor, not "
                        f"{type(b if isinstance(a, Tensor) else a).__name__}")
    k, dev, dt, ad, bd = binary_operands(name, a, b)
    try:
        out = k.minimum(ad, bd) if flip else k.maximum(ad, bd)
    except Exception as exc:
        raise kernel_error(name, exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if recording(a, b):
        node = MaximumBackward0()
        node.flip = flip
        record_binary(r, node, a, b, (a, b), (ad, bd))
    return r


@op("maximum", method="maximum", inplace="maximum_")
def maximum(a, b):
    return _extremum("maximum", a, b, False)


@op("minimum", method="minimum", inplace="minimum_")
def minimum(a, b):
    return _extremum("minimum", a, b, True)


# ====================================================================== clamp
class ClampBackward1(Node):
    """Convention (PyTorch's): at the boundary the gradient passes through."""

    def grad(self, F, g, x):
        keep = F.ge(x, self.bound) if self.lower else F.le(x, self.bound)
        return (F.where(keep, g, 0.0),)


@op("clamp clip", method="clamp clip", inplace="clamp_ clip_")
def clamp(x, min=None, max=None):
    """Limit ``x`` to ``[min, max]``; ``min > max`` gives ``max`` everywhere."""
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    if x.dtype is _dt.bool_ and min is not None and max is not None and all(
            b.dtype is _dt.bool_ if isinstance(b, Tensor) else isinstance(b, bool)
            for b in (min, max)):  # PyTorch clamps bool by one bound only
        kernel = "clamp_cpu" if isinstance(min, Tensor) else "clamp_scalar_cpu"
        raise DTypeNotImplementedError(f"clamp: \"{kernel}\" not implemented for 'Bool' "
                                       f"(a bool tensor takes min or max, not both)")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if not all(b is None or isinstance(b, Tensor) for b in (min, max)):
            raise TypeError(f"clamp() received an invalid combination of arguments - got "
                            f"min={type(min).__name__}, max={type(max).__name__}: the bounds "
                            f"are both Tensors (or None) or both numbers")
        return _clamp_tensor(x, min, max)
    out = x
    if min is not None:
        out = _clamp_scalar(out, min, lower=True)
    if max is not None:
        out = _clamp_scalar(out, max, lower=False)
    return out


class ClampBackward0(Node):
    """PyTorch's rule for tensor bounds: ``x`` gets ``g`` where ``min <= x <= max`` (not at
    a NaN ``x``); ``min`` where ``x < min < max``; ``max`` where ``x > max`` or
    ``max < min``. Where ``min == max`` neither bound gets it."""

    def grad(self, F, g, x, lo, hi):
        gx = glo = ghi = None
        if self.next[0]:
            keep = None
            if lo is not None:
                keep = F.ge(x, lo)
            if hi is not None:
                le = F.le(x, hi)
                keep = le if keep is None else F.logical_and(keep, le)
            gx = F.where(keep, g, 0.0)
        if lo is not None and self.next[1]:
            pick = F.lt(x, lo)
            if hi is not None:
                pick = F.logical_and(pick, F.lt(lo, hi))
            glo = F.where(pick, g, 0.0)
        if hi is not None and self.next[2]:
            pick = F.gt(x, hi)
            if lo is not None:
                pick = F.logical_or(pick, F.lt(hi, lo))
            ghi = F.where(pick, g, 0.0)
        return gx, glo, ghi


def _clamp_tensor(x, lo, hi):
    """clamp with a Tensor bound: ``minimum(maximum(x, min), max)`` (NaN anywhere stays
    NaN), one node with PyTorch's gradient."""
    with no_grad():
        out = x
        if lo is not None:
            out = maximum(out, lo)
        if hi is not None:
            out = minimum(out, hi)
    if recording(x, lo, hi):
        node = ClampBackward0()
        record(out, node, (x, lo, hi), (x, lo, hi))
        node.meta = input_meta(out, (x, lo, hi))
    return out


def _clamp_scalar(x, bound, lower):
    k = x._k
    dt = _dt.result_with_scalar(x.dtype, bound)
    data = x._data if dt is x.dtype else k.astype(x._data, dt.name)
    bound_v = float(bound) if dt.is_floating_point else _dt.checked_scalar("clamp", bound, dt)
    out = clamp_data(k, data, bound_v if lower else None, None if lower else bound_v,
                     dt.is_floating_point)
    r = _wrap(out, dt, x.device, k)
    if recording(x):
        node = ClampBackward1()
        node.bound, node.lower = bound_v, lower
        record(r, node, (x,), (x,), (data,))
    return r


@op("clamp_min", method="clamp_min", inplace="clamp_min_")
def clamp_min(x, min):
    return clamp(x, min=min)


@op("clamp_max", method="clamp_max", inplace="clamp_max_")
def clamp_max(x, max):
    return clamp(x, max=max)
