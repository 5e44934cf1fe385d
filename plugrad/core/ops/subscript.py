"""``x[key]`` and ``x[key] = value``.

Basic indexing (ints, slices, None, Ellipsis) is one ``slice`` primitive plus a reshape.
Advanced indexing (integer and boolean tensors) merges the indexed dimensions into one and
selects along it with ``take``; its gradient adds back with ``scatter_add``. Assignment is
the functional form followed by an in-place update of the target.
"""
from __future__ import annotations

import builtins

import numpy as np

from plugrad.core import aliasing
from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import present_as
from plugrad.core.errors import (DTypeError, ShapeError, broadcast_shapes, c_dtype_name,
                                   check_device, shape_str)
from plugrad.core.factories import arange, tensor, zeros
from plugrad.core.grad_mode import _state
from plugrad.core.ops.declare import op
from plugrad.core.ops.indexing import (as_index_tensor, index_select, last_write_wins, nonzero,
                                       scatter, _unique_targets, wrap_negative)
from plugrad.core.ops.inplace import apply_inplace
from plugrad.core.ops.shape import broadcast_tensors
from plugrad.core.ops.slicing import basic_slice, slice_scatter
from plugrad.core.tensor import Tensor


# ====================================================================== __getitem__
class _Parsed:
    """A key split into its basic part (slices per input dim, dims to drop, new axes) and
    its advanced part (index tensors by dimension of the sliced result)."""

    def __init__(self):
        self.slices = []
        self.view_shape = []
        self.advanced = []  # (position in view_shape, int64 tensor)


def _normalise_key(x, key):
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for item in key:
        if isinstance(item, (list, np.ndarray)) or (
                hasattr(item, "__array__") and not isinstance(item, Tensor)):
            arr = np.asarray(item)
            item = tensor(arr if arr.size else arr.astype(np.int64), device=x.device)
        elif isinstance(item, bool):
            item = tensor(item, device=x.device)
        out.append(item)
    consumed = builtins.sum(1 if not isinstance(i, Tensor) or i.dtype is not _dt.bool_
                            else builtins.max(i.ndim, 0)
                            for i in out if i is not None and i is not Ellipsis)
    if builtins.sum(1 for i in out if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    if Ellipsis in [i for i in out if not isinstance(i, Tensor)]:
        at = [j for j, i in enumerate(out) if i is Ellipsis and not isinstance(i, Tensor)][0]
        out[at:at + 1] = [slice(None)] * (x.ndim - consumed)
    return out


def _parse(x, key) -> _Parsed:
    items = _normalise_key(x, key)
    shape = x._data.shape
    p = _Parsed()
    dim = 0
    for item in items:
        if item is None:
            p.view_shape.append(1)
            continue
        if isinstance(item, Tensor):
            if item.dtype is _dt.bool_:
                nd = builtins.max(item.ndim, 0)
                if item.ndim == 0:  # x[True] adds a dim of 1, x[False] of 0
                    p.view_shape.append(1)
                    p.advanced.append((len(p.view_shape) - 1, _bool_scalar_index(item)))
                    continue
                for j in range(nd):
                    if item.shape[j] != shape[dim + j]:
                        raise IndexError(
                            f"The shape of the mask {shape_str(item.shape)} at index {j} does "
                            f"not match the shape of the indexed tensor {shape_str(shape)} at "
                            f"index {dim + j}")
                for d, idx in enumerate(nonzero(item, as_tuple=True)):
                    p.slices.append(slice(0, shape[dim + d], 1))
                    p.view_shape.append(shape[dim + d])
                    p.advanced.append((len(p.view_shape) - 1, idx))
                dim += nd
                continue
            if item.ndim == 0 and item.dtype.kind in "iu":
                item = int(item.item())
            else:
                idx = as_index_tensor("index", item, x)
                p.slices.append(slice(0, shape[dim], 1))
                p.view_shape.append(shape[dim])
                p.advanced.append((len(p.view_shape) - 1,
                                   wrap_negative("index", idx, shape[dim], dim)))
                dim += 1
                continue
        if isinstance(item, slice):
            start, stop, step = item.indices(shape[dim])
            if step <= 0:
                raise ValueError("step must be greater than zero")
            stop = builtins.max(stop, start)
            p.slices.append(slice(start, stop, step))
            p.view_shape.append(len(range(start, stop, step)))
            dim += 1
            continue
        try:
            i = item.__index__()
        except (AttributeError, TypeError):
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long "
                             f"or byte or bool tensors are valid indices (got "
                             f"{type(item).__name__})") from None
        n = shape[dim]
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
        i += n if i < 0 else 0
        p.slices.append(slice(i, i + 1, 1))
        dim += 1
    for d in range(dim, len(shape)):
        p.slices.append(slice(0, shape[d], 1))
        p.view_shape.append(shape[d])
    return p


def _bool_scalar_index(item):
    n = 1 if item.item() else 0
    return zeros(n, dtype=_dt.int64, device=item.device)


@op(dunder="__getitem__")
def getitem(x, key):
    if isinstance(key, int) and not isinstance(key, bool) and x.ndim:
        n = x._data.shape[0]
        if not -n <= key < n:
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {n}")
        key = key + n if key < 0 else key
        y = basic_slice(x, (slice(key, key + 1, 1),))
        return present_as(y.reshape(x._data.shape[1:]), "SelectBackward0")
    if x.ndim == 0 and not isinstance(key, (tuple, bool)) and key is not None and \
            key is not Ellipsis and not (isinstance(key, Tensor) and key.dtype is _dt.bool_):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    p = _parse(x, key)
    y = basic_slice(x, tuple(p.slices))
    if tuple(p.view_shape) != y._data.shape:  # ints drop dims, None adds them
        y = present_as(y.reshape(tuple(p.view_shape)), "UnsqueezeBackward0"
                       if len(p.view_shape) > y.ndim else "SelectBackward0")
    if not p.advanced:
        return y
    return _advanced(y, p.advanced)


def _advanced(y, advanced):
    """Select with index tensors at the given dims of ``y`` (NumPy's rules for where the
    broadcast index dims go)."""
    dims = [d for d, _ in advanced]
    idx = broadcast_tensors(*[i for _, i in advanced])
    consecutive = dims == list(range(dims[0], dims[0] + len(dims)))
    rest = [d for d in range(y.ndim) if d not in dims]
    if consecutive:
        order = list(range(dims[0])) + dims + [d for d in rest if d > dims[0]]
        at = dims[0]
    else:
        order = dims + rest
        at = 0
    y = y.permute(order)
    sizes = [y.shape[at + j] for j in range(len(dims))]
    lin = idx[0]
    for j in range(1, len(dims)):
        lin = lin * sizes[j] + idx[j]
    merged_shape = y.shape[:at] + (int(np.prod(sizes)),) + y.shape[at + len(dims):]
    y = y.reshape(merged_shape)
    out = index_select(y, at, lin.reshape(-1))
    return out.reshape(tuple(y.shape[:at]) + tuple(lin.shape) + tuple(y.shape[at + 1:]))


# ====================================================================== __setitem__
@op(dunder="__setitem__")
def setitem(x, key, value):
    """``x[key] = value`` in place (graph-aware); ``x[False] = v`` does nothing (PyTorch:
    no write and no graph, so ``v`` gets no gradient)."""
    if key is False:
        return x
    given = isinstance(value, Tensor)
    if not given:
        if type(value) in (int, float, bool):  # NaN into an int tensor: an error
            value = _dt.checked_scalar("index_put", value, x.dtype)
        value = tensor(value, dtype=x.dtype, device=x.device)
    elif value.device is not x.device:
        check_device("index_put", x, value)
    p = _parse(x, key)
    if given and p.advanced and value.dtype is not x.dtype and not (  # x[mask] = 0-d value
            value.ndim == 0 and isinstance(key, Tensor) and key.dtype is _dt.bool_):  # (fill)
        raise DTypeError(f"index_put: Index put requires the source and destination dtypes "
                         f"match, got {c_dtype_name(x.dtype)} for the destination and "
                         f"{c_dtype_name(value.dtype)} for the source.")
    needs_graph = _state.enabled and (x._rg or value._rg)
    if not p.advanced and not needs_graph:
        region = [len(range(s.start, s.stop, s.step)) for s in p.slices]
        v = value if value.dtype is x.dtype else value.to(x.dtype)
        v = _fit_value(v, p, region)
        if x._root is not None:
            aliasing.check_writable("index_put", x)
        x._data = x._k.assign(x._data, tuple(p.slices), v._data)
        x._vc[0] += 1
        if x._root is not None or x._views:
            aliasing.written(x)
        return x
    return apply_inplace("index_put", x, lambda src: index_put(src, p, value))


def _expand_value(v, target):
    """``v`` broadcast to ``target``; leading size-1 dims beyond it are dropped, as PyTorch
    does (``x[0] = ones(1, 1, 4)`` for ``x`` of shape ``[3, 4]``)."""
    target = tuple(target)
    shape = tuple(v.shape)
    while len(shape) > len(target) and shape[0] == 1:
        shape = shape[1:]
    try:
        if broadcast_shapes("setitem", shape, target) != target:
            raise ShapeError
    except ShapeError:
        raise ShapeError(f"setitem: shape mismatch: value tensor of shape "
                         f"{shape_str(v.shape)} cannot be broadcast to indexing result of "
                         f"shape {shape_str(target)}") from None
    v = v.reshape(shape) if shape != tuple(v.shape) else v
    return v.expand(target) if shape != target else v


def _fit_value(v, p, region):
    """``v`` reshaped to the sliced region (ints keep their size-1 dims)."""
    view = tuple(p.view_shape)
    v = _expand_value(v, view)
    return v.reshape(tuple(region)) if tuple(region) != view else v


def index_put(x, p: _Parsed, value):
    """Functional ``x[key] = value``: a new tensor (differentiable in ``x`` and ``value``)."""
    value = value if value.dtype is x.dtype else value.to(x.dtype)
    if not p.advanced:
        region = [len(range(s.start, s.stop, s.step)) for s in p.slices]
        return slice_scatter(x, tuple(p.slices), _fit_value(value, p, region))
    positions = arange(x.numel(), device=x.device).reshape(x.shape)
    chosen = getitem_parsed(positions, p).reshape(-1)
    target_shape = getitem_parsed(x.detach(), p).shape
    v = _expand_value(value, target_shape)
    flat = x.reshape(-1)
    out = scatter(flat, 0, chosen, v.reshape(-1)) if _unique_targets(chosen, 0) else \
        last_write_wins(flat, chosen, v.reshape(-1))
    return out.reshape(x.shape)


def getitem_parsed(x, p: _Parsed):
    y = basic_slice(x, tuple(p.slices)).reshape(tuple(p.view_shape))
    return _advanced(y, p.advanced) if p.advanced else y
