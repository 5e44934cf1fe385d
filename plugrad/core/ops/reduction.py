"""Reductions (sum, mean, max, var, logsumexp, ...) and their gradient rules.

Kernels never see an empty reduction where there is no identity (max, logsumexp, all, any):
the core fills those results itself, so every backend agrees on them.
"""
from __future__ import annotations

import builtins
import math
from collections import namedtuple

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import Node
from plugrad.core.factories import arange, ones_like
from plugrad.core.ops import shape as _ops_shape
from plugrad.core.ops._base import (DTypeError, OpError, Tensor, _state, _wrap, attach,
                                    expand_back, expand_back_array, save)
from plugrad.core.autograd.node import KeepsOutput as _UnaryNode
from plugrad.core.ops.select import maximum, minimum, where
from plugrad.core.tensor import _wrap_dim

values_indices = namedtuple("return_types", ["values", "indices"])


# ---------------------------------------------------------------------- helpers
def normalize_dims(dim, ndim: int, op: str):
    """``dim`` (None, an int or a sequence) as a sorted tuple of axes, or None for all."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        axes = tuple(sorted({_wrap_dim(d, ndim, op) for d in dim}))
        if len(axes) != len(dim):
            raise RuntimeError(f"{op}: dim {list(dim)} appears multiple times in the list of "
                               f"dims")
    else:
        axes = (_wrap_dim(int(dim), ndim, op),)
    if ndim == 0:
        return None
    return axes


def _kept_shape(shape: tuple, axes) -> tuple:
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _reduced_shape(shape: tuple, axes, keepdim: bool) -> tuple:
    if keepdim:
        return _kept_shape(shape, axes)
    return () if axes is None else tuple(n for i, n in enumerate(shape) if i not in axes)


def _count(shape: tuple, axes) -> int:
    """How many elements each output of a reduction over ``axes`` combines."""
    if axes is None:
        return math.prod(shape)
    return math.prod(n for i, n in enumerate(shape) if i in axes)


def _expand_back(g: Tensor, shape: tuple, axes, keepdim: bool) -> Tensor:
    """A reduced gradient broadcast back over the reduced axes (one op, see ``expand_back``)."""
    return expand_back(g, tuple(shape), axes, keepdim)


def _filled(x: Tensor, shape: tuple, value, dtype) -> Tensor:
    k = x._k
    return _wrap(k.full(shape, value, dtype.name, x.device.index), dtype, x.device, k)


def _check_float(op: str, x: Tensor, what: str) -> None:
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}(): {what}, but got {x.dtype.name} input of shape "
                         f"{list(x.shape)}")


# ---------------------------------------------------------------------- sum, mean
class SumBackward0(Node):

    cast = False  # the result's dtype is not the input's

    def backward(self, g):
        if self.scale != 1.0:
            g = g * self.scale
        if g.dtype is not self.in_dtype:
            g = g.to(self.in_dtype)
        return (_expand_back(g, self.shape, self.axes, self.keepdim),)

    def backward_arrays(self, k, g):
        if self.cast:
            return None
        if self.scale != 1.0:
            g = k.mul(g, self.scale)
        return (expand_back_array(k, g, self.shape, self.axes, self.keepdim),)


class MeanBackward0(SumBackward0):
    """See the base class."""


def _reduce_sum(op, x, dim, keepdim, dtype, mean):
    shape = x._data.shape
    axes = normalize_dims(dim, len(shape), op)
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
    if mean and out_dt is _dt.float16:  # sum and divide in float32, round once (a count
        # above 65504 is inf in float16, and so would the partial sums be)
        data = k.astype(x._data, "float32")
        count = _count(shape, axes)
        scale = 1.0 / count if count else math.nan
        out = k.sum(data, axes, keepdim)
        out = k.div(out, float(count)) if count else k.mul(out, math.nan)
        out = k.astype(out, "float16")
    else:
        data = x._data if out_dt is x.dtype else k.astype(x._data, out_dt.name)
        out = k.sum(data, axes, keepdim)
        if mean:
            count = _count(shape, axes)
            scale = 1.0 / count if count else math.nan  # the mean of nothing is NaN
            out = k.div(out, float(count)) if count else k.mul(out, math.nan)
    r = _wrap(out, out_dt, x.device, k)
    if x._rg and _state.enabled:
        node = MeanBackward0() if mean else SumBackward0()
        node.shape, node.axes, node.keepdim, node.scale = shape, axes, keepdim, scale
        node.in_dtype = x.dtype
        if out_dt is not x.dtype:
            node.cast = True
        attach(r, node, (x,))
    return r


def sum(x, dim=None, keepdim=False, *, dtype=None):
    return _reduce_sum("sum", x, dim, keepdim, dtype, mean=False)


def mean(x, dim=None, keepdim=False, *, dtype=None):
    return _reduce_sum("mean", x, dim, keepdim, dtype, mean=True)


def nansum(x, dim=None, keepdim=False, *, dtype=None):
    return sum(x.masked_fill(x.isnan(), 0), dim, keepdim, dtype=dtype)


# ---------------------------------------------------------------------- products
def _scan_mul(x: Tensor, axis: int) -> Tensor:
    """Inclusive cumulative product in ``log2(n)`` Tensor steps (Hillis-Steele scan).

    Written in differentiable ops, so its gradient is exact at any order, zeros included.
    """
    n = x.shape[axis]
    shift = 1
    while shift < n:
        head = x.narrow(axis, 0, shift)
        tail = x.narrow(axis, shift, n - shift) * x.narrow(axis, 0, n - shift)
        x = _ops_shape.cat([head, tail], axis)
        shift *= 2
    return x


def _exclusive_cumprod(x: Tensor) -> Tensor:
    """Product of the elements *before* each position along the last axis."""
    n = x.shape[-1]
    if n <= 1:
        return ones_like(x)
    ones = ones_like(x.narrow(-1, 0, 1))
    return _ops_shape.cat([ones, _scan_mul(x, x.ndim - 1).narrow(-1, 0, n - 1)], -1)


def _prod_of_others(x: Tensor, axes) -> Tensor:
    """For each element, the product of the *other* elements of its reduced slice.

    The slice is moved to one trailing axis; the product before times the product after
    each position needs no division, so zeros are fine.
    """
    axes = tuple(range(x.ndim)) if axes is None else axes
    keep = [i for i in range(x.ndim) if i not in axes]
    order = keep + list(axes)
    moved = x.permute(order)
    # the trailing size is spelled out: -1 is ambiguous when the tensor is empty
    flat = moved.reshape(tuple(moved.shape[:len(keep)]) + (math.prod(moved.shape[len(keep):]),))
    others = _exclusive_cumprod(flat) * _exclusive_cumprod(flat.flip(-1)).flip(-1)
    return others.reshape(moved.shape).permute([order.index(i) for i in range(x.ndim)])


class ProdBackward0(Node):
    """d prod / d x_i = the product of the other elements (no division: zeros are fine)."""

    def backward(self, g):
        (x,) = self.saved
        g = _expand_back(g, x.shape, self.axes, self.keepdim)
        return (g * _prod_of_others(x, self.axes),) if x.ndim else (g,)


def _int_to_long(x, dtype):
    """The result dtype of sum-like ops: ``dtype``, else int64 for bool/int input."""
    if dtype is not None:
        return _dt.get_dtype(dtype)
    return _dt.int64 if x.dtype.kind in "biu" else x.dtype


def prod(x, dim=None, keepdim=False, *, dtype=None):
    shape = x._data.shape
    axes = normalize_dims(dim, len(shape), "prod")
    k = x._k
    out_dt = _int_to_long(x, dtype)
    data = x._data if out_dt is x.dtype else k.astype(x._data, out_dt.name)
    r = _wrap(k.prod(data, axes, keepdim), out_dt, x.device, k)
    if x._rg and _state.enabled:
        node = ProdBackward0()
        node.axes, node.keepdim = axes, keepdim
        save(node, x)
        attach(r, node, (x,))
    return r


def cumprod(x, dim, *, dtype=None):
    """Cumulative product: a differentiable scan (zeros allowed, any order of gradient)."""
    axis = _wrap_dim(dim, x.ndim, "cumprod")
    out_dt = _int_to_long(x, dtype)
    if out_dt is not x.dtype:
        x = x.to(out_dt)
    if x.ndim == 0 or x.numel() == 0:
        return x.clone()
    return _scan_mul(x, axis)


class CumsumBackward0(Node):

    def backward(self, g):
        g = g.flip(self.axis).cumsum(self.axis).flip(self.axis)
        return (g if g.dtype is self.in_dtype else g.to(self.in_dtype),)


def cumsum(x, dim, *, dtype=None):
    axis = _wrap_dim(dim, x.ndim, "cumsum")
    out_dt = _int_to_long(x, dtype)
    k = x._k
    data = x._data if out_dt is x.dtype else k.astype(x._data, out_dt.name)
    if x.ndim == 0:
        data = k.copy(data)
    else:
        data = k.cumsum(data, axis)
    r = _wrap(data, out_dt, x.device, k)
    if x._rg and _state.enabled:
        if x.ndim == 0:
            node = _ops_shape.CloneBackward0()
        else:
            node = CumsumBackward0()
            node.axis, node.in_dtype = axis, x.dtype
        attach(r, node, (x,))
    return r


# ---------------------------------------------------------------------- max / min
class MaxBackward1(Node):
    """Full reduction: ties share the gradient evenly."""

    def backward(self, g):
        x, y = self.saved
        mask = (x == y).to(g.dtype)
        return (mask * (g / mask.sum()),)


class MinBackward1(MaxBackward1):
    """See the base class."""


class MaxBackward0(Node):
    """Along a dim: the gradient goes to the index that was returned."""

    def backward(self, g):
        (idx,) = self.saved
        if not self.keepdim:
            g = g.unsqueeze(self.axis)
            idx = idx.unsqueeze(self.axis)
        n = self.shape[self.axis]
        iota = arange(n, device=g.device).reshape(
            [n if i == self.axis else 1 for i in range(len(self.shape))])
        return (where(iota == idx, g, 0.0),)


class MinBackward0(MaxBackward0):
    """See the base class."""


def _check_nonempty(op, x, axes):
    """max/min/argmax have no identity: an empty reduction is an error, as in PyTorch."""
    shape = x._data.shape
    if axes is None:
        if x.numel() == 0:
            raise OpError(f"{op}(): Expected reduction dim to be specified for input.numel() == "
                          f"0 (input shape {list(shape)}). Specify the reduction dim with the "
                          f"'dim' argument.")
        return
    for a in axes:
        if shape[a] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {a} to have non-zero size "
                             f"(input shape {list(shape)}).")


def _extreme(op, x, dim, keepdim, is_max):
    if isinstance(dim, Tensor):  # torch.max(a, b): elementwise
        return maximum(x, dim) if is_max else minimum(x, dim)
    k = x._k
    if dim is None:
        _check_nonempty(op, x, None)
        out = k.max(x._data, None, False) if is_max else k.min(x._data, None, False)
        r = _wrap(out, x.dtype, x.device, k)
        if x._rg and _state.enabled:
            node = MaxBackward1() if is_max else MinBackward1()
            save(node, x, r.detach())
            attach(r, node, (x,))
        return r
    axis = normalize_dims(dim, x.ndim, op)
    if axis is None:  # 0-d input
        return values_indices(x.clone(), _filled(x, (), 0, _dt.int64))
    axis = axis[0]
    _check_nonempty(op, x, (axis,))
    idx = k.argmax(x._data, axis, True) if is_max else k.argmin(x._data, axis, True)
    values = k.gather(x._data, axis, idx)
    if not keepdim:
        shape = _reduced_shape(x._data.shape, (axis,), False)
        idx, values = k.reshape(idx, shape), k.reshape(values, shape)
    indices = _wrap(idx, _dt.int64, x.device, k)
    r = _wrap(values, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = MaxBackward0() if is_max else MinBackward0()
        node.axis, node.keepdim, node.shape = axis, keepdim, x._data.shape
        save(node, indices)
        attach(r, node, (x,))
    return values_indices(r, indices)


def max(x, dim=None, keepdim=False):
    return _extreme("max", x, dim, keepdim, True)


def min(x, dim=None, keepdim=False):
    return _extreme("min", x, dim, keepdim, False)


class AmaxBackward0(Node):
    """Ties share the gradient evenly within each reduced slice."""

    def backward(self, g):
        x, y = self.saved
        yk = _expand_back(y, x.shape, self.axes, self.keepdim)
        mask = (x == yk).to(g.dtype)
        count = mask.sum(dim=self.axes, keepdim=True)
        return (_expand_back(g, x.shape, self.axes, self.keepdim) * mask / count,)


class AminBackward0(AmaxBackward0):
    """See the base class."""


def _amax(x, dim, keepdim, is_max):
    op = "amax" if is_max else "amin"
    axes = normalize_dims(dim, x.ndim, op)
    _check_nonempty(op, x, axes)
    k = x._k
    out = k.max(x._data, axes, keepdim) if is_max else k.min(x._data, axes, keepdim)
    r = _wrap(out, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = AmaxBackward0() if is_max else AminBackward0()
        node.axes, node.keepdim = axes, keepdim
        save(node, x, r.detach())
        attach(r, node, (x,))
    return r


def amax(x, dim=(), keepdim=False):
    return _amax(x, dim, keepdim, True)


def amin(x, dim=(), keepdim=False):
    return _amax(x, dim, keepdim, False)


def _arg(op, x, dim, keepdim):
    k = x._k
    if dim is None:
        _check_nonempty(op, x, None)
        out = getattr(k, op)(x._data, None, False)
        if keepdim:
            out = k.reshape(out, (1,) * x.ndim)
        return _wrap(out, _dt.int64, x.device, k)
    axis = _wrap_dim(dim, x.ndim, op)
    if x.ndim == 0:
        return _filled(x, (), 0, _dt.int64)
    _check_nonempty(op, x, (axis,))
    return _wrap(getattr(k, op)(x._data, axis, keepdim), _dt.int64, x.device, k)


def argmax(x, dim=None, keepdim=False):
    return _arg("argmax", x, dim, keepdim)


def argmin(x, dim=None, keepdim=False):
    return _arg("argmin", x, dim, keepdim)


# ---------------------------------------------------------------------- logical
def _logical(op, x, dim, keepdim, is_any):
    """all/any as min/max of a bool array; an empty reduction gives the identity."""
    axes = normalize_dims(dim, x.ndim, op)
    shape = x._data.shape
    if _count(shape, axes) == 0:
        return _filled(x, _reduced_shape(shape, axes, keepdim), not is_any, _dt.bool_)
    b = x if x.dtype is _dt.bool_ else x != 0
    k = b._k
    out = k.max(b._data, axes, keepdim) if is_any else k.min(b._data, axes, keepdim)
    return _wrap(out, _dt.bool_, x.device, k)


def all(x, dim=None, keepdim=False):
    return _logical("all", x, dim, keepdim, False)


def any(x, dim=None, keepdim=False):
    return _logical("any", x, dim, keepdim, True)


def count_nonzero(x, dim=None):
    return sum(x != 0, dim)


# ---------------------------------------------------------------------- moments
def _correction(op, x, dim, unbiased, correction):
    """PyTorch's overloads: ``var(x, unbiased)``, ``var(x, dim, unbiased, keepdim)``,
    ``var(x, dim, correction=c)``. Returns ``(dim, correction)``."""
    _check_float(op, x, "std and var only support floating point and complex dtypes")
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if correction is not None and unbiased is not None:
        raise TypeError(f"{op}(): pass either unbiased or correction, not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction


def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance with Bessel's correction by default (``correction=1``).

    Fewer elements than ``correction`` divide by zero: inf, or NaN for no spread, as in
    PyTorch.
    """
    dim, corr = _correction("var", x, dim, unbiased, correction)
    axes = normalize_dims(dim, x.ndim, "var")
    d = x - mean(x, axes, keepdim=True)
    return sum(d * d, axes, keepdim) / builtins.max(_count(x.shape, axes) - corr, 0)


def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(x, dim, unbiased, keepdim, correction=correction).sqrt()


def var_mean(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, corr = _correction("var_mean", x, dim, unbiased, correction)
    return var(x, dim, None, keepdim, correction=corr), mean(x, dim, keepdim)


def std_mean(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, corr = _correction("std_mean", x, dim, unbiased, correction)
    return std(x, dim, None, keepdim, correction=corr), mean(x, dim, keepdim)


# ---------------------------------------------------------------------- logsumexp
class LogsumexpBackward0(_UnaryNode):
    """``softmax(x) * g``; the output is kept differentiable so double backward is exact."""

    def backward(self, g):
        (x,) = self.saved
        y = _expand_back(self.output_tensor(), x.shape, self.axes, self.keepdim)
        gk = _expand_back(g, x.shape, self.axes, self.keepdim)
        return (gk * (x - y).exp(),)


def logsumexp(x, dim, keepdim=False):
    """``log(sum(exp(x)))`` without overflow; an empty or all ``-inf`` slice gives ``-inf``."""
    if not x.dtype.is_floating_point:
        x = x.to(_dt.get_default_dtype())
    axes = normalize_dims(dim, x.ndim, "logsumexp")
    shape = x._data.shape
    if _count(shape, axes) == 0:
        return _filled(x, _reduced_shape(shape, axes, keepdim), -math.inf, x.dtype)
    k = x._k
    r = _wrap(k.logsumexp(x._data, axes, keepdim), x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = LogsumexpBackward0()
        node.axes, node.keepdim = axes, keepdim
        save(node, x)
        node.keep_output(r)
        attach(r, node, (x,))
    return r


# ---------------------------------------------------------------------- norms
def norm(x, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm (``p`` = 2 / "fro" by default, 1, inf, -inf, 0 or any other number).

    The gradient of the 2-norm at zero is 0 (not NaN), as in PyTorch.
    """
    if dtype is not None:
        x = x.to(dtype)
    _check_float("norm", x, "Expected a floating point or complex tensor as input")
    axes = normalize_dims(dim, x.ndim, "norm")
    if p in ("fro", 2, 2.0):
        return _safe_sqrt(sum(x * x, axes, keepdim))
    if isinstance(p, str):
        raise ValueError(f"norm(): p={p!r} is not supported (use a number, 'fro' or inf)")
    if p == 1:
        return sum(x.abs(), axes, keepdim)
    if p == math.inf:
        return amax(x.abs(), axes if axes is not None else (), keepdim)
    if p == -math.inf:
        return amin(x.abs(), axes if axes is not None else (), keepdim)
    if p == 0:
        return sum((x != 0).to(x.dtype), axes, keepdim)
    return sum(x.abs() ** p, axes, keepdim) ** (1.0 / p)


class SqrtAtZeroBackward0(_UnaryNode):
    """``g / (2 sqrt(s))``, and 0 where ``s == 0``; the zero is masked *before* dividing
    so the second derivative has no ``0 * inf`` either."""

    def backward(self, g):
        y = self.output_tensor()
        zero = y == 0
        return (where(zero, 0.0, g / (where(zero, 1.0, y) * 2.0)),)


def _safe_sqrt(sq):
    k = sq._k
    r = _wrap(k.sqrt(sq._data), sq.dtype, sq.device, k)
    if sq._rg and _state.enabled:
        node = SqrtAtZeroBackward0()
        node.keep_output(r)
        attach(r, node, (sq,))
    return r

