"""Reductions (sum, mean, max, var, logsumexp, ...) and their gradient rules."""
from __future__ import annotations

import builtins
import math
from collections import namedtuple

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import Node
from plugrad.core.ops._base import (OpError, Tensor, _state, _wrap, attach, save)
from plugrad.core.tensor import _wrap_dim

values_indices = namedtuple("return_types", ["values", "indices"])


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


def _expand_back(g: Tensor, shape: tuple, axes, keepdim: bool) -> Tensor:
    """A reduced gradient broadcast back over the reduced axes."""
    if not keepdim:
        g = g.reshape(_kept_shape(shape, axes))
    return g.expand(shape)


class SumBackward0(Node):

    def backward(self, g):
        if self.scale != 1.0:
            g = g * self.scale
        return (_expand_back(g, self.shape, self.axes, self.keepdim),)


def _reduce_sum(op, x, dim, keepdim, dtype, mean):
    shape = x._data.shape
    axes = normalize_dims(dim, len(shape), op)
    k = x._k
    out_dt = x.dtype if dtype is None else _dt.get_dtype(dtype)
    if mean:
        if not (out_dt.is_floating_point):
            raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be "
                               f"either a floating point or complex dtype. Got: "
                               f"{x.dtype.name.capitalize()}")
    elif dtype is None and out_dt.kind in "biu":
        out_dt = _dt.int64
    data = x._data if out_dt is x.dtype else k.astype(x._data, out_dt.name)
    out = k.sum(data, axes, keepdim)
    scale = 1.0
    if mean:
        count = 1
        for i, n in enumerate(shape):
            if axes is None or i in axes:
                count *= n
        scale = 1.0 / count if count else math.nan
        out = k.div(out, float(count)) if count else k.mul(out, math.nan)
    r = _wrap(out, out_dt, x.device, k)
    if x._rg and _state.enabled:
        node = SumBackward0() if not mean else MeanBackward0()
        node.shape, node.axes, node.keepdim, node.scale = shape, axes, keepdim, scale
        attach(r, node, (x,))
    return r


class MeanBackward0(SumBackward0):
    """See the base class."""


def sum(x, dim=None, keepdim=False, *, dtype=None):
    return _reduce_sum("sum", x, dim, keepdim, dtype, mean=False)


def mean(x, dim=None, keepdim=False, *, dtype=None):
    return _reduce_sum("mean", x, dim, keepdim, dtype, mean=True)


def nansum(x, dim=None, keepdim=False, *, dtype=None):
    return sum(x.masked_fill(x.isnan(), 0), dim, keepdim, dtype=dtype)


class ProdBackward0(Node):

    def backward(self, g):
        (x,) = self.saved
        # d/dx_i prod = prod of the others; computed without dividing so zeros are fine.
        axes = self.axes if self.axes is not None else tuple(range(x.ndim))
        flat = x
        if len(axes) != 1 or x.ndim == 0:
            flat, axis = _merge_axes(x, axes), x.ndim - len(axes)
        else:
            axis = axes[0]
        n = flat.shape[axis] if flat.ndim else 1
        ones = flat.narrow(axis, 0, 1).ones_like() if flat.ndim else None
        if not flat.ndim:
            return (g,)
        before = cumprod_exclusive(flat, axis, ones)
        after = cumprod_exclusive(flat.flip(axis), axis, ones).flip(axis)
        others = before * after
        if len(axes) != 1:
            others = _unmerge_axes(others, x.shape, axes)
        gx = _expand_back(g, x.shape, self.axes, self.keepdim) * others
        del n
        return (gx,)


def cumprod_exclusive(x, axis, ones):
    """Product of the elements before each position along ``axis`` (Tensor ops only)."""
    n = x.shape[axis]
    out = [ones]
    acc = ones
    for i in builtins.range(n - 1):
        acc = acc * x.narrow(axis, i, 1)
        out.append(acc)
    from plugrad.core.ops.shape import cat
    return cat(out, axis)


def _merge_axes(x, axes):
    keep = [i for i in builtins.range(x.ndim) if i not in axes]
    moved = x.permute(*keep, *axes)
    return moved.reshape(*[x.shape[i] for i in keep], -1)


def _unmerge_axes(y, shape, axes):
    keep = [i for i in builtins.range(len(shape)) if i not in axes]
    moved_shape = [shape[i] for i in keep] + [shape[i] for i in axes]
    y = y.reshape(moved_shape)
    order = keep + list(axes)
    inverse = [order.index(i) for i in builtins.range(len(shape))]
    return y.permute(*inverse)


def prod(x, dim=None, keepdim=False, *, dtype=None):
    shape = x._data.shape
    axes = normalize_dims(dim, len(shape), "prod")
    k = x._k
    out_dt = _dt.get_dtype(dtype) if dtype is not None else (
        _dt.int64 if x.dtype.kind in "biu" else x.dtype)
    data = x._data if out_dt is x.dtype else k.astype(x._data, out_dt.name)
    r = _wrap(k.prod(data, axes, keepdim), out_dt, x.device, k)
    if x._rg and _state.enabled:
        node = ProdBackward0()
        node.axes, node.keepdim = axes, keepdim
        save(node, x)
        attach(r, node, (x,))
    return r


# ---------------------------------------------------------------------- max / min
class MaxBackward1(Node):
    """Full reduction: ties share the gradient evenly."""

    def backward(self, g):
        x, y = self.saved
        mask = (x == y).to(g.dtype)
        return (mask * (g / mask.sum()),)


class MaxBackward0(Node):
    """Along a dim: the gradient goes to the index that was returned."""

    def backward(self, g):
        (idx,) = self.saved
        if not self.keepdim:
            g = g.unsqueeze(self.axis)
            idx = idx.unsqueeze(self.axis)
        n = self.shape[self.axis]
        from plugrad.core.factories import arange
        iota = arange(n, device=g.device).reshape(
            [n if i == self.axis else 1 for i in builtins.range(len(self.shape))])
        return (where_(iota == idx, g, 0.0),)


def where_(c, a, b):
    from plugrad.core.ops.pointwise import where
    return where(c, a, b)


def _check_nonempty(op, x, axes):
    shape = x._data.shape
    if axes is None:
        if x.numel() == 0:
            raise OpError(f"{op}(): Expected reduction dim to be specified for input.numel() == "
                          f"0. Specify the reduction dim with the 'dim' argument.")
    else:
        for a in axes:
            if shape[a] == 0:
                raise IndexError(f"{op}(): Expected reduction dim {a} to have non-zero size.")


def _extreme(op, x, dim, keepdim, is_max):
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
    if isinstance(dim, Tensor):
        from plugrad.core.ops.pointwise import maximum, minimum
        return maximum(x, dim) if is_max else minimum(x, dim)
    axis = normalize_dims(dim, x.ndim, op)
    axis = axis[0] if axis else None
    if axis is None:  # 0-d input
        return values_indices(x.clone(), _wrap(k.full((), 0, "int64", x.device.index),
                                               _dt.int64, x.device, k))
    _check_nonempty(op, x, (axis,))
    idx = k.argmax(x._data, axis, True) if is_max else k.argmin(x._data, axis, True)
    values = k.gather(x._data, axis, idx)
    if not keepdim:
        shape = tuple(n for i, n in enumerate(x._data.shape) if i != axis)
        idx = k.reshape(idx, shape)
        values = k.reshape(values, shape)
    indices = _wrap(idx, _dt.int64, x.device, k)
    r = _wrap(values, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = MaxBackward0() if is_max else MinBackward0()
        node.axis, node.keepdim, node.shape = axis, keepdim, x._data.shape
        save(node, indices)
        attach(r, node, (x,))
    return values_indices(r, indices)


class MinBackward1(MaxBackward1):
    """See the base class."""


class MinBackward0(MaxBackward0):
    """See the base class."""


def max(x, dim=None, keepdim=False):
    return _extreme("max", x, dim, keepdim, True)


def min(x, dim=None, keepdim=False):
    return _extreme("min", x, dim, keepdim, False)


def amax(x, dim=(), keepdim=False):
    return _amax(x, dim, keepdim, True)


def amin(x, dim=(), keepdim=False):
    return _amax(x, dim, keepdim, False)


class AmaxBackward0(Node):

    def backward(self, g):
        x, y = self.saved
        yk = _expand_back(y, x.shape, self.axes, self.keepdim)
        mask = (x == yk).to(g.dtype)
        count = mask.sum(dim=self.axes, keepdim=True) if self.axes else mask.sum()
        return (_expand_back(g, x.shape, self.axes, self.keepdim) * mask / count,)


def _amax(x, dim, keepdim, is_max):
    axes = normalize_dims(dim, x.ndim, "amax" if is_max else "amin")
    _check_nonempty("amax" if is_max else "amin", x, axes)
    k = x._k
    out = k.max(x._data, axes, keepdim) if is_max else k.min(x._data, axes, keepdim)
    r = _wrap(out, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = AmaxBackward0()
        node.axes, node.keepdim = axes, keepdim
        save(node, x, r.detach())
        attach(r, node, (x,))
    return r


def argmax(x, dim=None, keepdim=False):
    return _arg("argmax", x, dim, keepdim)


def argmin(x, dim=None, keepdim=False):
    return _arg("argmin", x, dim, keepdim)


def _arg(op, x, dim, keepdim):
    k = x._k
    if dim is None:
        _check_nonempty(op, x, None)
        out = getattr(k, op)(x._data, None, False)
        if keepdim:
            out = k.reshape(out, (1,) * x.ndim)
    else:
        axis = _wrap_dim(dim, x.ndim, op)
        if x.ndim == 0:
            return _wrap(k.full((), 0, "int64", x.device.index), _dt.int64, x.device, k)
        _check_nonempty(op, x, (axis,))
        out = getattr(k, op)(x._data, axis, keepdim)
    return _wrap(out, _dt.int64, x.device, k)


def all(x, dim=None, keepdim=False):
    b = x if x.dtype is _dt.bool_ else x != 0
    axes = normalize_dims(dim, x.ndim, "all")
    return _wrap(b._k.min(b._data, axes, keepdim), _dt.bool_, x.device, x._k)


def any(x, dim=None, keepdim=False):
    b = x if x.dtype is _dt.bool_ else x != 0
    axes = normalize_dims(dim, x.ndim, "any")
    return _wrap(b._k.max(b._data, axes, keepdim), _dt.bool_, x.device, x._k)


def count_nonzero(x, dim=None):
    return sum(x != 0, dim)


# ---------------------------------------------------------------------- composites
def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance with Bessel's correction by default (``correction=1``)."""
    if isinstance(unbiased, bool) or unbiased is None:
        corr = correction if correction is not None else (0 if unbiased is False else 1)
    else:  # var(x, dim_positional...)
        corr = 1
    axes = normalize_dims(dim, x.ndim, "var")
    n = 1
    for i, s in enumerate(x.shape):
        if axes is None or i in axes:
            n *= s
    mu = mean(x, axes, keepdim=True)
    d = x - mu
    total = sum(d * d, axes, keepdim=keepdim)
    return total / builtins.max(n - corr, 0) if n - corr > 0 else total * math.nan


def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(x, dim, unbiased, keepdim, correction=correction).sqrt()


def var_mean(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(x, dim, unbiased, keepdim, correction=correction), mean(x, dim, keepdim)


def std_mean(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return std(x, dim, unbiased, keepdim, correction=correction), mean(x, dim, keepdim)


class LogsumexpBackward0(Node):

    def backward(self, g):
        x, y = self.saved
        yk = _expand_back(y, x.shape, self.axes, self.keepdim)
        gk = _expand_back(g, x.shape, self.axes, self.keepdim)
        return (gk * (x - yk).exp(),)


def logsumexp(x, dim, keepdim=False):
    if not x.dtype.is_floating_point:
        x = x.to(_dt.get_default_dtype())
    axes = normalize_dims(dim, x.ndim, "logsumexp")
    k = x._k
    r = _wrap(k.logsumexp(x._data, axes, keepdim), x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = LogsumexpBackward0()
        node.axes, node.keepdim = axes, keepdim
        save(node, x, r.detach())
        attach(r, node, (x,))
    return r


class CumsumBackward0(Node):

    def backward(self, g):
        return (g.flip(self.axis).cumsum(self.axis).flip(self.axis),)


def cumsum(x, dim, *, dtype=None):
    axis = _wrap_dim(dim, x.ndim, "cumsum")
    out_dt = _dt.get_dtype(dtype) if dtype is not None else (
        _dt.int64 if x.dtype.kind in "biu" else x.dtype)
    k = x._k
    data = x._data if out_dt is x.dtype else k.astype(x._data, out_dt.name)
    if x.ndim == 0:
        return _wrap(k.copy(data), out_dt, x.device, k)
    r = _wrap(k.cumsum(data, axis), out_dt, x.device, k)
    if x._rg and _state.enabled:
        node = CumsumBackward0()
        node.axis = axis
        attach(r, node, (x,))
    return r


def cumprod(x, dim):
    """Cumulative product (composite: differentiable, zeros allowed)."""
    axis = _wrap_dim(dim, x.ndim, "cumprod")
    ones = x.narrow(axis, 0, 1).ones_like()
    before = cumprod_exclusive(x, axis, ones)
    return before * x


def norm(x, p="fro", dim=None, keepdim=False):
    """Vector p-norm (``p`` = 2 / "fro" by default, 1, inf or any positive number).

    The gradient of the 2-norm at zero is 0 (not NaN), as in PyTorch.
    """
    axes = normalize_dims(dim, x.ndim, "norm")
    if p in ("fro", 2, 2.0):
        sq = sum(x * x, axes, keepdim)
        return _safe_sqrt(sq)
    if p in (1, 1.0):
        return sum(x.abs(), axes, keepdim)
    if p in (math.inf, "inf"):
        return amax(x.abs(), axes if axes is not None else (), keepdim)
    if p in (-math.inf,):
        return amin(x.abs(), axes if axes is not None else (), keepdim)
    if p == 0:
        return sum((x != 0).to(x.dtype), axes, keepdim)
    return sum(x.abs() ** p, axes, keepdim) ** (1.0 / p)


class SafeSqrtBackward(Node):

    def backward(self, g):
        (y,) = self.saved
        return (where_(y == 0, 0.0, g / (y * 2.0)),)


def _safe_sqrt(sq):
    from plugrad.core.ops.pointwise import sqrt
    y = sqrt(sq.detach())
    if sq._rg and _state.enabled:
        node = SafeSqrtBackward()
        r = y._alias()
        save(node, r.detach())
        attach(r, node, (sq,))
        return r
    return y
