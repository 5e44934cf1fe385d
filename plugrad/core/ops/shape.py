"""Movement ops: reshape, permute, expand, concatenation, splitting, flipping, padding.

Outputs may share memory with their input (as NumPy views do), so they share the input's
version counter: an in-place change through either is seen by autograd's checks.
"""
from __future__ import annotations

import builtins

import numpy as np

from plugrad.core.autograd.node import Node
from plugrad.core.dtypes import result_type_of
from plugrad.core.factories import arange, tensor
from plugrad.core.ops._base import (ShapeError, Tensor, _state, _wrap, attach, broadcast_shapes,
                                    check_device, shape_str, sum_to, sum_to_array)
from plugrad.core.ops.indexing import basic_slice, index_select
from plugrad.core.ops.select import where
from plugrad.core.tensor import _wrap_dim


def _sizes(args) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` both mean the shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return tuple(int(a) for a in args)


def _view_of(x: Tensor, data, node_cls=None, **fields) -> Tensor:
    r = _wrap(data, x.dtype, x.device, x._k)
    r._vc = x._vc
    if node_cls is not None and x._rg and _state.enabled:
        node = node_cls()
        for name, value in fields.items():
            setattr(node, name, value)
        attach(r, node, (x,))
    return r


# ---------------------------------------------------------------------- reshape
class ViewBackward0(Node):
    _is_view = True

    def backward(self, g):
        return (g.reshape(self.shape),)

    def backward_arrays(self, k, g):
        return (k.reshape(g, self.shape),)


def infer_shape(op: str, shape: tuple, numel: int, source_shape) -> tuple:
    """Resolve one ``-1`` in ``shape``; a wrong size names both shapes."""
    if shape.count(-1) > 1:
        raise ShapeError(f"{op}: only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise ShapeError(f"{op}: invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 and numel == 0:
            raise ShapeError(f"{op}: cannot reshape tensor of 0 elements into shape "
                             f"{shape_str(shape)} because the unspecified dimension size -1 "
                             f"can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise ShapeError(f"{op}: shape '{shape_str(shape)}' is invalid for input of size "
                             f"{numel} (input shape {shape_str(source_shape)})")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise ShapeError(f"{op}: shape '{shape_str(shape)}' is invalid for input of size "
                         f"{numel} (input shape {shape_str(source_shape)})")
    return shape


def reshape(x, *shape):
    shape = _sizes(shape)
    src = x._data.shape
    if shape == src:
        return _view_of(x, x._data, ViewBackward0, shape=src)
    shape = infer_shape("reshape", shape, x.numel(), src)
    return _view_of(x, x._k.reshape(x._data, shape), ViewBackward0, shape=src)


def view(x, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        return x.to(shape[0])  # view(dtype)
    shape = _sizes(shape)
    src = x._data.shape
    shape = infer_shape("view", shape, x.numel(), src)
    return _view_of(x, x._k.reshape(x._data, shape), ViewBackward0, shape=src)


def flatten(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return reshape(x, 1)
    s = _wrap_dim(start_dim, x.ndim, "flatten")
    e = _wrap_dim(end_dim, x.ndim, "flatten")
    if s > e:
        raise ShapeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = x.shape
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(x, tuple(shape[:s]) + (n,) + tuple(shape[e + 1:]))


def unflatten(x, dim, sizes):
    d = _wrap_dim(dim, x.ndim, "unflatten")
    shape = x.shape
    sizes = infer_shape("unflatten", tuple(sizes), shape[d], (shape[d],))
    return reshape(x, tuple(shape[:d]) + sizes + tuple(shape[d + 1:]))


def squeeze(x, dim=None):
    shape = x._data.shape
    if dim is None:
        new = tuple(n for n in shape if n != 1)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = {_wrap_dim(d, len(shape), "squeeze") for d in dims}
        new = tuple(n for i, n in enumerate(shape) if not (i in dims and n == 1))
    return reshape(x, new)


def unsqueeze(x, dim):
    d = _wrap_dim(dim, x.ndim + 1, "unsqueeze")
    shape = x._data.shape
    return reshape(x, shape[:d] + (1,) + shape[d:])


# ---------------------------------------------------------------------- permute
class PermuteBackward0(Node):
    _is_view = True

    def backward(self, g):
        return (g.permute(*self.inverse),)

    def backward_arrays(self, k, g):
        return (k.permute(g, tuple(self.inverse)),)


def permute(x, *dims):
    dims = _sizes(dims)
    n = x.ndim
    if len(dims) != n:
        raise ShapeError(f"permute: number of dimensions in the tensor input does not match "
                         f"the length of the desired ordering of dimensions i.e. input.dim() = "
                         f"{n} is not equal to len(dims) = {len(dims)} (input shape "
                         f"{shape_str(x.shape)}, dims {list(dims)})")
    axes = tuple(_wrap_dim(d, n, "permute") for d in dims)
    if sorted(axes) != list(range(n)):
        raise ShapeError(f"permute: repeated dim in {list(dims)}")
    if axes == tuple(range(n)):
        return _view_of(x, x._data, PermuteBackward0, inverse=axes)
    inverse = tuple(axes.index(i) for i in range(n))
    return _view_of(x, x._k.permute(x._data, axes), PermuteBackward0, inverse=inverse)


def transpose(x, dim0, dim1):
    n = x.ndim
    if n == 0:
        return reshape(x, ())
    a, b = _wrap_dim(dim0, n, "transpose"), _wrap_dim(dim1, n, "transpose")
    order = list(range(n))
    order[a], order[b] = order[b], order[a]
    return permute(x, order)


def t(x):
    if x.ndim > 2:
        raise ShapeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return transpose(x, 0, 1) if x.ndim == 2 else x


def movedim(x, source, destination):
    src = source if isinstance(source, (list, tuple)) else [source]
    dst = destination if isinstance(destination, (list, tuple)) else [destination]
    n = x.ndim
    if len(src) != len(dst):
        raise ShapeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                         f"dims) should contain the same number of dims as destination "
                         f"({list(dst)} dims)")
    src = [_wrap_dim(s, n, "movedim") for s in src]
    dst = [_wrap_dim(d, n, "movedim") for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError(f"movedim: repeated dim in source {list(source)} or destination "
                         f"{list(destination)}")
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(x, order)


# ---------------------------------------------------------------------- expand
class ExpandBackward0(Node):
    _is_view = True

    def backward(self, g):
        return (sum_to(g, self.shape),)

    def backward_arrays(self, k, g):
        return (sum_to_array(k, g, tuple(self.shape)),)


def expand(x, *sizes):
    sizes = _sizes(sizes)
    shape = x._data.shape
    if len(sizes) < len(shape):
        raise ShapeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater "
                         f"or equal to the number of dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = []
    for i, s in enumerate(sizes):
        cur = shape[i - lead] if i >= lead else None
        if s == -1:
            if cur is None:
                raise ShapeError(f"expand: -1 is not allowed in a leading, non-existing "
                                 f"dimension {i}")
            s = cur
        elif cur is not None and cur != 1 and cur != s:
            raise ShapeError(f"expand: the expanded size of the tensor ({s}) must match the "
                             f"existing size ({cur}) at non-singleton dimension {i}. Target "
                             f"sizes: {list(sizes)}. Tensor sizes: {list(shape)}")
        target.append(s)
    target = tuple(target)
    if target == shape:
        return _view_of(x, x._data, ExpandBackward0, shape=shape)
    return _view_of(x, x._k.broadcast_to(x._data, target), ExpandBackward0, shape=shape)


def expand_as(x, other):
    return expand(x, other.shape)


def broadcast_to(x, shape):
    return expand(x, tuple(shape))


def broadcast_tensors(*tensors):
    shape = broadcast_shapes("broadcast_tensors", *(t._data.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def repeat(x, *sizes):
    sizes = _sizes(sizes)
    if len(sizes) < x.ndim:
        raise ShapeError("repeat: Number of dimensions of repeat dims can not be smaller than "
                         "number of dimensions of tensor")
    shape = (1,) * (len(sizes) - x.ndim) + tuple(x.shape)
    y = reshape(x, tuple(v for n in shape for v in (1, n)))
    y = expand(y, tuple(v for r, n in zip(sizes, shape) for v in (r, n)))
    return reshape(y, tuple(r * n for r, n in zip(sizes, shape)))


def repeat_interleave(x, repeats, dim=None, *, output_size=None):
    """Each slice along ``dim`` repeated ``repeats`` times (an int, or one count per slice)."""
    if dim is None:
        x, dim = flatten(x), 0
    d = _wrap_dim(dim, x.ndim, "repeat_interleave")
    counts = np.asarray(repeats.tolist() if isinstance(repeats, Tensor) else repeats,
                        dtype=np.int64).reshape(-1)
    if counts.size == 1:
        y = unsqueeze(x, d + 1)
        shape = list(y.shape)
        shape[d + 1] = int(counts[0])
        return flatten(expand(y, shape), d, d + 1)
    n = x.shape[d]
    if counts.size != n or (counts < 0).any():
        raise ShapeError(f"repeat_interleave: repeats must have the same size as input along "
                         f"dim {d} ({n}) and be non-negative, got {counts.tolist()}")
    idx = tensor(np.repeat(np.arange(n), counts), device=x.device)
    return index_select(x, d, idx)


# ---------------------------------------------------------------------- concatenation
class CatBackward0(Node):

    def backward(self, g):
        out = []
        start = 0
        for size in self.sizes:
            out.append(narrow(g, self.axis, start, size))
            start += size
        return tuple(out)


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ShapeError("cat(): expected a non-empty list of Tensors")
    first = tensors[0]
    # PyTorch lets legacy 1-D empty tensors join anything.
    tensors = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or [first]
    first = tensors[0]
    axis = _wrap_dim(dim, first.ndim, "cat")
    for i, t in enumerate(tensors[1:], 1):
        if t.device is not first.device:
            check_device("cat", first, t)
        if t.ndim != first.ndim or any(a != b for j, (a, b) in enumerate(
                zip(t.shape, first.shape)) if j != axis):
            raise ShapeError(f"cat: Sizes of tensors must match except in dimension {axis}. "
                             f"Expected {shape_str(first.shape)} but got {shape_str(t.shape)} "
                             f"for tensor number {i} in the list")
    dtype = result_type_of(tuple((t.dtype, False) for t in tensors))
    k = first._k
    arrays = [t._data if t.dtype is dtype else k.astype(t._data, dtype.name) for t in tensors]
    r = _wrap(k.concat(arrays, axis), dtype, first.device, k)
    if _state.enabled and builtins.any(t._rg for t in tensors):
        node = CatBackward0()
        node.axis = axis
        node.sizes = [t.shape[axis] for t in tensors]
        attach(r, node, tensors)
    return r


concat = cat
concatenate = cat


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ShapeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise ShapeError(f"stack expects each tensor to be equal size, but got "
                             f"{shape_str(tensors[0].shape)} at entry 0 and "
                             f"{shape_str(t.shape)} at entry {i}")
    d = _wrap_dim(dim, tensors[0].ndim + 1, "stack")
    return cat([unsqueeze(t, d) for t in tensors], d)


def hstack(tensors):
    tensors = [atleast_1d(t) for t in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0)


def atleast_1d(t):
    return t.reshape(1) if t.ndim == 0 else t


# ---------------------------------------------------------------------- slicing pieces
class NarrowBackward0(Node):
    _is_view = True

    def backward(self, g):
        n = self.shape[self.axis]
        length = g.shape[self.axis]
        widths = [(0, 0)] * len(self.shape)
        widths[self.axis] = (self.start, n - self.start - length)
        return (pad_dims(g, widths, 0.0),)

    def backward_arrays(self, k, g):
        n = self.shape[self.axis]
        length = g.shape[self.axis]
        if length == n:
            return (g,)
        widths = [(0, 0)] * len(self.shape)
        widths[self.axis] = (self.start, n - self.start - length)
        return (k.pad(g, tuple(widths), 0.0),)


def narrow(x, dim, start, length):
    axis = _wrap_dim(dim, x.ndim, "narrow")
    n = x.shape[axis]
    if start < 0:
        start += n
    if not (0 <= start <= n and 0 <= length and start + length <= n):
        raise IndexError(f"narrow: start ({start}) + length ({length}) exceeds dimension size "
                         f"({n}) of dimension {axis}")
    key = tuple(slice(start, start + length, 1) if i == axis else slice(0, s, 1)
                for i, s in enumerate(x._data.shape))
    return _view_of(x, x._k.slice(x._data, key), NarrowBackward0, shape=x._data.shape,
                    axis=axis, start=start)


def split(x, split_size_or_sections, dim=0):
    axis = _wrap_dim(dim, x.ndim, "split")
    n = x.shape[axis]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and n:
            raise ValueError(f"split: split_size must be positive, got {step}")
        sizes = [builtins.min(step, n - i) for i in range(0, n, step)] if n else [0]
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise ShapeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                             f"(input tensor's size at dimension {axis}), but got split_sizes="
                             f"{sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(x, axis, start, s))
        start += s
    return tuple(out)


def chunk(x, chunks, dim=0):
    axis = _wrap_dim(dim, x.ndim, "chunk")
    n = x.shape[axis]
    size = -(-n // chunks) if n else 1
    return split(x, builtins.max(size, 1), axis)


def tensor_split(x, indices_or_sections, dim=0):
    """``n`` near-equal parts (the first ``size % n`` one longer), or parts cut at indices."""
    axis = _wrap_dim(dim, x.ndim, "tensor_split")
    n = x.shape[axis]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        spec = spec.item() if spec.ndim == 0 else spec.tolist()
    if isinstance(spec, int):
        if spec <= 0:
            raise ValueError(f"tensor_split: number of sections must be larger than 0, got "
                             f"{spec}")
        base, extra = divmod(n, spec)
        return split(x, [base + 1 if i < extra else base for i in range(spec)], axis)
    bounds = [builtins.min(builtins.max(int(i) + n if int(i) < 0 else int(i), 0), n)
              for i in spec]
    starts = [0] + bounds
    ends = bounds + [n]
    return tuple(narrow(x, axis, a, builtins.max(b - a, 0)) for a, b in zip(starts, ends))


def unbind(x, dim=0):
    axis = _wrap_dim(dim, x.ndim, "unbind")
    return tuple(squeeze(p, axis) for p in split(x, 1, axis))


# ---------------------------------------------------------------------- flip, roll, pad
class FlipBackward0(Node):

    def backward(self, g):
        return (flip(g, self.axes),)


def flip(x, *dims):
    dims = _sizes(dims) if dims else ()
    axes = tuple(sorted({_wrap_dim(d, x.ndim, "flip") for d in dims}))
    if not axes or x.ndim == 0:
        return _view_of(x, x._data, CloneBackward0)
    r = _wrap(x._k.flip(x._data, axes), x.dtype, x.device, x._k)
    if x._rg and _state.enabled:
        node = FlipBackward0()
        node.axes = axes
        attach(r, node, (x,))
    return r


def fliplr(x):
    return flip(x, 1)


def flipud(x):
    return flip(x, 0)


def roll(x, shifts, dims=None):
    if dims is None:
        return reshape(roll(flatten(x), shifts, 0), x.shape)
    shifts = shifts if isinstance(shifts, (tuple, list)) else (shifts,)
    dims = dims if isinstance(dims, (tuple, list)) else (dims,)
    for s, d in zip(shifts, dims):
        axis = _wrap_dim(d, x.ndim, "roll")
        n = x.shape[axis]
        if n == 0:
            continue
        s %= n
        if s:
            x = cat([narrow(x, axis, n - s, s), narrow(x, axis, 0, n - s)], axis)
    return x


class PadBackward0(Node):

    def backward(self, g):
        key = tuple(slice(b, b + n, 1) for (b, _), n in zip(self.widths, self.shape))
        return (basic_slice(g, key),)


def pad_dims(x, widths, value=0.0):
    """Constant padding with one non-negative ``(before, after)`` pair per dimension."""
    widths = tuple((int(b), int(a)) for b, a in widths)
    if builtins.all(b == 0 and a == 0 for b, a in widths):
        return x
    r = _wrap(x._k.pad(x._data, widths, value), x.dtype, x.device, x._k)
    if x._rg and _state.enabled:
        node = PadBackward0()
        node.widths, node.shape = widths, x._data.shape
        attach(r, node, (x,))
    return r


def pad(x, pad, mode="constant", value=None):
    """``nn.functional.pad`` order: pairs for the last dimension first; negative crops."""
    if mode != "constant":
        raise NotImplementedError(f"pad: mode {mode!r} is not supported (only 'constant')")
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ShapeError(f"pad: padding length {len(pad)} must be even and at most "
                         f"2 * ndim ({2 * x.ndim})")
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    crop = [(builtins.max(-b, 0), builtins.max(-a, 0)) for b, a in widths]
    if builtins.any(c != (0, 0) for c in crop):
        for axis, (cb, ca) in enumerate(crop):
            if cb or ca:
                x = narrow(x, axis, cb, x.shape[axis] - cb - ca)
    return pad_dims(x, [(builtins.max(b, 0), builtins.max(a, 0)) for b, a in widths],
                    0.0 if value is None else value)


# ---------------------------------------------------------------------- triangles
def _tri_mask(op, x, diagonal, upper):
    if x.ndim < 2:
        raise ShapeError(f"{op}: input tensor must have at least 2 dimensions, got shape "
                         f"{shape_str(x.shape)}")
    n, m = x.shape[-2], x.shape[-1]
    rows = arange(n, device=x.device).reshape(n, 1)
    cols = arange(m, device=x.device).reshape(1, m)
    return (cols - rows >= diagonal) if upper else (cols - rows <= diagonal)


def _zero_of(x):
    """A zero that keeps ``x``'s dtype under promotion (``False`` for bool tensors)."""
    return False if x.dtype.kind == "b" else 0


def tril(x, diagonal=0):
    return where(_tri_mask("tril", x, diagonal, False), x, _zero_of(x))


def triu(x, diagonal=0):
    return where(_tri_mask("triu", x, diagonal, True), x, _zero_of(x))


# ---------------------------------------------------------------------- copies
class CloneBackward0(Node):

    def backward(self, g):
        return (g,)

    def backward_arrays(self, k, g):
        return (g,)


def clone(x, *, memory_format=None):
    r = _wrap(x._k.copy(x._data), x.dtype, x.device, x._k)
    if x._rg and _state.enabled:
        attach(r, CloneBackward0(), (x,))
    return r


def contiguous(x, memory_format=None):
    return x
