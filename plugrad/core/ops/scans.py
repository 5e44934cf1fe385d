"""Scans and set-like reductions: cummax, cummin, logcumsumexp, unique, unique_consecutive,
aminmax, nanmean.

The scans run in ``log2(n)`` doubling steps of ordinary ops (no backend primitive is
needed). ``cummax``/``cummin`` scan the index outside the graph and ``gather`` the values,
so the gradient is ``gather``'s (PyTorch's ``cummaxmin_backward`` is that scatter-add);
``logcumsumexp`` is a scan of a log-add-exp whose shift is constant to autograd, so its
gradient is the exact one at every order.
"""
from __future__ import annotations


from plugrad.core import dtypes as _dt
from plugrad.core.autograd.constant_grads import records
from plugrad.core.errors import DTypeError
from plugrad.core.factories import arange
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops._dims import filled, return_type
from plugrad.core.ops.declare import op
from plugrad.core.ops.join import cat
from plugrad.core.tensor import Tensor, _wrap_dim


cummax_t = return_type("cummax", "values", "indices")
cummin_t = return_type("cummin", "values", "indices")
aminmax_t = return_type("aminmax", "min", "max")


def _shift_pairs(v, d):
    """``(earlier, later)``: ``v`` at ``i - d`` and at ``i`` for ``i >= d``, last dim."""
    return v[..., :-d], v[..., d:]


def _scan_index(x, is_max):
    """For each position along the last dim, the index of the running max (min): the
    latest of equal values, and the latest NaN once one is seen (as PyTorch)."""
    n = x.shape[-1]
    v = x if x.dtype is not _dt.bool_ else x.to(_dt.int64)
    floating = v.dtype.is_floating_point
    idx = _arange(x, n).expand(*v.shape)
    d = 1
    while d < n:
        (lv, rv), (li, ri) = _shift_pairs(v, d), _shift_pairs(idx, d)
        take = rv.ge(lv) if is_max else rv.le(lv)
        if floating:
            take = rv.isnan().logical_or(lv.isnan().logical_not().logical_and(take))
        v = cat([v[..., :d], rv.where(take, lv)], -1)
        idx = cat([idx[..., :d], ri.where(take, li)], -1)
        d *= 2
    return idx


def _arange(x, n):
    return arange(n, device=x.device)


def _cum_extreme(name, x, dim, is_max, cls):
    axis = _wrap_dim(dim, x.ndim, name)
    if x.ndim == 0:
        return cls(x.clone(), filled(x, (), 0, _dt.int64))
    if x.numel() == 0:  # PyTorch's backward returns x itself: its gradient records x
        return cls(records(x.clone(), x), filled(x, x.shape, 0, _dt.int64))
    with no_grad():
        idx = _scan_index(x.detach().movedim(axis, -1), is_max).movedim(-1, axis)
    return cls(x.gather(axis, idx), idx)


@op("cummax", method="cummax")
def cummax(x, dim):
    """Running maximum along ``dim`` and where it was attained."""
    return _cum_extreme("cummax", x, dim, True, cummax_t)


@op("cummin", method="cummin")
def cummin(x, dim):
    """Running minimum along ``dim`` and where it was attained."""
    return _cum_extreme("cummin", x, dim, False, cummin_t)


def _logaddexp(a, b):
    """``log(exp(a) + exp(b))`` shifted by the larger operand, the shift constant to autograd
    (exact: the shift cancels), so infinite operands stay finite in the gradient."""
    with no_grad():
        m = a.detach().maximum(b.detach())
        m = m.where(m.isinf().logical_not(), m.new_zeros(()))
    return a.sub(m).exp().add(b.sub(m).exp()).log().add(m)


@op("logcumsumexp", method="logcumsumexp")
def logcumsumexp(x, dim):
    """``log(cumsum(exp(x)))`` along ``dim``, computed without overflow."""
    axis = _wrap_dim(dim, x.ndim, "logcumsumexp")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"logcumsumexp(): expected a floating point input, got {x.dtype} "
                         f"of shape {list(x.shape)}")
    if x.ndim == 0 or x.numel() == 0:
        return x.clone()
    v = x.movedim(axis, -1)
    n, d = v.shape[-1], 1
    while d < n:
        lv, rv = _shift_pairs(v, d)
        v = cat([v[..., :d], _logaddexp(rv, lv)], -1)
        d *= 2
    return v.movedim(-1, axis)


# ---------------------------------------------------------------------- unique
def _runs(keys, flat):
    """Where a new run of equal values starts along dim 0 (``keys``: 1-D, or rows)."""
    if keys.dtype is _dt.bool_:
        keys = keys.to(_dt.int64)
    change = keys[1:].ne(keys[:-1])
    if not flat:
        change = change.reshape(change.shape[0], -1).any(1)
    return cat([filled(keys, (1,), True, _dt.bool_), change], 0)


def _lex_order(rows):
    """The stable lexicographic order of the rows of a 2-D tensor (last column first)."""
    n, m = rows.shape
    order = _arange(rows, n)
    keys = rows if rows.dtype is not _dt.bool_ else rows.to(_dt.int64)
    for c in range(m - 1, -1, -1):
        order = order.index_select(0, keys[:, c].index_select(0, order).argsort(0))
    return order


def _unique(name, x, sort, return_inverse, return_counts, dim):
    with no_grad():
        x = x.detach()
        if dim is None:
            flat, rows = x.reshape(-1), None
        else:
            axis = _wrap_dim(dim, x.ndim, name)
            moved = x.movedim(axis, 0)
            flat, rows = moved, moved.reshape(moved.shape[0], -1)
        n = flat.shape[0]
        if n == 0:
            values = x.clone() if dim is not None else flat.clone()
            inverse = filled(x, x.shape if dim is None else (0,), 0, _dt.int64)
            counts = filled(x, (0,), 0, _dt.int64)
        else:
            if sort:
                order = flat.argsort(0) if rows is None else _lex_order(rows)
            else:
                order = _arange(x, n)
            s = (flat if rows is None else rows).index_select(0, order)
            starts = _runs(s, rows is None)
            first = starts.nonzero().reshape(-1)
            picked = order.index_select(0, first)
            if rows is None:
                values = flat.index_select(0, picked)
            else:
                values = flat.index_select(0, picked).movedim(0, axis)
            run = starts.to(_dt.int64).cumsum(0).sub(1)
            inverse = filled(x, (n,), 0, _dt.int64).scatter(0, order, run)
            if dim is None:
                inverse = inverse.reshape(x.shape)
            ends = cat([first, filled(x, (1,), n, _dt.int64)], 0)
            counts = ends[1:].sub(ends[:-1])
    out = [values]
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


@op("unique", method="unique")
def unique(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (or slices along ``dim``) in ascending order; NaNs are distinct.
    PyTorch sorts whether or not ``sorted`` is asked for, and so does this."""
    return _unique("unique", x, True, return_inverse, return_counts, dim)


@op("unique_consecutive", method="unique_consecutive")
def unique_consecutive(x, return_inverse=False, return_counts=False, dim=None):
    """``x`` with each run of equal consecutive values (or slices) collapsed to one."""
    return _unique("unique_consecutive", x, False, return_inverse, return_counts, dim)


# ---------------------------------------------------------------------- aminmax, nanmean
@op("aminmax", method="aminmax")
def aminmax(x, *, dim=None, keepdim=False):
    """``(amin, amax)`` in one call; ties share the gradient evenly, as in both."""
    d = () if dim is None else dim
    if dim is None and keepdim:
        return aminmax_t(x.amin((), True).reshape((1,) * x.ndim),
                         x.amax((), True).reshape((1,) * x.ndim))
    return aminmax_t(x.amin(d, keepdim), x.amax(d, keepdim))


@op("nanmean", method="nanmean")
def nanmean(x, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN values (NaN where there are none)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"nanmean(): argument 'input' must be Tensor, not {type(x).__name__}")
    dt = x.dtype if dtype is None else _dt.get_dtype(dtype)
    if not x.dtype.is_floating_point or not dt.is_floating_point:
        raise DTypeError(f"nanmean(): expected input to have floating point dtype but got "
                         f"{x.dtype if not x.dtype.is_floating_point else dt}")
    d = () if dim is None else dim
    valid = x.isnan().logical_not().sum(d, keepdim)
    return x.nansum(d, keepdim, dtype=dtype).div(valid.to(dt))
