"""Sorting and top-k: the order comes from the backend's ``argsort`` kernel; the values are a
``gather``, so gradients flow through the usual rule."""
from __future__ import annotations

from collections import namedtuple

from plugrad.core import dtypes as _dt
from plugrad.core.ops._base import _wrap
from plugrad.core.tensor import _wrap_dim

values_indices = namedtuple("return_types", ["values", "indices"])


def _order(x, axis, descending):
    k = x._k
    return _wrap(k.argsort(x._data, axis, descending), _dt.int64, x.device, k)


def sort(x, dim=-1, descending=False):
    if x.ndim == 0:
        return values_indices(x.clone(), x.new_zeros((), dtype=_dt.int64))
    axis = _wrap_dim(dim, x.ndim, "sort")
    idx = _order(x, axis, descending)
    return values_indices(x.gather(axis, idx), idx)


def topk(x, k, dim=-1, largest=True, sorted=True):
    axis = _wrap_dim(dim, x.ndim, "topk")
    n = x.shape[axis] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"topk: selected index k={k} out of range for dimension {axis} of "
                           f"size {n}")
    idx = _order(x, axis, largest).narrow(axis, 0, k)
    return values_indices(x.gather(axis, idx), idx)
