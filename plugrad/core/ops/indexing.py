"""Index-based selection and scattering: index_select, gather, scatter(_add), index_add,
masked_fill/select, nonzero, repeat_interleave.

Index tensors are checked (dtype, device, bounds; negative indices count from the end)
before a kernel sees them: the contract's kernels get in-range int64 indices only.
"""
from __future__ import annotations

import builtins
import functools

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record, recording
from plugrad.core.errors import (ArgumentError, DTypeError, IndexOutOfRangeError, ShapeError,
                                 broadcast_shapes, check_device, shape_str)
from plugrad.core.factories import tensor
from plugrad.core.grad_mode import _state
from plugrad.core.ops.declare import op
from plugrad.core.ops.select import where
from plugrad.core.ops.shape import broadcast_tensors, expand, flatten, unsqueeze
from plugrad.core.ops.slicing import basic_slice, slice_scatter
from plugrad.core.tensor import Tensor, _wrap, _wrap_dim
from plugrad.core.tracing import host_read


def as_index_tensor(name, index, like):
    """``index`` as an int64 tensor on ``like``'s device (lists and arrays accepted)."""
    if not isinstance(index, Tensor):
        index = tensor(index, device=like.device)
        if index.numel() == 0:
            index = index.to(_dt.int64)
    if index.device is not like.device:
        check_device(name, like, index)
    if index.dtype.kind not in "iu":
        raise IndexError(f"{name}: tensors used as indices must be long, int or bool tensors, "
                         f"got {index.dtype}")
    return index if index.dtype is _dt.int64 else index.to(_dt.int64)


def wrap_negative(name, index, n, axis):
    """Negative indices count from the end; out-of-range ones raise naming the dimension."""
    if index.numel() == 0:
        return index
    if host_read(functools.partial(_negative_within, name=name, n=n, axis=axis), index._k,
                 index._data):
        k = index._k
        return _wrap(k.where(k.lt(index._data, 0), k.add(index._data, n), index._data),
                     _dt.int64, index.device, k)
    return index


def _negative_within(arr, name, n, axis) -> bool:
    """Whether some index counts from the end; raises on one out of range."""
    lo, hi = int(arr.min()), int(arr.max())
    if lo < -n or hi >= n:
        bad = hi if hi >= n else lo
        raise IndexOutOfRangeError(f"{name}: index {bad} is out of bounds for dimension "
                                   f"{axis} with size {n}")
    return lo < 0


def _zeros(F, shape, like, index):
    return F.full(tuple(shape), 0.0, F.dtype_of(like), index)


# ====================================================================== index_select
class IndexSelectBackward0(Node):

    def grad(self, F, g, index):
        shape, axis = self.shape, self.axis
        idx_shape = tuple(g.shape[axis] if d == axis else 1 for d in range(len(shape)))
        idx = F.broadcast_to(F.reshape(index, idx_shape), g.shape)
        return (F.scatter_add(_zeros(F, shape, g, self.device.index), axis, idx, g), None)


@op("index_select", method="index_select")
def index_select(x, dim, index):
    """Entries of ``x`` along ``dim`` at the 1-D integer ``index``."""
    axis = _wrap_dim(dim, x.ndim, "index_select")
    index = as_index_tensor("index_select", index, x)
    if index.ndim > 1:
        raise ShapeError(f"index_select(): Index is supposed to be a vector, got shape "
                         f"{shape_str(index.shape)}")
    index = index.reshape(-1)
    n = x.shape[axis] if x.ndim else 1
    index = wrap_negative("index_select", index, n, axis)
    if x.ndim == 0:
        if index.numel() != 1:
            raise IndexError(f"index_select(): Index to scalar can have only 1 value, got "
                             f"{index.numel()} value(s)")
        return index_select(x.reshape(1), 0, index).reshape(())
    r = _wrap(x._k.take(x._data, axis, index._data), x.dtype, x.device, x._k)
    if x._rg and _state.enabled:
        node = IndexSelectBackward0()
        node.shape, node.axis = x._data.shape, axis
        record(r, node, (x, index), (index,))
    return r


@op("index_add", method="index_add", inplace="index_add_")
def index_add(x, dim, index, source, *, alpha=1):
    """``x`` with the slices of ``source`` added at ``index`` along ``dim``."""
    axis = _wrap_dim(dim, x.ndim, "index_add")
    index = wrap_negative("index_add", as_index_tensor("index_add", index, x).reshape(-1),
                          x.shape[axis], axis)
    expected = tuple(index.shape[0] if d == axis else n for d, n in enumerate(x.shape))
    if tuple(source.shape) != expected and not (x.ndim == 0 and source.numel() == 1):
        raise ShapeError(f"index_add_(): source of shape {shape_str(source.shape)} does not fit "
                         f"{index.shape[0]} indices into dimension {axis} of "
                         f"{shape_str(x.shape)} (expected {shape_str(expected)})")
    if alpha != 1:
        source = source * alpha
    shape = [1] * x.ndim
    shape[axis] = index.shape[0]
    return scatter_add(x, axis, expand(index.reshape(shape), source.shape), source)


# ====================================================================== gather / scatter
class GatherBackward0(Node):

    def grad(self, F, g, index):
        return (F.scatter_add(_zeros(F, self.shape, g, self.device.index), self.axis,
                              index, g), None)


def _check_scatter_shapes(name, x, axis, index, src):
    if index.ndim != x.ndim:
        raise ShapeError(f"{name}: Index tensor must have the same number of dimensions as "
                         f"input tensor (index {shape_str(index.shape)}, input "
                         f"{shape_str(x.shape)})")
    for d in range(x.ndim):
        if d != axis and index.shape[d] > x.shape[d]:
            raise ShapeError(f"{name}: Size does not match at dimension {d} expected index "
                             f"{shape_str(index.shape)} to be no larger than self "
                             f"{shape_str(x.shape)} apart from dimension {axis}")
        if src is not None and index.shape[d] > src.shape[d]:
            raise ShapeError(f"{name}: Expected index {shape_str(index.shape)} to be no larger "
                             f"than src {shape_str(src.shape)}")


def _region(x, index, axis):
    """The slices of ``x`` that ``index`` reaches (its extent in every dim but ``axis``)."""
    return tuple(slice(0, n if d != axis else x.shape[d], 1) for d, n in enumerate(index.shape))


@op("gather", method="gather")
def gather(x, dim, index, *, sparse_grad=False):
    """``out[i][j] = x[i][index[i][j]]`` along ``dim`` (index no larger than ``x`` elsewhere)."""
    axis = _wrap_dim(dim, x.ndim, "gather")
    index = as_index_tensor("gather", index, x)
    _check_scatter_shapes("gather", x, axis, index, None)
    index = wrap_negative("gather", index, x.shape[axis] if x.ndim else 1, axis)
    src = basic_slice(x, _region(x, index, axis))  # the contract wants equal extents
    r = _wrap(x._k.gather(src._data, axis, index._data), x.dtype, x.device, x._k)
    if src._rg and _state.enabled:
        node = GatherBackward0()
        node.shape, node.axis = src._data.shape, axis
        record(r, node, (src, index), (index,))
    return r


@op("take_along_dim", method="take_along_dim")
def take_along_dim(x, indices, dim=None):
    """``gather`` along ``dim``; without ``dim``, on the flattened ``x`` and ``indices``."""
    if dim is None:
        return gather(x.reshape(-1), 0, indices.reshape(-1))
    return gather(x, dim, indices)


class ScatterAddBackward0(Node):

    def grad(self, F, g, index):
        return (g if self.next[0] else None, None,
                F.gather(g, self.axis, index) if self.next[2] else None)


class ScatterBackward0(Node):

    def grad(self, F, g, index):
        gx = None
        if self.next[0]:
            gx = F.scatter(g, self.axis, index, _zeros(F, index.shape, g, self.device.index))
        return (gx, None, F.gather(g, self.axis, index) if self.next[2] else None)


@op("scatter_add", method="scatter_add", inplace="scatter_add_")
def scatter_add(x, dim, index, src):
    """A copy of ``x`` with ``src`` added at ``index`` along ``dim``."""
    return _scatter("scatter_add", x, dim, index, src, add=True)


def scatter(x, dim, index, src=None, value=None):
    """A copy of ``x`` with ``src`` (or ``value``) written at ``index`` along ``dim`` (the
    public op, with ``reduce=``, is :func:`plugrad.core.ops.scatter_ops.scatter`)."""
    return _scatter("scatter", x, dim, index, src if src is not None else value, add=False)


def _scatter(name, x, dim, index, src, add):
    axis = _wrap_dim(dim, x.ndim, name)
    index = as_index_tensor(name, index, x)
    if not isinstance(src, Tensor):
        src = x.new_full(index.shape, src)
    if src.device is not x.device:
        check_device(name, x, src)
    _check_scatter_shapes(name, x, axis, index, src)
    index = wrap_negative(name, index, x.shape[axis] if x.ndim else 1, axis)
    if src.shape != index.shape:  # only index's extent of src takes part
        src = basic_slice(src, tuple(slice(0, n, 1) for n in index.shape))
    if src.dtype is not x.dtype:
        src = src.to(x.dtype)
    key = _region(x, index, axis)
    if not builtins.all(s.stop == n for s, n in zip(key, x._data.shape)):
        # the kernels want index's extent in the other dims: scatter into that region
        inner = _scatter(name, basic_slice(x, key), axis, index, src, add)
        return slice_scatter(x, key, inner)
    if not add and not _unique_targets(index, axis):
        return _scatter_repeated(x, axis, index, src)
    k = x._k
    kernel = k.scatter_add if add else k.scatter
    r = _wrap(kernel(x._data, axis, index._data, src._data), x.dtype, x.device, k)
    if recording(x, src):
        node = ScatterAddBackward0() if add else ScatterBackward0()
        node.axis = axis
        record(r, node, (x, index, src), (index,))
    return r


def _unique_targets(index, axis) -> bool:
    return host_read(functools.partial(_no_repeats, axis=axis), index._k, index._data)


def _no_repeats(arr, axis) -> bool:
    if arr.size == 0:
        return True
    moved = np.moveaxis(arr, axis, -1).reshape(-1, arr.shape[axis])
    s = np.sort(moved, axis=1)
    return not bool(np.any(s[:, 1:] == s[:, :-1]))


def _scatter_repeated(x, axis, index, src):
    """``scatter`` whose index repeats a target: the last write wins, as NumPy and PyTorch
    (on CPU) do; the kernel itself only ever sees unique targets."""
    arr = np.asarray(index._k.to_numpy(index._data))
    coords = list(np.indices(arr.shape))
    coords[axis] = arr
    linear = np.ravel_multi_index(tuple(coords), tuple(x.shape)).reshape(-1)
    out = last_write_wins(x.reshape(-1), tensor(linear.astype(np.int64), device=x.device),
                          src.reshape(-1))
    return out.reshape(x.shape)


def last_write_wins(flat, chosen, values):
    """Scatter ``values`` into the 1-D ``flat`` at ``chosen``; repeated targets keep the
    last write, as NumPy and PyTorch (on CPU) do."""
    arr = np.asarray(chosen._k.to_numpy(chosen._data))
    last = {int(t): i for i, t in enumerate(arr)}
    keep = tensor(np.array(sorted(last.values()), dtype=np.int64), device=flat.device)
    return scatter(flat, 0, index_select(chosen, 0, keep), index_select(values, 0, keep))


# ====================================================================== masks
def _check_mask(name, x, mask):
    if not isinstance(mask, Tensor) or mask.dtype is not _dt.bool_:
        got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise DTypeError(f"{name}: only supports boolean masks, but got mask with dtype {got}")
    if mask.device is not x.device:
        check_device(name, x, mask)


@op("masked_fill", method="masked_fill", inplace="masked_fill_")
def masked_fill(x, mask, value):
    """``x`` with ``value`` where ``mask`` is True (the two broadcast, as in PyTorch)."""
    _check_mask("masked_fill", x, mask)
    broadcast_shapes("masked_fill", mask.shape, x.shape)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ShapeError(f"masked_fill: only supports a 0-dimensional value tensor, but "
                             f"got tensor with {value.ndim} dimension(s)")
        value = value.to(x.dtype)
    else:
        value = _dt.checked_scalar("masked_fill", value, x.dtype)
    out = where(mask, value, x)
    return out if out.dtype is x.dtype else out.to(x.dtype)


@op("masked_select", method="masked_select")
def masked_select(x, mask):
    """1-D tensor of the entries of ``x`` where ``mask`` is True (both broadcast)."""
    _check_mask("masked_select", x, mask)
    if mask.shape != x.shape:
        x, mask = broadcast_tensors(x, mask)
    return x[mask]


@op("nonzero", method="nonzero")
def nonzero(x, *, as_tuple=False):
    idx = _wrap(x._k.nonzero(x._data if x.dtype is _dt.bool_ else x._k.ne(x._data, 0)),
                _dt.int64, x.device, x._k)
    if as_tuple:
        if x.ndim == 0:  # a 0-d tensor counts as one element at index 0
            return (idx.new_zeros(idx.shape[0]),)
        return tuple(idx[:, d] for d in range(x.ndim))
    return idx


@op("argwhere", method="argwhere")
def argwhere(x):
    return nonzero(x)


# ====================================================================== repeat_interleave
@op("repeat_interleave", method="repeat_interleave")
def repeat_interleave(x, repeats, dim=None, *, output_size=None):
    """Each slice along ``dim`` repeated ``repeats`` times (an int, or one count per slice)."""
    if dim is None:
        x, dim = flatten(x), 0
    d = _wrap_dim(dim, x.ndim, "repeat_interleave")
    counts = np.asarray(repeats.tolist() if isinstance(repeats, Tensor) else repeats,
                        dtype=np.int64).reshape(-1)
    if (counts < 0).any():
        raise ArgumentError(f"repeat_interleave: Repeats must be non-negative, got "
                            f"{counts.tolist()}")
    if counts.size == 1:
        y = unsqueeze(x, d + 1)
        shape = list(y.shape)
        shape[d + 1] = int(counts[0])
        return flatten(expand(y, shape), d, d + 1)
    n = x.shape[d]
    if counts.size != n or (counts < 0).any():
        raise ShapeError(f"repeat_interleave: repeats must have the same size as input along "
                         f"dim {d} ({n}) and be non-negative, got {counts.tolist()}")
    return index_select(x, d, tensor(np.repeat(np.arange(n), counts), device=x.device))
