"""Indexing: ``x[key]``, ``x[key] = v``, gather/scatter and friends.

Basic indexing (ints, slices, None, Ellipsis) is one ``slice`` primitive plus a reshape.
Advanced indexing (integer and boolean tensors) merges the indexed dimensions into one and
selects along it with ``take``; its gradient adds back with ``scatter_add``. Assignment is
the functional form followed by an in-place update of the target.
"""
from __future__ import annotations

import builtins

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import Node
from plugrad.core.ops._base import (DTypeError, ShapeError, Tensor, _state, _wrap, attach,
                                    check_device, save, shape_str)
from plugrad.core.tensor import _wrap_dim


# ====================================================================== basic slicing
class SliceBackward0(Node):
    _is_view = True

    def backward(self, g):
        return (slice_scatter_zeros(g, self.shape, self.key),)


class SliceScatterBackward(Node):

    def backward(self, g):
        return (basic_slice(g, self.key),)


def basic_slice(x, key: tuple):
    """``x`` restricted by normalised slices (one per leading dim); may share memory."""
    if builtins.all(s.start == 0 and s.stop == n and s.step == 1
                    for s, n in zip(key, x._data.shape)):
        return x
    r = _wrap(x._k.slice(x._data, _full_key(key, x._data.shape)), x.dtype, x.device, x._k)
    r._vc = x._vc
    if x._rg and _state.enabled:
        node = SliceBackward0()
        node.shape, node.key = x._data.shape, key
        attach(r, node, (x,))
    return r


def _full_key(key, shape):
    return tuple(key) + tuple(slice(0, n, 1) for n in shape[len(key):])


def slice_scatter_zeros(g, shape, key):
    """Zeros of ``shape`` with ``g`` written at ``key`` (the adjoint of ``basic_slice``)."""
    k = g._k
    out = k.assign(k.full(shape, 0, g.dtype.name, g.device.index), tuple(key), g._data)
    r = _wrap(out, g.dtype, g.device, k)
    if g._rg and _state.enabled:
        node = SliceScatterBackward()
        node.key = key
        attach(r, node, (g,))
    return r


# ====================================================================== index_select / take
class IndexSelectBackward0(Node):

    def backward(self, g):
        (index,) = self.saved
        return (index_add_zeros(g, self.shape, self.axis, index), None)


class IndexAddZerosBackward(Node):

    def backward(self, g):
        (index,) = self.saved
        return (index_select(g, self.axis, index),)


def index_select(x, dim, index):
    """Entries of ``x`` along ``dim`` at the 1-D integer ``index``."""
    axis = _wrap_dim(dim, x.ndim, "index_select")
    index = _as_index_tensor("index_select", index, x)
    if index.ndim > 1:
        raise ShapeError(f"index_select(): Index is supposed to be a vector, got shape "
                         f"{shape_str(index.shape)}")
    index = index.reshape(-1)
    n = x.shape[axis] if x.ndim else 1
    index = _wrap_negative("index_select", index, n, axis)
    if x.ndim == 0:
        if index.numel() != 1:
            raise IndexError(f"index_select(): Index to scalar can have only 1 value, got "
                             f"{index.numel()} value(s)")
        return x.reshape(1).index_select(0, index).reshape(())
    r = _wrap(x._k.take(x._data, axis, index._data), x.dtype, x.device, x._k)
    if x._rg and _state.enabled:
        node = IndexSelectBackward0()
        node.shape, node.axis = x._data.shape, axis
        save(node, index)
        attach(r, node, (x, index))
    return r


def index_add_zeros(g, shape, axis, index):
    """Zeros of ``shape`` with the rows of ``g`` added at ``index`` along ``axis``."""
    k = g._k
    idx_shape = tuple(index.shape[0] if d == axis else 1 for d in range(len(shape)))
    idx = k.broadcast_to(k.reshape(index._data, idx_shape), g._data.shape)
    out = k.scatter_add(k.full(shape, 0, g.dtype.name, g.device.index), axis, idx, g._data)
    r = _wrap(out, g.dtype, g.device, k)
    if g._rg and _state.enabled:
        node = IndexAddZerosBackward()
        node.axis = axis
        save(node, index)
        attach(r, node, (g,))
    return r


def _as_index_tensor(op, index, like):
    from plugrad.core.factories import tensor
    if not isinstance(index, Tensor):
        index = tensor(index, device=like.device)
        if index.numel() == 0:
            index = index.to(_dt.int64)
    if index.device is not like.device:
        check_device(op, like, index)
    if index.dtype.kind not in "iu":
        raise IndexError(f"{op}: tensors used as indices must be long, int or bool tensors, "
                         f"got {index.dtype}")
    return index if index.dtype is _dt.int64 else index.to(_dt.int64)


def _wrap_negative(op, index, n, axis):
    """Negative indices count from the end; out-of-range ones raise naming the dimension."""
    if index.numel() == 0:
        return index
    arr = np.asarray(index._k.to_numpy(index._data))
    lo, hi = int(arr.min()), int(arr.max())
    if lo < -n or hi >= n:
        bad = hi if hi >= n else lo
        raise IndexError(f"{op}: index {bad} is out of bounds for dimension {axis} with size "
                         f"{n}")
    if lo < 0:
        return _wrap(index._k.where(index._k.lt(index._data, 0), index._k.add(index._data, n),
                                    index._data), _dt.int64, index.device, index._k)
    return index


# ====================================================================== gather / scatter
class GatherBackward0(Node):

    def backward(self, g):
        (index,) = self.saved
        return (scatter_add(g.new_zeros(self.shape), self.axis, index, g), None)


def gather(x, dim, index, *, sparse_grad=False):
    """``out[i][j] = x[i][index[i][j]]`` along ``dim`` (index no larger than ``x`` elsewhere)."""
    axis = _wrap_dim(dim, x.ndim, "gather")
    index = _as_index_tensor("gather", index, x)
    _check_scatter_shapes("gather", x, axis, index, None)
    index = _wrap_negative("gather", index, x.shape[axis] if x.ndim else 1, axis)
    src = _narrow_to(x, index, axis)
    r = _wrap(x._k.gather(src._data, axis, index._data), x.dtype, x.device, x._k)
    if x._rg and _state.enabled:
        node = GatherBackward0()
        node.shape, node.axis = x._data.shape, axis
        save(node, index)
        attach(r, node, (x, index))
    return r


def take_along_dim(x, indices, dim=None):
    """``gather`` along ``dim``; without ``dim``, on the flattened ``x`` and ``indices``."""
    if dim is None:
        return gather(x.reshape(-1), 0, indices.reshape(-1))
    return gather(x, dim, indices)


def _narrow_to(x, index, axis):
    """``x`` cut to ``index``'s extent in every dimension but ``axis`` (the contract wants
    equal sizes there)."""
    key = tuple(slice(0, n if d != axis else x.shape[d], 1)
                for d, n in enumerate(index.shape))
    return basic_slice(x, key)


def _check_scatter_shapes(op, x, axis, index, src):
    if index.ndim != x.ndim:
        raise ShapeError(f"{op}: Index tensor must have the same number of dimensions as "
                         f"input tensor (index {shape_str(index.shape)}, input "
                         f"{shape_str(x.shape)})")
    for d in range(x.ndim):
        if d != axis and index.shape[d] > x.shape[d]:
            raise ShapeError(f"{op}: Size does not match at dimension {d} expected index "
                             f"{shape_str(index.shape)} to be no larger than self "
                             f"{shape_str(x.shape)} apart from dimension {axis}")
        if src is not None and index.shape[d] > src.shape[d]:
            raise ShapeError(f"{op}: Expected index {shape_str(index.shape)} to be no larger "
                             f"than src {shape_str(src.shape)}")


class ScatterAddBackward0(Node):

    def backward(self, g):
        (index,) = self.saved
        gsrc = gather(g, self.axis, index) if self.next[2] else None
        return (g if self.next[0] else None, None, gsrc)


def scatter_add(x, dim, index, src):
    """A copy of ``x`` with ``src`` added at ``index`` along ``dim``."""
    return _scatter("scatter_add", x, dim, index, src, add=True)


class ScatterBackward0(Node):

    def backward(self, g):
        (index,) = self.saved
        gx = _scatter("scatter", g, self.axis, index, 0.0, add=False) if self.next[0] else None
        gsrc = gather(g, self.axis, index) if self.next[2] else None
        return (gx, None, gsrc)


def scatter(x, dim, index, src=None, value=None, *, reduce=None):
    """A copy of ``x`` with ``src`` (or ``value``) written at ``index`` along ``dim``."""
    if reduce == "add":
        return scatter_add(x, dim, index, src)
    if reduce is not None:
        raise NotImplementedError(f"scatter: reduce={reduce!r} is not supported")
    return _scatter("scatter", x, dim, index, src if src is not None else value, add=False)


def _scatter(op, x, dim, index, src, add):
    axis = _wrap_dim(dim, x.ndim, op)
    index = _as_index_tensor(op, index, x)
    if not isinstance(src, Tensor):
        src = x.new_full(index.shape, src)
    if src.device is not x.device:
        check_device(op, x, src)
    _check_scatter_shapes(op, x, axis, index, src)
    index = _wrap_negative(op, index, x.shape[axis] if x.ndim else 1, axis)
    src_c = src
    if src.shape != index.shape:  # only index's extent of src takes part
        src_c = basic_slice(src, tuple(slice(0, n, 1) for n in index.shape))
    k = x._k
    sd = src_c._data if src_c.dtype is x.dtype else k.astype(src_c._data, x.dtype.name)
    region_key = tuple(slice(0, n if d != axis else x.shape[d], 1)
                       for d, n in enumerate(index.shape))
    full_region = builtins.all(s.stop == n for s, n in zip(region_key, x._data.shape))
    if add:
        kernel = k.scatter_add
    else:
        if not _unique_targets(index, axis):
            return _scatter_repeated(x, axis, index, src_c)
        kernel = k.scatter
    if full_region:
        out = kernel(x._data, axis, index._data, sd)
    else:
        region = k.copy(k.slice(x._data, region_key))
        out = k.assign(k.copy(x._data), region_key, kernel(region, axis, index._data, sd))
    r = _wrap(out, x.dtype, x.device, k)
    if _state.enabled and (x._rg or src._rg):
        node = ScatterAddBackward0() if add else ScatterBackward0()
        node.axis = axis
        save(node, index)
        attach(r, node, (x, index, src_c))
    return r


def _scatter_repeated(x, axis, index, src):
    """``scatter`` whose index repeats a target: the last write wins, as NumPy and PyTorch
    (on CPU) do; the kernel itself only ever sees unique targets."""
    from plugrad.core.factories import tensor
    arr = np.asarray(index._k.to_numpy(index._data))
    coords = list(np.indices(arr.shape))
    coords[axis] = arr
    linear = np.ravel_multi_index(tuple(coords), tuple(x.shape)).reshape(-1)
    chosen = tensor(linear.astype(np.int64), device=x.device)
    out = _last_write_wins(x.reshape(-1), chosen, src.reshape(-1))
    return out.reshape(x.shape)


def _unique_targets(index, axis) -> bool:
    arr = np.asarray(index._k.to_numpy(index._data))
    if arr.size == 0:
        return True
    moved = np.moveaxis(arr, axis, -1).reshape(-1, arr.shape[axis])
    s = np.sort(moved, axis=1)
    return not bool(np.any(s[:, 1:] == s[:, :-1]))


def index_add(x, dim, index, source, *, alpha=1):
    axis = _wrap_dim(dim, x.ndim, "index_add")
    index = _as_index_tensor("index_add", index, x)
    if alpha != 1:
        source = source * alpha
    return x + index_add_zeros(source, x.shape, axis, _wrap_negative("index_add", index,
                                                                      x.shape[axis], axis))


def _check_mask(op, x, mask):
    if not isinstance(mask, Tensor) or mask.dtype is not _dt.bool_:
        got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise DTypeError(f"{op}: only supports boolean masks, but got mask with dtype {got}")
    if mask.device is not x.device:
        check_device(op, x, mask)


def masked_fill(x, mask, value):
    """``x`` with ``value`` where ``mask`` is True (the two broadcast, as in PyTorch)."""
    from plugrad.core.ops._base import broadcast_shapes
    from plugrad.core.ops.select import where
    _check_mask("masked_fill", x, mask)
    broadcast_shapes("masked_fill", mask.shape, x.shape)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ShapeError(f"masked_fill: only supports a 0-dimensional value tensor, but "
                             f"got tensor with {value.ndim} dimension(s)")
        value = value.to(x.dtype)
    else:
        value = float(value) if x.dtype.is_floating_point else (
            bool(value) if x.dtype is _dt.bool_ else int(value))
    out = where(mask, value, x)
    return out if out.dtype is x.dtype else out.to(x.dtype)


def masked_select(x, mask):
    """1-D tensor of the entries of ``x`` where ``mask`` is True (both broadcast)."""
    from plugrad.core.ops.shape import broadcast_tensors
    _check_mask("masked_select", x, mask)
    if mask.shape != x.shape:
        x, mask = broadcast_tensors(x, mask)
    return x[mask]


def nonzero(x, *, as_tuple=False):
    idx = _wrap(x._k.nonzero(x._data if x.dtype is _dt.bool_ else x._k.ne(x._data, 0)),
                _dt.int64, x.device, x._k)
    if as_tuple:
        if x.ndim == 0:  # a 0-d tensor counts as one element at index 0
            return (idx.new_zeros(idx.shape[0]),)
        return tuple(idx[:, d] for d in range(x.ndim))
    return idx


def argwhere(x):
    return nonzero(x)


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
            from plugrad.core.factories import tensor
            arr = np.asarray(item)
            item = tensor(arr if arr.size else arr.astype(np.int64), device=x.device)
        elif isinstance(item, bool):
            from plugrad.core.factories import tensor
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
                idx = _as_index_tensor("index", item, x)
                p.slices.append(slice(0, shape[dim], 1))
                p.view_shape.append(shape[dim])
                p.advanced.append((len(p.view_shape) - 1,
                                   _wrap_negative("index", idx, shape[dim], dim)))
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
    from plugrad.core.factories import zeros
    n = 1 if item.item() else 0
    return zeros(n, dtype=_dt.int64, device=item.device)


def getitem(x, key):
    if isinstance(key, int) and not isinstance(key, bool) and x.ndim:
        n = x._data.shape[0]
        if not -n <= key < n:
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {n}")
        key = key + n if key < 0 else key
        y = basic_slice(x, (slice(key, key + 1, 1),))
        return y.reshape(x._data.shape[1:])
    if x.ndim == 0 and not isinstance(key, tuple) and key is not None and key is not Ellipsis:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    p = _parse(x, key)
    y = basic_slice(x, tuple(p.slices))
    y = y.reshape(tuple(p.view_shape))
    if not p.advanced:
        return y
    return _advanced(y, p.advanced)


def _advanced(y, advanced):
    """Select with index tensors at the given dims of ``y`` (NumPy's rules for where the
    broadcast index dims go)."""
    from plugrad.core.ops.shape import broadcast_tensors
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
def setitem(x, key, value):
    """``x[key] = value`` in place (graph-aware)."""
    from plugrad.core.ops.inplace import apply_inplace
    if not isinstance(value, Tensor):
        from plugrad.core.factories import tensor
        value = tensor(value, dtype=x.dtype, device=x.device)
    elif value.device is not x.device:
        check_device("index_put", x, value)
    p = _parse(x, key)
    needs_graph = _state.enabled and (x._rg or value._rg)
    if not p.advanced and not needs_graph:
        region = [len(range(s.start, s.stop, s.step)) for s in p.slices]
        v = value if value.dtype is x.dtype else value.to(x.dtype)
        v = _fit_value(v, p, region)
        x._data = x._k.assign(x._data, tuple(p.slices), v._data)
        x._vc[0] += 1
        return x
    return apply_inplace("index_put", x, lambda src: index_put(src, p, value))


def _expand_value(v, target):
    """``v`` broadcast to ``target``; leading size-1 dims beyond it are dropped, as PyTorch
    does (``x[0] = ones(1, 1, 4)`` for ``x`` of shape ``[3, 4]``)."""
    from plugrad.core.ops._base import broadcast_shapes
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
    from plugrad.core.ops.select import where
    value = value if value.dtype is x.dtype else value.to(x.dtype)
    if not p.advanced:
        region = [len(range(s.start, s.stop, s.step)) for s in p.slices]
        v = _fit_value(value, p, region)
        mask = slice_scatter_zeros(x.new_ones(region, dtype=_dt.bool_), x.shape, tuple(p.slices))
        placed = slice_scatter_zeros(v, x.shape, tuple(p.slices))
        return where(mask, placed, x)
    from plugrad.core.factories import arange
    positions = arange(x.numel(), device=x.device).reshape(x.shape)
    chosen = getitem_parsed(positions, p).reshape(-1)
    target_shape = getitem_parsed(x.detach(), p).shape
    v = _expand_value(value, target_shape)
    flat = x.reshape(-1)
    out = scatter(flat, 0, chosen, v.reshape(-1)) if _unique_targets(chosen, 0) else \
        _last_write_wins(flat, chosen, v.reshape(-1))
    return out.reshape(x.shape)


def _last_write_wins(flat, chosen, values):
    """Repeated targets: keep the last write, as NumPy and PyTorch (on CPU) do."""
    arr = np.asarray(chosen._k.to_numpy(chosen._data))
    last = {int(t): i for i, t in enumerate(arr)}
    keep = np.array(sorted(last.values()), dtype=np.int64)
    from plugrad.core.factories import tensor
    keep_t = tensor(keep, device=flat.device)
    return scatter(flat, 0, index_select(chosen, 0, keep_t), index_select(values, 0, keep_t))


def getitem_parsed(x, p: _Parsed):
    y = basic_slice(x, tuple(p.slices)).reshape(tuple(p.view_shape))
    return _advanced(y, p.advanced) if p.advanced else y
