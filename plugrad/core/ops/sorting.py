"""Sorting and top-k: the order comes from the backend's ``argsort`` kernel; the values are a
``gather``, so gradients flow through its rule."""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core.errors import DTypeError
from plugrad.core.ops._dims import filled
from plugrad.core.ops.declare import op
from plugrad.core.ops.extrema import values_indices
from plugrad.core.ops.indexing import gather
from plugrad.core.ops.join import narrow
from plugrad.core.ops.shape import clone
from plugrad.core.tensor import _wrap, _wrap_dim


def _order(x, axis, descending):
    k = x._k
    return _wrap(k.argsort(x._data, axis, descending), _dt.int64, x.device, k)


@op("sort", method="sort")
def sort(x, dim=-1, descending=False, stable=False):
    """Values and indices along ``dim`` (ties keep their order: the sort is stable)."""
    if x.ndim == 0:
        return values_indices(clone(x), filled(x, (), 0, _dt.int64))
    axis = _wrap_dim(dim, x.ndim, "sort")
    idx = _order(x, axis, descending)
    return values_indices(gather(x, axis, idx), idx)


@op("argsort", method="argsort")
def argsort(x, dim=-1, descending=False, stable=False):
    return sort(x, dim, descending).indices


@op("msort", method="msort")
def msort(x):
    return sort(x, 0).values


@op("topk", method="topk")
def topk(x, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) entries along ``dim`` and their indices."""
    if x.dtype is _dt.bool_:
        raise DTypeError("topk: does not support bool tensors (as PyTorch on CPU)")
    axis = _wrap_dim(dim, x.ndim, "topk")
    n = x.shape[axis] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"topk: selected index k={k} out of range for dimension {axis} of "
                           f"size {n}")
    if x.ndim == 0:
        return values_indices(clone(x), filled(x, (), 0, _dt.int64))
    idx = narrow(_order(x, axis, largest), axis, 0, k)
    return values_indices(gather(x, axis, idx), idx)
