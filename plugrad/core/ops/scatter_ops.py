"""Writing by index: scatter (with ``reduce=``), index_copy, index_fill, index_put,
masked_scatter, scatter_reduce.

All but ``scatter_reduce``'s ``amax``/``amin`` are compositions of ``scatter``,
``index_add``, ``index_select`` and elementwise ops, so their gradients are those rules.
Reductions of several sources into one place run as a segmented scan over the sources
sorted by target (``log2`` doubling steps); ``prod`` has PyTorch's rule (the result over
each factor, zeros apart), ``amax``/``amin`` one rule: ties (the input's own value included, with
``include_self``) share the gradient evenly, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import OUTPUT, KeepsOutput
from plugrad.core.autograd.record import record, recording
from plugrad.core.errors import DTypeError, ShapeError, check_device, shape_str
from plugrad.core.factories import tensor
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops._dims import filled
from plugrad.core.ops.declare import op
from plugrad.core.ops import indexing as _ix
from plugrad.core.ops.indexing import (_check_scatter_shapes, as_index_tensor, index_add,
                                       scatter_add, wrap_negative)
from plugrad.core.ops.join import cat
from plugrad.core.ops.slicing import basic_slice
from plugrad.core.tensor import Tensor, _wrap, _wrap_dim


@op("scatter", method="scatter", inplace="scatter_")
def scatter(x, dim, index, src=None, value=None, *, reduce=None):
    """A copy of ``x`` with ``src`` (or ``value``) written at ``index`` along ``dim``;
    ``reduce='add'``/``'multiply'``: added or multiplied in instead."""
    src = src if src is not None else value
    if reduce is None:
        return _ix.scatter(x, dim, index, src)
    if reduce not in ("add", "multiply"):
        raise RuntimeError(f"scatter(): reduce argument must be either add or multiply, got "
                           f"{reduce!r}")
    if not isinstance(src, Tensor):
        src = x.new_full(as_index_tensor("scatter", index, x).shape, src)
    if reduce == "add":
        return scatter_add(x, dim, index, src)
    return scatter_reduce(x, dim, index, src, "prod")


def _along(index, axis, ndim):
    """A 1-D index reshaped to broadcast along ``axis`` of an ``ndim``-d tensor."""
    shape = [1] * ndim
    shape[axis] = index.shape[0]
    return index.reshape(*shape)


def _vector_index(name, x, dim, index):
    axis = _wrap_dim(dim, x.ndim, name)
    index = as_index_tensor(name, index, x)
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, got shape "
                         f"{shape_str(index.shape)}")
    n = x.shape[axis] if x.ndim else 1
    return axis, wrap_negative(name, index.reshape(-1), n, axis)


@op("index_copy", method="index_copy", inplace="index_copy_")
def index_copy(x, dim, index, source):
    """``x`` with the slices of ``source`` written at ``index`` along ``dim``."""
    axis, index = _vector_index("index_copy", x, dim, index)
    if x.ndim == 0:
        return index_copy(x.reshape(1), 0, index, source.reshape(-1)).reshape(())
    want = list(x.shape)
    want[axis] = index.shape[0]
    if source.ndim != x.ndim or list(source.shape) != want:
        raise ShapeError(f"index_copy_(): Source/destination tensor must have same slice "
                         f"shapes. Destination slice shape {shape_str(x.shape)} at dimension "
                         f"{axis} and source slice shape {shape_str(source.shape)}, index "
                         f"{index.shape[0]} entries")
    if source.dtype is not x.dtype:
        raise DTypeError(f"index_copy_(): self and source expected to have the same dtype, "
                         f"but got (self) {x.dtype} and (source) {source.dtype}")
    if index.shape[0] == 0:
        return x.clone()
    return scatter(x, axis, _along(index, axis, x.ndim).expand(*source.shape), source)


@op("index_fill", method="index_fill", inplace="index_fill_")
def index_fill(x, dim, index, value):
    """``x`` with ``value`` (a number or 0-d tensor) at ``index`` along ``dim``."""
    axis, index = _vector_index("index_fill", x, dim, index)
    if isinstance(value, Tensor) and value.ndim != 0:
        raise ShapeError(f"index_fill_(): only supports a 0-dimensional value tensor, but got "
                         f"tensor with {value.ndim} dimension(s)")
    n = x.shape[axis] if x.ndim else 1
    hit = filled(x, (n,), False, _dt.bool_)
    if index.shape[0]:
        hit = hit.scatter(0, index, filled(x, (index.shape[0],), True, _dt.bool_))
    mask = _along(hit, axis, x.ndim) if x.ndim else hit.reshape(())
    return x.masked_fill(mask, value)


# ---------------------------------------------------------------------- index_put
def _linear_targets(name, x, indices):
    """Broadcast integer index tensors (bool masks expanded) over ``x``'s leading dims, as
    one flat int64 index into those dims, and how many dims they cover."""
    longs = []
    for t in indices:
        if t is None:
            raise IndexError(f"{name}(): None indices are not supported; use slicing")
        if isinstance(t, Tensor) and t.dtype is _dt.bool_:
            longs.extend(t.nonzero(as_tuple=True) if t.ndim else [t.long()])
        else:
            longs.append(as_index_tensor(name, t, x))
    k = len(longs)
    if k > x.ndim:
        raise IndexError(f"{name}(): too many indices for tensor of dimension {x.ndim} (got "
                         f"{k})")
    shape = np.broadcast_shapes(*[tuple(t.shape) for t in longs]) if longs else ()
    flat = None
    for d, t in enumerate(longs):
        t = wrap_negative(name, t, x.shape[d], d).expand(*shape) if shape else \
            wrap_negative(name, t, x.shape[d], d)
        flat = t if flat is None else flat.mul(x.shape[d]).add(t)
    return flat.reshape(-1), tuple(shape), k


@op("index_put", method="index_put", inplace="index_put_")
def index_put(x, indices, values, accumulate=False):
    """``x`` with ``values`` at the positions the index tensors pick (``x[indices] =
    values``); ``accumulate``: added there instead, repeated positions summing."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): indices must be a tuple of tensors, got "
                        f"{type(indices).__name__}")
    if not isinstance(values, Tensor):
        values = tensor(values, dtype=x.dtype, device=x.device)
    if values.device is not x.device:
        check_device("index_put", x, values)
    if values.dtype is not x.dtype:
        raise DTypeError(f"Index put requires the source and destination dtypes match, got "
                         f"{x.dtype} for the destination and {values.dtype} for the source.")
    if x.ndim == 0:
        return index_put(x.reshape(1), [t.reshape(-1) if isinstance(t, Tensor) else t
                                        for t in indices], values.reshape(-1),
                         accumulate).reshape(())
    flat, shape, k = _linear_targets("index_put", x, indices)
    rest = tuple(x.shape[k:])
    rows = x.reshape(-1, *rest)
    vals = values.expand(*(shape + rest)).reshape(-1, *rest)
    if flat.shape[0] == 0:
        return x.clone()
    if accumulate:
        return index_add(rows, 0, flat, vals).reshape(*x.shape)
    return scatter(rows, 0, _along(flat, 0, rows.ndim).expand(*vals.shape), vals) \
        .reshape(*x.shape)


@op("masked_scatter", method="masked_scatter", inplace="masked_scatter_")
def masked_scatter(x, mask, source):
    """``x`` with the leading elements of ``source`` written, in order, where ``mask``
    (broadcast to ``x``) is True."""
    if not isinstance(mask, Tensor) or mask.dtype is not _dt.bool_:
        raise DTypeError(f"masked_scatter_: expected BoolTensor for mask, got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    if source.dtype is not x.dtype:
        raise DTypeError(f"masked_scatter_: expected self and source to have same dtypes but "
                         f"got {x.dtype} and {source.dtype}")
    m = mask.expand(*x.shape).reshape(-1)
    where = m.nonzero().reshape(-1)
    n = where.shape[0]
    if source.numel() < n:
        raise RuntimeError(f"masked_scatter: expected source to have at least {n} elements "
                           f"(the mask's True count), got {source.numel()}")
    # no True in the mask still goes through scatter: source gets a zero gradient, not None
    return scatter(x.reshape(-1), 0, where, source.reshape(-1)[:n]).reshape(*x.shape)


# ---------------------------------------------------------------------- scatter_reduce
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _segments(x, axis, index):
    """The flat positions in ``x`` the entries of ``index`` target, with the order that
    sorts them, the unique targets and where each run of equal targets ends (host side, as
    the core's other index bookkeeping)."""
    arr = np.asarray(index._k.to_numpy(index._data))
    coords = list(np.indices(arr.shape))
    coords[axis] = arr
    flat = np.ravel_multi_index(tuple(coords), tuple(x.shape)).reshape(-1).astype(np.int64)
    order = np.argsort(flat, kind="stable")
    st = flat[order]
    ends = np.flatnonzero(np.append(st[1:] != st[:-1], True)) if st.size else st
    seg = np.cumsum(np.append(True, st[1:] != st[:-1])) if st.size else st
    dev = x.device
    return (tensor(flat, device=dev), tensor(order.astype(np.int64), device=dev),
            tensor(st[ends].astype(np.int64), device=dev), tensor(ends.astype(np.int64),
                                                                  device=dev),
            tensor(seg.astype(np.int64), device=dev))


def _segmented_scan(v, seg, combine):
    """Inclusive scan of the 1-D ``v`` within runs of equal ``seg`` (doubling steps)."""
    n, d = v.shape[0], 1
    while d < n:
        same = seg[d:].eq(seg[:-d])
        v = cat([v[:d], combine(v[d:], v[:-d]).where(same, v[d:])], 0)
        d *= 2
    return v


class ScatterReduceBackward0(KeepsOutput):
    """``amax``/``amin``: the gradient is shared evenly by everything equal to the result
    (the input's own value counts in the share even with ``include_self=False``, where it
    gets none of it, as in PyTorch)."""

    def grad(self, F, g, x, src, targets, touched, out):  # noqa: PLR0913
        dt = F.dtype_of(g)
        at = F.gather(out, 0, targets)
        src_hit = F.astype(F.eq(src, at), dt)
        self_hit = F.astype(F.eq(x, out), dt)
        share = F.div(g, F.scatter_add(self_hit, 0, targets, src_hit))
        gx = None
        if self.next[0]:
            if not self.include_self:  # (PyTorch still counts it in the share)
                self_hit = F.scatter(self_hit, 0, touched, F.full(touched.shape, 0.0, dt,
                                                                  self.device.index))
            gx = F.mul(self_hit, share)
        gs = F.mul(src_hit, F.gather(share, 0, targets)) if self.next[1] else None
        return gx, gs


class ScatterReduceProdBackward0(KeepsOutput):
    """PyTorch's ``scatter_reduce_backward`` for ``prod`` (index_reduce's is the same):
    ``self`` gets ``g * r' / self'`` with ``self'`` its zeros made 1 and ``r'`` the
    reduction into ``self'`` (0 where ``include_self=False`` left it out); a source gets
    ``(g * result) / src`` gathered (its zeros made 1), or, the one zero of its place,
    ``g`` times the reduction with that zero made 1. Written with the ops themselves (on
    flat tensors; in a plain backward without recording), so its own gradient is this rule
    again, as PyTorch's."""

    def grad(self, F, g, x, src, targets, out):  # noqa: PLR0913
        if isinstance(g, Tensor):
            return _prod_rule(self, g, x, src, targets, out)
        k, dev = self.k, self.device
        g, x, src, targets, out = (_wrap(a, _dt.get_dtype(k.dtype_of(a)), dev, k)
                                   for a in (g, x, src, targets, out))
        with no_grad():
            gx, gs = _prod_rule(self, g, x, src, targets, out)
        return (None if gx is None else gx._data), (None if gs is None else gs._data)


def _prod_rule(node, g, x, src, targets, out):
    keep = node.include_self
    gx = gs = None
    if node.next[0]:
        masked_self = x.masked_fill(x == 0, 1)
        r = scatter_reduce(masked_self, 0, targets, src, "prod", include_self=keep)
        gx = g * r / masked_self
        if not keep:
            gx = gx.scatter(0, targets, 0.0)
    if node.next[1]:
        src_zero = src == 0
        zeros = src_zero.to(x.dtype).new_zeros(tuple(x.shape))
        n_zeros = zeros.scatter_add(0, targets, src_zero.to(x.dtype)).gather(0, targets)
        single = src_zero.logical_and(n_zeros == 1)
        r = scatter_reduce(x, 0, targets, src.masked_fill(single, 1), "prod",
                           include_self=keep)
        gs = (g * r).gather(0, targets).where(
            single, (g * out).gather(0, targets) / src.masked_fill(src_zero, 1))
    return gx, gs


def _identity(x, reduce):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if x.dtype.is_floating_point:
        return float("-inf") if reduce == "amax" else float("inf")
    info = np.iinfo(x.dtype.name) if x.dtype is not _dt.bool_ else None
    if info is None:
        return reduce == "amin"
    return int(info.min) if reduce == "amax" else int(info.max)


@op("scatter_reduce", method="scatter_reduce", inplace="scatter_reduce_")
def scatter_reduce(x, dim, index, src, reduce, *, include_self=True):
    """``x`` with ``src`` reduced (``sum``, ``prod``, ``mean``, ``amax``, ``amin``) into the
    places ``index`` names along ``dim``; ``include_self=False`` leaves ``x``'s own values
    at those places out of the reduction."""
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    axis = _wrap_dim(dim, x.ndim, "scatter_reduce")
    index = as_index_tensor("scatter_reduce", index, x)
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): src must be a Tensor, got {type(src).__name__}")
    if src.device is not x.device:
        check_device("scatter_reduce", x, src)
    if src.dtype is not x.dtype:
        raise DTypeError(f"scatter_reduce(): Expected self.dtype to be equal to src.dtype "
                         f"(got {x.dtype} and {src.dtype})")
    if x.ndim == 0:
        return scatter_reduce(x.reshape(1), 0, index.reshape(-1), src.reshape(-1), reduce,
                              include_self=include_self).reshape(())
    _check_scatter_shapes("scatter_reduce", x, axis, index, src)
    index = wrap_negative("scatter_reduce", index, x.shape[axis], axis)
    if index.numel() == 0:
        return x.clone()
    if src.shape != index.shape:
        src = basic_slice(src, tuple(slice(0, n, 1) for n in index.shape))
    targets, order, touched, ends, seg = _segments(x, axis, index)
    flat_x, flat_src = x.reshape(-1), src.reshape(-1)
    base = flat_x
    if not include_self:
        base = flat_x.index_fill(0, touched, _identity(x, reduce))
    if reduce in ("sum", "mean"):
        out = index_add(base, 0, targets, flat_src)
        if reduce == "mean":
            ones = filled(x, flat_x.shape, 1, x.dtype)
            if not include_self:
                ones = ones.index_fill(0, touched, 0)
            counts = index_add(ones, 0, targets, filled(x, flat_src.shape, 1, x.dtype))
            floor = not x.dtype.is_floating_point
            out = out.div(counts, rounding_mode="floor") if floor else out.div(counts)
        return out.reshape(*x.shape)
    if reduce == "prod":
        with no_grad():
            runs = _segmented_scan(flat_src.index_select(0, order), seg, lambda a, b: a.mul(b))
            factor = filled(x, flat_x.shape, 1, x.dtype).index_copy(
                0, touched, runs.index_select(0, ends))
            out = base.mul(factor)
        if recording(flat_x, flat_src):
            node = ScatterReduceProdBackward0()
            node.include_self = include_self
            record(out, node, (flat_x, flat_src), (flat_x, flat_src, targets, OUTPUT))
        return out.reshape(*x.shape)
    pick = (lambda a, b: a.maximum(b)) if reduce == "amax" else (lambda a, b: a.minimum(b))
    with no_grad():
        runs = _segmented_scan(flat_src.detach().index_select(0, order), seg, pick)
        b = base.detach()
        out = b.index_copy(0, touched, pick(b.index_select(0, touched),
                                            runs.index_select(0, ends)))
    if recording(flat_x, flat_src):
        node = ScatterReduceBackward0()
        node.include_self = include_self
        record(out, node, (flat_x, flat_src), (flat_x, flat_src, targets, touched, OUTPUT))
    return out.reshape(*x.shape)
