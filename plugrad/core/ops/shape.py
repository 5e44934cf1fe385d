"""Reshaping views: reshape/view, flatten, squeeze, permute/transpose, expand, repeat, clone.

Outputs are views: they share their input's storage and version counter (the core keeps
how each was taken, :mod:`plugrad.core.aliasing`), so a write through either is seen by
both, on every backend. ``view`` refuses, and ``reshape`` copies, where PyTorch's strides
could not address the new shape.
"""
from __future__ import annotations

from plugrad.core import aliasing
from plugrad.core.aliasing import Expand, Permute, Reshape
from plugrad.core.autograd.grad_ops import sum_to
from plugrad.core.autograd.node import Node, present_as
from plugrad.core import memory_format as _formats
from plugrad.core.autograd.record import record
from plugrad.core.errors import ShapeError, broadcast_shapes, shape_str
from plugrad.core.grad_mode import _state
from plugrad.core.ops.declare import op
from plugrad.core.tensor import Tensor, _wrap, _wrap_dim


def _sizes(args) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` both mean the shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return tuple(int(a) for a in args)


def view_of(x: Tensor, data, node=None, step=None) -> Tensor:
    """A view of ``x``: ``data`` is ``x``'s array taken by ``step`` (None: ``x``'s array
    itself); it shares ``x``'s storage and version counter, and records ``node`` if given
    and ``x`` is in the graph."""
    r = _wrap(data, x.dtype, x.device, x._k)
    r._vc = x._vc
    if node is not None and x._rg and _state.enabled:
        record(r, node, (x,))
    aliasing.link(r, x, step)
    return r


def _node(cls, **fields):
    node = cls()
    for name, value in fields.items():
        setattr(node, name, value)
    return node


# ---------------------------------------------------------------------- reshape
class ViewBackward0(Node):
    _is_view = True

    def grad(self, F, g):
        return (F.reshape(g, self.shape),)


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



def _reshaped(x, shape, src):
    if shape == src:
        return view_of(x, x._data, _node(ViewBackward0, shape=src))
    return view_of(x, x._k.reshape(x._data, shape), _node(ViewBackward0, shape=src),
                   Reshape(shape, src))


@op("reshape", method="reshape")
def reshape(x, *shape):
    """A view where PyTorch's would be one, else a copy."""
    shape = _sizes(shape)
    src = x._data.shape
    if shape != src:
        shape = infer_shape("reshape", shape, x.numel(), src)
    if x._root is not None and not aliasing.can_view(x, shape):
        return present_as(_reshaped(clone(x), shape, src), "UnsafeViewBackward0")
    return _reshaped(x, shape, src)


@op("view", method="view")
def view(x, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        return x.to(shape[0])  # view(dtype)
    shape = _sizes(shape)
    src = x._data.shape
    shape = infer_shape("view", shape, x.numel(), src)
    if x._root is not None and not aliasing.can_view(x, shape):
        raise RuntimeError(f"view size is not compatible with input tensor's size and stride "
                           f"(at least one dimension spans across two contiguous subspaces). "
                           f"Use .reshape(...) instead. (view of shape {shape_str(src)} as "
                           f"{shape_str(shape)})")
    return _reshaped(x, shape, src)


@op("flatten", method="flatten")
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


@op("unflatten", method="unflatten")
def unflatten(x, dim, sizes):
    d = _wrap_dim(dim, x.ndim, "unflatten")
    shape = x.shape
    sizes = infer_shape("unflatten", tuple(sizes), shape[d], (shape[d],))
    return reshape(x, tuple(shape[:d]) + sizes + tuple(shape[d + 1:]))


@op("squeeze", method="squeeze", inplace="squeeze_")
def squeeze(x, dim=None):
    shape = x._data.shape
    if dim is None:
        new = tuple(n for n in shape if n != 1)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = {_wrap_dim(d, len(shape), "squeeze") for d in dims}
        new = tuple(n for i, n in enumerate(shape) if not (i in dims and n == 1))
    return present_as(reshape(x, new), "SqueezeBackward0" if dim is None else
                      "SqueezeBackward1" if not isinstance(dim, (tuple, list)) else
                      "SqueezeBackward2")


@op("unsqueeze", method="unsqueeze", inplace="unsqueeze_")
def unsqueeze(x, dim):
    d = _wrap_dim(dim, x.ndim + 1, "unsqueeze")
    shape = x._data.shape
    return present_as(reshape(x, shape[:d] + (1,) + shape[d:]), "UnsqueezeBackward0")


# ---------------------------------------------------------------------- permute
class PermuteBackward0(Node):
    _is_view = True

    def grad(self, F, g):
        return (F.permute(g, self.inverse),)


@op("permute", method="permute")
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
        return view_of(x, x._data, _node(PermuteBackward0, inverse=axes))
    inverse = tuple(axes.index(i) for i in range(n))
    return view_of(x, x._k.permute(x._data, axes), _node(PermuteBackward0, inverse=inverse),
                   Permute(axes, inverse))


@op("transpose swapaxes swapdims", method="transpose swapaxes swapdims",
    inplace="transpose_ swapaxes_ swapdims_")
def transpose(x, dim0, dim1):
    n = x.ndim
    if n == 0:
        return reshape(x, ())
    a, b = _wrap_dim(dim0, n, "transpose"), _wrap_dim(dim1, n, "transpose")
    order = list(range(n))
    order[a], order[b] = order[b], order[a]
    return present_as(permute(x, order), "TransposeBackward0")


@op("t", method="t", inplace="t_")
def t(x):
    if x.ndim > 2:
        raise ShapeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return present_as(transpose(x, 0, 1), "TBackward0") if x.ndim == 2 else x


@op("movedim moveaxis", method="movedim moveaxis")
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

    def grad(self, F, g):
        return (sum_to(F, g, self.shape),)


@op("expand", method="expand")
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
        return view_of(x, x._data, _node(ExpandBackward0, shape=shape))
    return view_of(x, x._k.broadcast_to(x._data, target), _node(ExpandBackward0, shape=shape),
                   Expand(target, shape))


@op(method="expand_as")
def expand_as(x, other):
    return expand(x, other.shape)


@op("broadcast_to", method="broadcast_to")
def broadcast_to(x, shape):
    return expand(x, tuple(shape))


@op("broadcast_tensors")
def broadcast_tensors(*tensors):
    shape = broadcast_shapes("broadcast_tensors", *(t._data.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


@op("repeat", method="repeat")
def repeat(x, *sizes):
    sizes = _sizes(sizes)
    if len(sizes) < x.ndim:
        raise ShapeError("repeat: Number of dimensions of repeat dims can not be smaller than "
                         "number of dimensions of tensor")
    shape = (1,) * (len(sizes) - x.ndim) + tuple(x.shape)
    y = reshape(x, tuple(v for n in shape for v in (1, n)))
    y = expand(y, tuple(v for r, n in zip(sizes, shape) for v in (r, n)))
    return present_as(reshape(y, tuple(r * n for r, n in zip(sizes, shape))), "RepeatBackward0")


@op(method="view_as")
def view_as(x, other):
    return view(x, other.shape)


@op(method="reshape_as")
def reshape_as(x, other):
    return reshape(x, other.shape)


# ---------------------------------------------------------------------- copies
class CloneBackward0(Node):

    def grad(self, F, g):
        return (g,)


@op("clone", method="clone")
def clone(x, *, memory_format=None):
    _formats.check("clone", x.ndim, memory_format)
    r = _wrap(x._k.copy(x._data), x.dtype, x.device, x._k)
    if x._rg and _state.enabled:
        record(r, CloneBackward0(), (x,))
    return r


@op(method="contiguous")
def contiguous(x, memory_format=None):
    """``x`` itself where its elements are laid out in order, else a copy (PyTorch's)."""
    _formats.check("contiguous", x.ndim, memory_format)
    return x if aliasing.is_contiguous(x) else clone(x)
