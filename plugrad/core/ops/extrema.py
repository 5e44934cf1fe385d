"""Maxima and minima: max/min (with indices along a dim), amax/amin, argmax/argmin.

max/min/argmax have no identity: an empty reduction is an error, as in PyTorch.
"""
from __future__ import annotations

from collections import namedtuple

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.grad_ops import expand_back
from plugrad.core.autograd.node import OUTPUT, KeepsOutput, Node
from plugrad.core.autograd.record import record
from plugrad.core.errors import DTypeError, IndexOutOfRangeError, OpError
from plugrad.core.grad_mode import _state
from plugrad.core.ops import shape as _shape
from plugrad.core.ops._dims import filled, kept_shape, normalize_dims, reduced_shape
from plugrad.core.ops.declare import op
from plugrad.core.ops.select import maximum, minimum
from plugrad.core.tensor import Tensor, _wrap, _wrap_dim

values_indices = namedtuple("return_types", ["values", "indices"])


class MaxBackward1(KeepsOutput):
    """Full reduction: ties share the gradient evenly; a NaN result is the NaN elements'
    (PyTorch's ``evenly_distribute_backward``)."""

    def grad(self, F, g, x, y):
        hit = F.eq(x, y)
        if F.dtype_of(x).startswith(("float", "bfloat")):
            hit = F.logical_or(hit, F.logical_and(F.isnan(x), F.isnan(y)))
        mask = F.astype(hit, F.dtype_of(g))
        return (F.mul(mask, F.div(g, F.sum(mask, None, False))),)


class MinBackward1(MaxBackward1):
    """See the base class."""


class MaxBackward0(Node):
    """Along a dim: the gradient goes to the index that was returned."""

    def grad(self, F, g, idx):
        shape, axis = self.shape, self.axis
        if not self.keepdim:
            kept = kept_shape(shape, (axis,))
            g, idx = F.reshape(g, kept), F.reshape(idx, kept)
        n = shape[axis]
        iota = F.reshape(F.arange(0, n, 1, "int64", self.device.index),
                         tuple(n if i == axis else 1 for i in range(len(shape))))
        return (F.where(F.eq(iota, idx), g, 0.0),)


class MinBackward0(MaxBackward0):
    """See the base class."""


def _check_nonempty(name, x, axes):
    shape = x._data.shape
    if axes is None:
        if x.numel() == 0:
            raise IndexOutOfRangeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() "
                f"== 0 (input shape {list(shape)}). Specify the reduction dim with "
                f"the 'dim' argument.")
        return
    for a in axes:
        if shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size "
                             f"(input shape {list(shape)}).")


def _extreme(name, x, dim, keepdim, is_max):
    if isinstance(dim, Tensor):  # torch.max(a, b): elementwise
        return maximum(x, dim) if is_max else minimum(x, dim)
    k = x._k
    if dim is None:
        _check_nonempty(name, x, None)
        out = k.max(x._data, None, False) if is_max else k.min(x._data, None, False)
        r = _wrap(out, x.dtype, x.device, k)
        if x._rg and _state.enabled:
            record(r, MaxBackward1() if is_max else MinBackward1(), (x,), (x, OUTPUT))
        return r
    axis = normalize_dims(dim, x.ndim, name)
    if axis is None:  # 0-d input
        return values_indices(_shape.clone(x), filled(x, (), 0, _dt.int64))
    axis = axis[0]
    _check_nonempty(name, x, (axis,))
    idx = k.argmax(x._data, axis, True) if is_max else k.argmin(x._data, axis, True)
    values = k.gather(x._data, axis, idx)
    if not keepdim:
        shape = reduced_shape(x._data.shape, (axis,), False)
        idx, values = k.reshape(idx, shape), k.reshape(values, shape)
    indices = _wrap(idx, _dt.int64, x.device, k)
    r = _wrap(values, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = MaxBackward0() if is_max else MinBackward0()
        node.axis, node.keepdim, node.shape = axis, keepdim, x._data.shape
        record(r, node, (x,), (indices,))
    return values_indices(r, indices)


@op("max", method="max")
def max(x, dim=None, keepdim=False):
    return _extreme("max", x, dim, keepdim, True)


@op("min", method="min")
def min(x, dim=None, keepdim=False):
    return _extreme("min", x, dim, keepdim, False)


class AmaxBackward0(KeepsOutput):
    """Ties share the gradient evenly within each reduced slice."""

    def grad(self, F, g, x, y):
        shape, axes, keepdim = x.shape, self.axes, self.keepdim
        mask = F.astype(F.eq(x, expand_back(F, y, shape, axes, keepdim)), F.dtype_of(g))
        n = F.sum(mask, axes, True)
        return (F.div(F.mul(expand_back(F, g, shape, axes, keepdim), mask), n),)


class AminBackward0(AmaxBackward0):
    """See the base class."""


def _amax(x, dim, keepdim, is_max):
    name = "amax" if is_max else "amin"
    axes = normalize_dims(dim, x.ndim, name)
    _check_nonempty(name, x, axes)
    k = x._k
    out = k.max(x._data, axes, keepdim) if is_max else k.min(x._data, axes, keepdim)
    r = _wrap(out, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = AmaxBackward0() if is_max else AminBackward0()
        node.axes, node.keepdim = axes, keepdim
        record(r, node, (x,), (x, OUTPUT))
    return r


@op("amax", method="amax")
def amax(x, dim=(), keepdim=False):
    return _amax(x, dim, keepdim, True)


@op("amin", method="amin")
def amin(x, dim=(), keepdim=False):
    return _amax(x, dim, keepdim, False)


def _arg(name, x, dim, keepdim):
    if x.dtype is _dt.bool_:
        raise DTypeError(f"{name}(): does not support bool input (as in PyTorch)")
    k = x._k
    if dim is None:
        _check_nonempty(name, x, None)
        out = getattr(k, name)(x._data, None, False)
        if keepdim:
            out = k.reshape(out, (1,) * x.ndim)
        return _wrap(out, _dt.int64, x.device, k)
    axis = _wrap_dim(dim, x.ndim, name)
    if x.ndim == 0:
        return filled(x, (), 0, _dt.int64)
    _check_nonempty(name, x, (axis,))
    return _wrap(getattr(k, name)(x._data, axis, keepdim), _dt.int64, x.device, k)


@op("argmax", method="argmax")
def argmax(x, dim=None, keepdim=False):
    return _arg("argmax", x, dim, keepdim)


@op("argmin", method="argmin")
def argmin(x, dim=None, keepdim=False):
    return _arg("argmin", x, dim, keepdim)
