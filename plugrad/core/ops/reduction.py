"""Sums, products and scans: sum, mean, nansum, prod, cumsum, cumprod, logsumexp, all, any.

Kernels never see an empty reduction where there is no identity (logsumexp, all, any):
the core fills those results itself, so every backend agrees on them.
"""
from __future__ import annotations

import math

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.composite import CompositeBackward
from plugrad.core.autograd.grad_ops import expand_back
from plugrad.core.autograd.node import OUTPUT, KeepsOutput, Node
from plugrad.core.autograd.record import record
from plugrad.core.errors import DTypeError
from plugrad.core.grad_mode import _state
from plugrad.core.ops._dims import (count, filled, int_to_long, normalize_dims,
                                    reduced_shape)
from plugrad.core.ops._opmath import half_in_float32, half_kernel
from plugrad.core.ops.declare import op
from plugrad.core.ops import shape as _shape
from plugrad.core.tensor import _wrap, _wrap_dim


# ---------------------------------------------------------------------- sum, mean
class SumBackward0(Node):
    """The gradient broadcast back over the reduced axes (scaled for a mean, cast back to
    the input's dtype when the sum ran in another)."""

    scale = 1.0
    cast = None

    def grad(self, F, g):
        if self.scale != 1.0:
            g = F.mul(g, self.scale)
        if self.cast is not None:
            g = F.astype(g, self.cast)
        return (expand_back(F, g, self.shape, self.axes, self.keepdim),)


class MeanBackward0(SumBackward0):
    """See the base class."""


def _reduce_sum(name, x, dim, keepdim, dtype, mean):
    shape = x._data.shape
    axes = None if dim is None else normalize_dims(dim, len(shape), name)
    k = x._k
    out_dt = x.dtype if dtype is None else _dt.get_dtype(dtype)
    if mean:
        if not out_dt.is_floating_point:
            raise DTypeError(f"mean(): could not infer output dtype. Input dtype must be "
                             f"either a floating point or complex dtype. Got: "
                             f"{out_dt.name.capitalize()}")
    elif dtype is None and out_dt.kind in "biu":
        out_dt = _dt.int64  # PyTorch sums bool and integers in int64
    scale = 1.0
    if mean and out_dt.itemsize == 2:  # half: sum and divide in float32, round once (a count
        # above 65504 is inf in float16, and so would the partial sums be)
        n = count(shape, axes)
        scale = 1.0 / n if n else math.nan
        out = k.sum(k.astype(x._data, "float32"), axes, keepdim)
        out = k.div(out, float(n)) if n else k.mul(out, math.nan)
        out = k.astype(out, out_dt.name)
    else:
        data = x._data if out_dt is x.dtype else k.astype(x._data, out_dt.name)
        out = k.sum(data, axes, keepdim)
        if mean:
            n = count(shape, axes)
            scale = 1.0 / n if n else math.nan  # the mean of nothing is NaN
            out = k.div(out, float(n)) if n else k.mul(out, math.nan)
    r = _wrap(out, out_dt, x.device, k)
    if x._rg and _state.enabled:
        node = MeanBackward0() if mean else SumBackward0()
        node.shape, node.axes, node.keepdim = shape, axes, keepdim
        if scale != 1.0:
            node.scale = scale
        if out_dt is not x.dtype:
            node.cast = x.dtype.name
        record(r, node, (x,))
    return r


@op("sum", method="sum")
def sum(x, dim=None, keepdim=False, *, dtype=None):
    return _reduce_sum("sum", x, dim, keepdim, dtype, False)


@op("mean", method="mean")
def mean(x, dim=None, keepdim=False, *, dtype=None):
    return _reduce_sum("mean", x, dim, keepdim, dtype, True)


@op("nansum", method="nansum")
def nansum(x, dim=None, keepdim=False, *, dtype=None):
    return sum(x.masked_fill(x.isnan(), 0), dim, keepdim, dtype=dtype)


# ---------------------------------------------------------------------- products
def _narrow(F, x, axis, start, stop):
    return F.slice(x, tuple(slice(start, stop, 1) if i == axis else slice(0, n, 1)
                            for i, n in enumerate(x.shape)))


def _scan_mul(F, x, axis: int):
    """Inclusive cumulative product in ``log2(n)`` steps (Hillis-Steele), written in
    differentiable ops, so its gradient is exact at any order, zeros included."""
    n = x.shape[axis]
    shift = 1
    while shift < n:
        head = _narrow(F, x, axis, 0, shift)
        tail = F.mul(_narrow(F, x, axis, shift, n), _narrow(F, x, axis, 0, n - shift))
        x = F.concat([head, tail], axis)
        shift *= 2
    return x


def _exclusive_cumprod(F, x, index):
    """Product of the elements *before* each position along the last axis."""
    last = len(x.shape) - 1
    n = x.shape[-1]
    ones = F.full(tuple(x.shape[:-1]) + (1,), 1.0, F.dtype_of(x), index)
    if n <= 1:
        return F.broadcast_to(ones, x.shape) if n else x
    return F.concat([ones, _narrow(F, _scan_mul(F, x, last), last, 0, n - 1)], last)


def _prod_of_others(F, x, axes, index):
    """For each element, the product of the *other* elements of its reduced slice: the
    product before times the product after each position, so zeros need no division."""
    ndim = len(x.shape)
    axes = tuple(range(ndim)) if axes is None else axes
    keep = [i for i in range(ndim) if i not in axes]
    order = keep + list(axes)
    moved = F.permute(x, tuple(order))
    lead = tuple(moved.shape[:len(keep)])
    flat = F.reshape(moved, lead + (math.prod(moved.shape[len(keep):]),))
    last = len(flat.shape) - 1
    before = _exclusive_cumprod(F, flat, index)
    after = F.flip(_exclusive_cumprod(F, F.flip(flat, (last,)), index), (last,))
    others = F.reshape(F.mul(before, after), moved.shape)
    return F.permute(others, tuple(order.index(i) for i in range(ndim)))


def _count_zeros(F, x) -> int:
    """How many elements of ``x`` are 0 (a host read, as PyTorch's rules make)."""
    if not math.prod(x.shape):
        return 0
    k, data = (x._k, x._data) if getattr(F, "tensors", False) else (F, x)
    return int(k.to_numpy(k.sum(k.astype(k.eq(data, 0.0), "int64"), None, False)))


class ProdBackward0(KeepsOutput):
    """PyTorch's ``prod_backward``: ``g * (result / x)`` when no element of ``x`` is 0,
    else the product of the other elements (before times after each position: zeros need
    no division); over all elements with two zeros or more and no graph to record, 0."""

    def grad(self, F, g, x, y):
        if self.cast is not None:
            g, y = F.astype(g, self.cast), F.astype(y, self.cast)
        if not x.shape:
            return (g,)
        g = expand_back(F, g, x.shape, self.axes, self.keepdim)
        zeros = _count_zeros(F, x)
        if not zeros:
            return (F.mul(g, F.div(expand_back(F, y, x.shape, self.axes, self.keepdim), x)),)
        if zeros > 1 and self.axes is None and not getattr(F, "tensors", False):
            return (F.mul(g, 0.0),)
        return (F.mul(g, _prod_of_others(F, x, self.axes, self.device.index)),)


@op("prod", method="prod")
@half_in_float32
def prod(x, dim=None, keepdim=False, *, dtype=None):
    shape = x._data.shape
    axes = normalize_dims(dim, len(shape), "prod")
    k = x._k
    out_dt = int_to_long(x, dtype)
    data = x._data if out_dt is x.dtype else k.astype(x._data, out_dt.name)
    r = _wrap(k.prod(data, axes, keepdim), out_dt, x.device, k)
    if x._rg and _state.enabled:
        node = ProdBackward0()
        node.axes, node.keepdim = axes, keepdim
        node.cast = None if out_dt is x.dtype else x.dtype.name
        record(r, node, (x,), (x, OUTPUT))
    return r


class CumprodBackward0(KeepsOutput, CompositeBackward):
    """PyTorch's ``cumprod_backward``: with no zero in ``x``, the reversed cumulative sum
    of ``result * g`` divided by ``x``; with zeros, the gradient of the scan itself
    (exact at any order)."""

    composite = staticmethod(_scan_mul)

    def grad(self, F, g, x, y):
        if _count_zeros(F, x):
            return CompositeBackward.grad(self, F, g, x)
        axis = self.params["axis"]
        w = F.mul(y, g)
        return (F.div(F.flip(F.cumsum(F.flip(w, (axis,)), axis), (axis,)), x),)


@op("cumprod", method="cumprod", inplace="cumprod_")
@half_in_float32
def cumprod(x, dim, *, dtype=None):
    """Cumulative product as a scan of kernel calls."""
    axis = _wrap_dim(dim, x.ndim, "cumprod")
    out_dt = int_to_long(x, dtype)
    if out_dt is not x.dtype:
        x = x.to(out_dt)
    if x.ndim == 0 or x.numel() == 0:
        return _shape.clone(x)
    k = x._k
    r = _wrap(_scan_mul(k, x._data, axis), x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = CumprodBackward0()
        node.params = {"axis": axis}
        record(r, node, (x,), (x, OUTPUT))
    return r


# ---------------------------------------------------------------------- scans
class CumsumBackward0(Node):

    def grad(self, F, g):
        axis = self.axis
        g = F.flip(F.cumsum(F.flip(g, (axis,)), axis), (axis,))
        return (g if self.cast is None else F.astype(g, self.cast),)


@op("cumsum", method="cumsum", inplace="cumsum_")
@half_in_float32
def cumsum(x, dim, *, dtype=None):
    axis = _wrap_dim(dim, x.ndim, "cumsum")
    out_dt = int_to_long(x, dtype)
    k = x._k
    data = x._data if out_dt is x.dtype else k.astype(x._data, out_dt.name)
    if x.ndim == 0:
        out = _shape.clone(x)
        return out if out_dt is x.dtype else out.to(out_dt)
    r = _wrap(k.cumsum(data, axis), out_dt, x.device, k)
    if x._rg and _state.enabled:
        node = CumsumBackward0()
        node.axis = axis
        node.cast = None if out_dt is x.dtype else x.dtype.name
        record(r, node, (x,))
    return r


# ---------------------------------------------------------------------- logsumexp
class LogsumexpBackward0(KeepsOutput):
    """``g * softmax(x)``, from the kept output, so double backward is exact."""

    def grad(self, F, g, x, y):
        yk = expand_back(F, y, x.shape, self.axes, self.keepdim)
        gk = expand_back(F, g, x.shape, self.axes, self.keepdim)
        return (F.mul(gk, F.exp(F.sub(x, yk))),)


@op("logsumexp", method="logsumexp")
def logsumexp(x, dim, keepdim=False):
    """``log(sum(exp(x)))`` without overflow; an empty or all ``-inf`` slice gives ``-inf``."""
    if not x.dtype.is_floating_point:
        x = x.to(_dt.get_default_dtype())
    axes = normalize_dims(dim, x.ndim, "logsumexp")
    shape = x._data.shape
    k = x._k
    if count(shape, axes) == 0:  # still a result of x (its gradient is empty), as PyTorch
        r = filled(x, reduced_shape(shape, axes, keepdim), -math.inf, x.dtype)
    else:
        r = _wrap(half_kernel(k, x._data, lambda d: k.logsumexp(d, axes, keepdim)), x.dtype,
                  x.device, k)
    if x._rg and _state.enabled:
        node = LogsumexpBackward0()
        node.axes, node.keepdim = axes, keepdim
        record(r, node, (x,), (x, OUTPUT))
    return r


# ---------------------------------------------------------------------- logical
def _logical(name, x, dim, keepdim, is_any):
    """all/any as max/min of a bool array; an empty reduction gives the identity. A uint8
    input gives uint8 (PyTorch keeps that dtype for backward compatibility)."""
    axes = normalize_dims(dim, x.ndim, name)
    shape = x._data.shape
    out_dt = _dt.uint8 if x.dtype is _dt.uint8 else _dt.bool_
    if count(shape, axes) == 0:
        return filled(x, reduced_shape(shape, axes, keepdim), int(not is_any), out_dt)
    k = x._k
    b = x._data if x.dtype is _dt.bool_ else k.ne(x._data, 0)
    out = k.max(b, axes, keepdim) if is_any else k.min(b, axes, keepdim)
    if out_dt is _dt.uint8:
        out = k.astype(out, "uint8")
    return _wrap(out, out_dt, x.device, k)


@op("all", method="all")
def all(x, dim=None, keepdim=False):
    return _logical("all", x, dim, keepdim, False)


@op("any", method="any")
def any(x, dim=None, keepdim=False):
    return _logical("any", x, dim, keepdim, True)


@op("count_nonzero", method="count_nonzero")
def count_nonzero(x, dim=None):
    return sum(x != 0, dim)
