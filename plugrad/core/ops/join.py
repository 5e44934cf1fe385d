"""Joining and splitting along a dimension: cat/stack, narrow, split/chunk/unbind.

``split`` and its relatives make one node with one output per piece (PyTorch's
``SplitBackward0``), so the gradient of T pieces is one concatenation, not T paddings.
"""
from __future__ import annotations

import builtins

from plugrad.core.aliasing import Slice
from plugrad.core.autograd.node import Node, present_as
from plugrad.core.autograd.record import any_recording, record
from plugrad.core.dtypes import result_type_of
from plugrad.core.errors import (ArgumentError, IndexOutOfRangeError, ShapeError, check_device,
                                 shape_str)
from plugrad.core.grad_mode import _state
from plugrad.core.ops.declare import op
from plugrad.core.ops.shape import squeeze, unsqueeze, view_of
from plugrad.core.tensor import Tensor, _wrap, _wrap_dim


def _dim_arg(dim, axis, name):
    """PyTorch accepts NumPy's ``axis=`` for ``dim=`` in the joining ops."""
    if axis is not None:
        if dim not in (0, None):
            raise TypeError(f"{name}() received both dim and axis")
        return axis
    return 0 if dim is None else dim


# ---------------------------------------------------------------------- concatenation
class CatBackward0(Node):

    def grad(self, F, g):
        out, start = [], 0
        for size, legacy in zip(self.sizes, self.legacy):
            if legacy:  # a 1-D empty input: an empty gradient of its own shape
                out.append(F.full((0,), 0.0, F.dtype_of(g), self.device.index))
                continue
            key = tuple(slice(start, start + size, 1) if i == self.axis else
                        slice(0, n, 1) for i, n in enumerate(g.shape))
            out.append(F.slice(g, key))
            start += size
        return tuple(out)


@op("cat concat concatenate")
def cat(tensors, dim=0, *, axis=None):
    tensors = list(tensors)
    if not tensors:
        raise ShapeError("cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:  # PyTorch checks this before anything else, naming the position
            raise ShapeError(f"cat: zero-dimensional tensor (at position {i}) cannot be "
                             f"concatenated")
    dim = _dim_arg(dim, axis, "cat")
    # PyTorch lets legacy 1-D empty tensors join anything (but promotes over them too).
    legacy = [t.ndim == 1 and t.shape[0] == 0 for t in tensors]
    joined = [t for t, lg in zip(tensors, legacy) if not lg]
    if not joined:  # only empty 1-D inputs: they join each other
        joined, legacy = list(tensors), [False] * len(tensors)
    first = joined[0]
    ax = _wrap_dim(dim, first.ndim, "cat")
    for i, t in enumerate(tensors):
        if t.device is not first.device:
            check_device("cat", first, t)
    for i, t in enumerate(joined[1:], 1):
        if t.ndim != first.ndim or builtins.any(a != b for j, (a, b) in enumerate(
                zip(t.shape, first.shape)) if j != ax):
            raise ShapeError(f"cat: Sizes of tensors must match except in dimension {ax}. "
                             f"Expected {shape_str(first.shape)} but got {shape_str(t.shape)} "
                             f"for tensor number {i} in the list")
    dtype = result_type_of(tuple((t.dtype, False) for t in tensors))
    k = first._k
    arrays = [t._data if t.dtype is dtype else k.astype(t._data, dtype.name) for t in joined]
    r = _wrap(k.concat(arrays, ax), dtype, first.device, k)
    if any_recording(tensors):
        node = CatBackward0()
        node.axis, node.legacy = ax, legacy
        node.sizes = [0 if lg else t.shape[ax] for t, lg in zip(tensors, legacy)]
        record(r, node, tensors)
        if builtins.any(t.dtype is not dtype for t in tensors):
            node.meta = tuple(None if t.dtype is dtype else (t._data.shape, t.dtype.name)
                              for t in tensors)
    return r


@op("stack")
def stack(tensors, dim=0, *, axis=None):
    tensors = list(tensors)
    if not tensors:
        raise ShapeError("stack expects a non-empty TensorList")
    dim = _dim_arg(dim, axis, "stack")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise ShapeError(f"stack expects each tensor to be equal size, but got "
                             f"{shape_str(tensors[0].shape)} at entry 0 and "
                             f"{shape_str(t.shape)} at entry {i}")
    d = _wrap_dim(dim, tensors[0].ndim + 1, "stack")
    return cat([unsqueeze(t, d) for t in tensors], d)


@op("atleast_1d")
def atleast_1d(t):
    return t.reshape(1) if t.ndim == 0 else t


@op("hstack")
def hstack(tensors):
    tensors = [atleast_1d(t) for t in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


@op("vstack row_stack")
def vstack(tensors):
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0)


# ---------------------------------------------------------------------- narrow
class NarrowBackward0(Node):
    _is_view = True

    def grad(self, F, g):
        n = self.shape[self.axis]
        length = g.shape[self.axis]
        if length == n:
            return (g,)
        widths = [(0, 0)] * len(self.shape)
        widths[self.axis] = (self.start, n - self.start - length)
        return (F.pad(g, tuple(widths), 0.0),)


@op("narrow", method="narrow")
def narrow(x, dim, start, length):
    axis = _wrap_dim(dim, x.ndim, "narrow")
    n = x.shape[axis]
    if isinstance(start, Tensor):
        start = int(start.item())
    if start < 0:
        start += n
    if not (0 <= start <= n and 0 <= length and start + length <= n):
        raise IndexOutOfRangeError(f"narrow: start ({start}) + length ({length}) exceeds "
                                   f"dimension size "
                         f"({n}) of dimension {axis}")
    key = tuple(slice(start, start + length, 1) if i == axis else slice(0, s, 1)
                for i, s in enumerate(x._data.shape))
    node = None
    if x._rg and _state.enabled:
        node = NarrowBackward0()
        node.shape, node.axis, node.start = x._data.shape, axis, start
    return present_as(view_of(x, x._k.slice(x._data, key), node, Slice(key)), "SliceBackward0")


# ---------------------------------------------------------------------- split family
class SplitBackward0(Node):
    """One node for every piece: the pieces' gradients (zeros for unused ones) joined."""

    _is_view = True

    def grad(self, F, g):
        if self.n_outputs == 1:  # a single piece: the engine hands its gradient bare
            return (g,)
        pieces = []
        for gi, size in zip(g, self.sizes):
            if gi is None:
                shape = list(self.shape)
                shape[self.axis] = size
                gi = F.full(tuple(shape), 0.0, self.dtype_name, self.device.index)
            pieces.append(gi)
        return (F.concat(pieces, self.axis) if len(pieces) != 1 else pieces[0],)


def _pieces(x, axis, sizes, name="Split"):
    """Views of ``x`` along ``axis`` of the given sizes, all outputs of one node."""
    k, data, shape = x._k, x._data, x._data.shape
    outs, start = [], 0
    for s in sizes:
        key = tuple(slice(start, start + s, 1) if i == axis else slice(0, n, 1)
                    for i, n in enumerate(shape))
        piece = view_of(x, k.slice(data, key), None, Slice(key))
        if name is not None:  # PyTorch refuses in-place ops on them in the graph
            piece.__dict__["_multi_view"] = (name, len(outs))
        outs.append(piece)
        start += s
    if outs and x._rg and _state.enabled:
        node = SplitBackward0()
        node.n_outputs, node.sizes, node.axis = len(sizes), list(sizes), axis
        node.shape, node.dtype_name = shape, x.dtype.name
        record(outs[0], node, (x,))
        for nr, o in enumerate(outs[1:], 1):
            o.grad_fn, o._rg, o._output_nr = node, True, nr
    return tuple(outs)


@op("split", method="split")
def split(x, split_size_or_sections, dim=0):
    axis = _wrap_dim(dim, x.ndim, "split")
    n = x.shape[axis]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and n:
            raise ArgumentError(f"split: split_size must be positive, got {step}")
        sizes = [builtins.min(step, n - i) for i in range(0, n, step)] if n else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise ShapeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                             f"(input tensor's size at dimension {axis}), but got split_sizes="
                             f"{sizes}")
    return _pieces(x, axis, sizes)


@op("chunk", method="chunk")
def chunk(x, chunks, dim=0):
    axis = _wrap_dim(dim, x.ndim, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = x.shape[axis]
    if n == 0:  # PyTorch gives `chunks` empty pieces
        return _pieces(x, axis, [0] * chunks)
    size = -(-n // chunks)
    return split(x, size, axis)


@op("tensor_split", method="tensor_split")
def tensor_split(x, indices_or_sections, dim=0):
    """``n`` near-equal parts (the first ``size % n`` one longer), or parts cut at indices."""
    axis = _wrap_dim(dim, x.ndim, "tensor_split")
    n = x.shape[axis]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        spec = spec.item() if spec.ndim == 0 else spec.tolist()
    if isinstance(spec, int):
        if spec <= 0:
            raise ArgumentError(f"tensor_split: number of sections must be larger than 0, got "
                             f"{spec}")
        base, extra = divmod(n, spec)
        return _pieces(x, axis, [base + 1 if i < extra else base for i in range(spec)],
                       None)
    bounds = [builtins.min(builtins.max(int(i) + n if int(i) < 0 else int(i), 0), n)
              for i in spec]
    starts = [0] + bounds
    ends = bounds + [n]
    return tuple(narrow(x, axis, a, builtins.max(b - a, 0)) for a, b in zip(starts, ends))


@op("unbind", method="unbind")
def unbind(x, dim=0):
    axis = _wrap_dim(dim, x.ndim, "unbind")
    if x.shape[axis] == 0:
        return ()
    return tuple(present_as(squeeze(p, axis), "UnbindBackward0")
                 for p in _pieces(x, axis, [1] * x.shape[axis], "Unbind"))
