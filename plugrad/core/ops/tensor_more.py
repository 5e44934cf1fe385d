"""More tensor ops PyTorch has: ``ravel``, ``select``, the ``*split``/``*stack`` family,
``atleast_2d/3d``, ``combinations``, ``select_scatter``/``diagonal_scatter``, ``put``,
``index_reduce``, ``fill_diagonal_``, ``unravel_index``, ``type_as``, ``sum_to_size``.

Each is a composition of existing differentiable ops (views where PyTorch returns views),
so every backend has it and its gradient is that of the ops it composes; ``put`` has
PyTorch's own rule (every source element of a repeated index gets its place's gradient).
"""
from __future__ import annotations

import itertools
import math

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record
from plugrad.core.grad_mode import _state, no_grad
from plugrad.core.errors import shape_str
from plugrad.core.factories import tensor
from plugrad.core.ops.declare import op
from plugrad.core.ops.join import cat, hstack, split, tensor_split
from plugrad.core.ops.slicing import slice_scatter_public as slice_scatter
from plugrad.core.tensor import Tensor, _wrap_dim


def _seq(tensors):
    """``f(a, b)`` and ``f([a, b])`` both: the list of tensors."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


# ---------------------------------------------------------------------- shapes
def _at_least(t, nd):
    if nd == 2:
        return t.reshape(1, 1) if t.ndim == 0 else (t.unsqueeze(0) if t.ndim == 1 else t)
    if t.ndim == 0:
        return t.reshape(1, 1, 1)
    if t.ndim == 1:
        return t.reshape(1, -1, 1)
    return t.unsqueeze(-1) if t.ndim == 2 else t


@op("atleast_2d")
def atleast_2d(*tensors):
    """Each tensor with at least 2 dims (a 1-d one becomes a row)."""
    ts = _seq(tensors)
    out = tuple(_at_least(t, 2) for t in ts)
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


@op("atleast_3d")
def atleast_3d(*tensors):
    """Each tensor with at least 3 dims (``(n,)`` -> ``(1, n, 1)``, ``(m, n)`` -> ``(m, n, 1)``)."""
    ts = _seq(tensors)
    out = tuple(_at_least(t, 3) for t in ts)
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


@op("column_stack")
def column_stack(tensors):
    """The tensors side by side as columns (0-d and 1-d ones become columns first)."""
    return hstack([t.reshape(-1, 1) if t.ndim < 2 else t for t in tensors])


@op("dstack")
def dstack(tensors):
    """The tensors stacked along dim 2 (made at least 3-d first)."""
    return cat([_at_least(t, 3) for t in tensors], 2)


def _dir_split(name, input, sections, dim, least):
    if input.ndim < least:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension"
                           f"{'s' if least > 1 else ''}, but got a tensor with {input.ndim} "
                           f"dimensions!")
    if isinstance(sections, int) and input.shape[dim] % sections != 0:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {input.shape[dim]} is not divisible by the "
                           f"split_size {sections}!")
    return tensor_split(input, sections, dim)


@op("hsplit", method="hsplit")
def hsplit(input, sections):
    return _dir_split("hsplit", input, sections, 0 if input.ndim == 1 else 1, 1)


@op("vsplit", method="vsplit")
def vsplit(input, sections):
    return _dir_split("vsplit", input, sections, 0, 2)


@op("dsplit", method="dsplit")
def dsplit(input, sections):
    return _dir_split("dsplit", input, sections, 2, 3)


@op("split_with_sizes unsafe_split_with_sizes", method="split_with_sizes")
def split_with_sizes(input, split_sizes, dim=0):
    """Pieces of the given sizes along ``dim`` (they must add up to its size)."""
    axis = _wrap_dim(dim, input.ndim, "split_with_sizes")
    if sum(split_sizes) != input.shape[axis]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{input.shape[axis]} (input tensor's size at dimension {dim}), but "
                           f"got split_sizes={list(split_sizes)}")
    return split(input, list(split_sizes), axis)


@op("unsafe_split", method="unsafe_split")
def unsafe_split(input, split_size, dim=0):
    return split(input, split_size, dim)


@op("unsafe_chunk", method="unsafe_chunk")
def unsafe_chunk(input, chunks, dim=0):
    return input.chunk(chunks, dim)


@op("combinations")
def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-d tensor's elements, one per row."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {shape_str(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_zeros((0,))
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    idx = input.new_tensor([i for row in rows for i in row], dtype=_dt.int64)
    return input.index_select(0, idx).reshape(len(rows), r)


@op(method="sum_to_size")
def sum_to_size(input, *size):
    """Summed down to ``size`` (which ``input`` must broadcast from)."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else size
    shape = tuple(input.shape)
    lead = len(shape) - len(size)
    ok = lead >= 0 and all(s == t or s == 1 for s, t in zip(size, shape[lead:]))
    if not ok:
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    out = input.sum(tuple(range(lead))) if lead else input
    axes = tuple(i for i, (s, t) in enumerate(zip(size, out.shape)) if s == 1 and t != 1)
    return out.sum(axes, keepdim=True) if axes else out


# ---------------------------------------------------------------------- writes
@op("select_scatter", method="select_scatter")
def select_scatter(input, src, dim, index):
    """``input`` with the slice ``select(dim, index)`` replaced by ``src``."""
    axis = _wrap_dim(dim, input.ndim, "select_scatter")
    n = input.shape[axis]
    want = tuple(input.shape[:axis]) + tuple(input.shape[axis + 1:])
    if tuple(src.shape) != want:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src "
                           f"size = {shape_str(src.shape)}, slice size = {shape_str(want)}")
    i = index % n
    return slice_scatter(input, src.unsqueeze(axis), axis, i, i + 1)


@op("diagonal_scatter", method="diagonal_scatter")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with its ``diagonal(offset, dim1, dim2)`` replaced by ``src``."""
    d1, d2 = _wrap_dim(dim1, input.ndim, "diagonal_scatter"), _wrap_dim(
        dim2, input.ndim, "diagonal_scatter")
    want = tuple(input.diagonal(offset, d1, d2).shape)
    if tuple(src.shape) != want:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {shape_str(src.shape)}, slice size = {shape_str(want)}")
    n = want[-1]
    moved = input.movedim((d1, d2), (0, 1))
    steps = input.new_tensor(list(range(n)), dtype=_dt.int64)
    rows, cols = steps + max(-offset, 0), steps + max(offset, 0)
    out = moved.index_put((rows, cols), src.movedim(-1, 0).to(input.dtype))
    return out.movedim((0, 1), (d1, d2))


@op("put", method="put", inplace="put_")
def put(input, index, source, accumulate=False):
    """``input`` with the elements at flat ``index`` (negative counts from the end) set to,
    or with ``accumulate`` increased by, ``source``."""
    n = input.numel()
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {index.numel()}")
    flat_index = index.reshape(-1)
    if flat_index.numel() and bool(((flat_index >= n).logical_or(flat_index < -n)).any()):
        raise IndexError(f"put_(): index out of range for a tensor of {n} elements")
    flat_index = flat_index % max(n, 1)
    src = source.reshape(-1).to(input.dtype)
    with no_grad():
        out = input.reshape(-1).index_put((flat_index,), src, accumulate).reshape(input.shape)
    if _state.enabled and (input._rg or src._rg):
        node = PutBackward0()
        node.shape, node.accumulate = tuple(input.shape), accumulate
        record(out, node, (input, src), (flat_index,))
    return out


class PutBackward0(Node):
    """PyTorch's rule: ``input`` gets ``g`` with zeros put at ``index`` (``g`` itself when
    accumulating), ``source`` gets ``g.take(index)``: with repeated indices every source
    element gets the gradient of its place, the one that won it or not."""

    def grad(self, F, g, index):
        flat = F.reshape(g, (math.prod(self.shape),))
        gi = gs = None
        if self.next[0]:
            gi = g if self.accumulate else F.reshape(F.scatter(
                flat, 0, index, F.full(index.shape, 0, F.dtype_of(g), self.device.index)),
                self.shape)
        if self.next[1]:
            gs = F.gather(flat, 0, index)
        return gi, gs


@op("index_reduce", method="index_reduce", inplace="index_reduce_")
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Elements of ``source`` reduced (``prod``, ``mean``, ``amax``, ``amin``) into the
    slices of ``input`` along ``dim`` that ``index`` names: ``scatter_reduce`` with the index
    spread over ``source``'s other dims."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    axis = _wrap_dim(dim, max(input.ndim, 1), "index_reduce")
    if index.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    src = source if source.ndim else source.reshape(1)
    view = [1] * src.ndim
    view[axis] = -1
    full_index = index.reshape(view).expand(src.shape)
    base = input if input.ndim else input.reshape(1)
    out = base.scatter_reduce(axis, full_index, src, reduce, include_self=include_self)
    return out.reshape(input.shape)


@op(method="fill_diagonal_")
def fill_diagonal_(input, fill_value, wrap=False):
    """Writes ``fill_value`` on the main diagonal (every dim the same size, or a 2-d tensor;
    ``wrap`` restarts the diagonal below a tall matrix's square part)."""
    if input.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(input.shape)
    if input.ndim > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    step = sum(strides)
    n = math.prod(shape)
    if input.ndim == 2 and wrap and shape[0] > shape[1] + 1:
        positions = list(range(0, n, shape[1] + 1))
    else:
        positions = [k * step for k in range(min(shape))]
    mask = input.new_zeros((n,), dtype=_dt.bool_)
    if positions:
        mask[input.new_tensor(positions, dtype=_dt.int64)] = True
    return input.masked_fill_(mask.reshape(shape), fill_value)


# ---------------------------------------------------------------------- index arithmetic
@op("unravel_index")
def unravel_index(indices, shape):
    """The coordinates in ``shape`` of flat ``indices``: one int64 tensor per dim."""
    if isinstance(indices, Tensor):
        if indices.dtype.is_floating_point or indices.dtype is _dt.bool_:
            raise TypeError(f"expected 'indices' to be integer dtype, but got "
                            f"{indices.dtype}")
        idx = indices.to(_dt.int64)
    else:
        idx = tensor(indices, dtype=_dt.int64)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    n = math.prod(shape)
    if idx.numel() and bool(((idx >= n).logical_or(idx < -n)).any()):
        raise RuntimeError("'indices' must be in range [-{0}, {1}), but got out-of-range "
                           "values".format(n, n))
    idx = idx % max(n, 1)
    out = []
    for i in range(len(shape)):
        stride = math.prod(shape[i + 1:])
        out.append((idx // stride) % shape[i])
    return tuple(out)
