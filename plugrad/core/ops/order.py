"""Order statistics: median, nanmedian, kthvalue, mode, quantile, nanquantile.

All are a stable ``argsort`` (NaN last) followed by a ``gather`` of the chosen positions, so
their gradients are ``gather``'s (the index that was returned gets the gradient, as
PyTorch's ``value_selecting_reduction_backward``). The full reductions ``median()`` and
``nanmedian()`` share the gradient evenly among ties, as PyTorch does.

Ties: ``median``/``nanmedian`` along a dim return the index PyTorch does (the stable order's
position, its ``nth_element`` breaks ties by index); ``kthvalue`` replays PyTorch's
quickselect on the rows where the value is tied; ``mode`` returns the last occurrence of the
smallest most frequent value (PyTorch's own index comes from an unstable sort: the same for
up to 16 elements along the dim, another occurrence of the same value beyond).
"""
from __future__ import annotations


from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import OUTPUT
from plugrad.core.autograd.record import record
from plugrad.core.errors import DTypeError, IndexOutOfRangeError, no_bool_kernel
from plugrad.core.factories import tensor
from plugrad.core.grad_mode import _state, no_grad
from plugrad.core.ops._dims import filled, return_type
from plugrad.core.ops.declare import op
from plugrad.core.ops.extrema import MaxBackward1
from plugrad.core.ops.join import cat
from plugrad.core.tensor import Tensor, _wrap_dim


median_t = return_type("median", "values", "indices")
nanmedian_t = return_type("nanmedian", "values", "indices")
kthvalue_t = return_type("kthvalue", "values", "indices")
mode_t = return_type("mode", "values", "indices")


class MedianBackward0(MaxBackward1):
    """``median()`` of all elements: ties share the gradient evenly (PyTorch's
    ``evenly_distribute_backward``), as for ``max()``."""


class NanmedianBackward0(MaxBackward1):
    """See :class:`MedianBackward0`."""


def _order(x, axis):
    """The stable ascending order of ``x`` along ``axis`` (NaN last), outside the graph."""
    with no_grad():
        return x.detach().argsort(dim=axis)


def _nan_count(x, axis):
    if not x.dtype.is_floating_point:
        return None
    return x.isnan().sum(axis, keepdim=True)


def _check_reduced(name, x, axis):
    if x.shape[axis] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size "
                         f"(input shape {list(x.shape)}).")


def _pick(x, axis, pos, keepdim, cls):
    """Values and indices at the sorted positions ``pos`` (shape of ``x`` with ``axis`` 1)."""
    order = _order(x, axis)
    indices = order.gather(axis, pos)
    values = x.gather(axis, indices)
    if not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return cls(values, indices)


def _median_position(name, x, axis, ignore_nan):
    n = x.shape[axis]
    nans = _nan_count(x, axis)
    shape = tuple(1 if d == axis else s for d, s in enumerate(x.shape))
    if nans is None:
        return filled(x, shape, (n - 1) // 2, _dt.int64)
    valid = nans.neg().add(n)
    if ignore_nan:  # the median of the non-NaN values; all NaN: position 0 (a NaN)
        return valid.sub(1).clamp(min=0).div(2, rounding_mode="floor")
    # any NaN: the first NaN (the stable order puts them last, in index order)
    return valid.where(nans.gt(0), filled(x, shape, (n - 1) // 2, _dt.int64))


def _median(name, x, dim, keepdim, ignore_nan, cls, node_cls):
    no_bool_kernel(name, "median_cpu", x)
    if dim is None:
        flat = x.reshape(-1)
        if flat.numel() == 0:
            if not x.dtype.is_floating_point:
                raise IndexError(f"{name}(): input tensor of dtype {x.dtype} is empty")
            return filled(x, (), float("nan"), x.dtype)
        pos = _median_position(name, flat, 0, ignore_nan)
        with no_grad():
            r = flat.detach().gather(0, _order(flat, 0).gather(0, pos)).reshape(())
        if x._rg and _state.enabled:
            record(r, node_cls(), (x,), (x, OUTPUT))
        return r
    axis = _wrap_dim(dim, x.ndim, name)
    if x.ndim == 0:
        return cls(x.clone(), filled(x, (), 0, _dt.int64))
    _check_reduced(name, x, axis)
    return _pick(x, axis, _median_position(name, x, axis, ignore_nan), keepdim, cls)


@op("median", method="median")
def median(x, dim=None, keepdim=False):
    """The lower median (of all elements, or along ``dim`` with its index); NaN propagates."""
    return _median("median", x, dim, keepdim, False, median_t, MedianBackward0)


@op("nanmedian", method="nanmedian")
def nanmedian(x, dim=None, keepdim=False):
    """``median`` of the non-NaN values (NaN only where all are NaN)."""
    return _median("nanmedian", x, dim, keepdim, True, nanmedian_t, NanmedianBackward0)


@op("kthvalue", method="kthvalue")
def kthvalue(x, k, dim=-1, keepdim=False):
    """The ``k``-th smallest value along ``dim`` (1-based) and its index (NaN is largest)."""
    no_bool_kernel("kthvalue", "kthvalue_cpu", x)
    axis = _wrap_dim(dim, x.ndim, "kthvalue")
    n = x.shape[axis] if x.ndim else 1
    if not 1 <= k <= n:
        raise IndexOutOfRangeError(f"kthvalue(): selected number k={k} out of range for dimension "
                         f"{axis} of size {n} (input shape {list(x.shape)})")
    if x.ndim == 0:
        return kthvalue_t(x.clone(), filled(x, (), 0, _dt.int64))
    shape = tuple(1 if d == axis else s for d, s in enumerate(x.shape))
    order = _order(x, axis)
    indices = _quickselect_ties(x, axis, k - 1, order.gather(axis, filled(x, shape, k - 1,
                                                                          _dt.int64)))
    values = x.gather(axis, indices)
    if not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return kthvalue_t(values, indices)


def _quickselect_ties(x, axis, k, indices):
    """``indices`` (the stable order's) with the rows whose ``k``-th value is tied replaced
    by the index PyTorch's quickselect returns there (its ``quick_select_template``: median
    of three, Hoare partition, NaN largest), so ties resolve as in PyTorch. Untied rows need
    no work: any selection returns their one index."""
    if x.numel() == 0:
        return indices
    with no_grad():
        rows = x.detach().movedim(axis, -1)
        rows = rows.reshape(-1, rows.shape[-1])
        at = rows.gather(1, indices.movedim(axis, -1).reshape(-1, 1))
        same = rows.eq(at)
        if x.dtype.is_floating_point:
            same = same.logical_or(rows.isnan().logical_and(at.isnan()))
        tied = same.sum(1).gt(1).nonzero().reshape(-1).tolist()
        if not tied:
            return indices
        flat = indices.movedim(axis, -1).reshape(-1).tolist()
        for r in tied:
            flat[r] = _torch_quickselect(rows[r].tolist(), k)
        out = tensor(flat, device=x.device).reshape(indices.movedim(axis, -1).shape)
        return out.movedim(-1, axis)


def _above(a, b):
    """PyTorch's ``gt_or_nan``: NaN is above every number."""
    return (a != a and b == b) or a > b


def _torch_quickselect(vals, k):
    """The index PyTorch's CPU ``kthvalue`` returns for the ``k``-th (0-based) of ``vals``."""
    arr, idx = list(vals), list(range(len(vals)))

    def swap(i, j):
        arr[i], arr[j] = arr[j], arr[i]
        idx[i], idx[j] = idx[j], idx[i]
    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if _above(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)
        if _above(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if _above(arr[lo], arr[hi]):
            swap(lo, hi)
        if _above(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while _above(pivot, arr[i]):
                i += 1
            j -= 1
            while _above(arr[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


@op("mode", method="mode")
def mode(x, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the
    index of its last occurrence."""
    axis = _wrap_dim(dim, x.ndim, "mode")
    if x.ndim == 0:
        return mode_t(x.clone(), filled(x, (), 0, _dt.int64))
    if x.numel() == 0:
        shape = [s for d, s in enumerate(x.shape) if d != axis or keepdim]
        if keepdim:
            shape[axis] = 1
        if 0 not in shape:
            _check_reduced("mode", x, axis)
        return mode_t(filled(x, tuple(shape), 0, x.dtype), filled(x, tuple(shape), 0, _dt.int64))
    with no_grad():
        xm = x.detach().movedim(axis, -1)
        order = xm.argsort(-1)
        s = xm.gather(-1, order)
        key = s if s.dtype is not _dt.bool_ else s.to(_dt.int64)
        change = key[..., 1:].ne(key[..., :-1])
        ones = filled(x, key.shape[:-1] + (1,), True, _dt.bool_)
        starts = _cat(ones, change)
        ends = _cat(change, ones)
        run = starts.to(_dt.int64).cumsum(-1).sub(1)
        counts = filled(x, run.shape, 0, _dt.int64).scatter_add(-1, run, run.new_ones(run.shape))
        at = counts.gather(-1, run).where(ends, filled(x, run.shape, -1, _dt.int64))
        last = at.argmax(-1, keepdim=True)  # the first run of the largest count
        idx = order.gather(-1, last).movedim(-1, axis)
    values = x.gather(axis, idx)
    if not keepdim:
        values, idx = values.squeeze(axis), idx.squeeze(axis)
    return mode_t(values, idx)


def _cat(a, b):
    return cat([a, b], -1)


# ---------------------------------------------------------------------- quantile
def _lerp(a, b, w):
    """PyTorch's ``lerp``: from the nearer end, so a weight of 1 gives ``b`` exactly."""
    d = b.sub(a)
    return a.add(d.mul(w)).where(w.lt(0.5), b.sub(d.mul(w.neg().add(1))))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, x, q, dim, keepdim, interpolation, ignore_nan):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): input must be a Tensor, got {type(x).__name__}")
    if x.dtype not in (_dt.float32, _dt.float64):
        raise DTypeError(f"{name}() input tensor must be either float or double dtype, got "
                         f"{x.dtype}")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{name}() interpolation must be one of {', '.join(_INTERPOLATIONS)}. "
                         f"Got {interpolation!r}")
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        qs = [float(q)]
        qt = x.new_tensor(qs)
    else:
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor, got shape "
                               f"{list(q.shape)}")
        if q.dtype is not x.dtype:
            raise DTypeError(f"{name}() q tensor must be same dtype as the input tensor "
                             f"(input {x.dtype}, q {q.dtype})")
        scalar_q = q.ndim == 0
        qt = q.reshape(-1)
        qs = qt.tolist()
    if any(not 0 <= v <= 1 for v in qs):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1], got {qs}")
    ndim = x.ndim
    if dim is None:
        xm, out_rest = x.reshape(-1), ()
        kept = (1,) * ndim
    else:
        axis = _wrap_dim(dim, ndim, name)
        xm = x.movedim(axis, -1) if ndim else x.reshape(1)
        out_rest = tuple(s for d, s in enumerate(x.shape) if d != axis)
        kept = tuple(1 if d == axis else s for d, s in enumerate(x.shape))
    nq = qt.shape[0]
    n = xm.shape[-1]
    lead = xm.shape[:-1]
    if n == 0:
        out = filled(x, (nq,) + lead, float("nan"), x.dtype)
    else:
        s = xm.sort(-1).values.unsqueeze(0).expand((nq,) + lead + (n,))
        qv = qt.reshape((nq,) + (1,) * len(lead) + (1,))
        # as PyTorch: the ranks are q times the last index, so q's gradient flows through
        # the interpolation weights
        nans = _nan_count(xm.detach(), -1).unsqueeze(0)
        if ignore_nan:
            ranks = qv.mul(nans.neg().add(n - 1).to(x.dtype))
            ranks = ranks.where(ranks.detach().ge(0), ranks.new_zeros(()))
        else:
            ranks = qv.mul(float(n - 1)).expand((nq,) + lead + (1,))
            ranks = ranks.where(nans.eq(0), ranks.new_full((), float(n - 1)))
        with no_grad():
            r = ranks.detach()
            r = {"lower": r.floor, "higher": r.ceil, "nearest": r.round}.get(
                interpolation, lambda: r)()
            below = r.to(_dt.int64)
            above = r.ceil().to(_dt.int64)
        if interpolation == "midpoint":
            weights = ranks.new_full(ranks.shape, 0.5)
        else:
            weights = ranks.sub(below.to(x.dtype))
        out = s.gather(-1, below)
        if interpolation in ("linear", "midpoint"):
            out = _lerp(out, s.gather(-1, above), weights)
        out = out.squeeze(-1)
    if keepdim:
        out = out.reshape((nq,) + kept)
    else:
        out = out.reshape((nq,) + out_rest)
    return out.squeeze(0) if scalar_q else out


@op("quantile", method="quantile")
def quantile(x, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles along ``dim`` (of all elements for None); NaN propagates."""
    return _quantile("quantile", x, q, dim, keepdim, interpolation, False)


@op("nanquantile", method="nanquantile")
def nanquantile(x, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` of the non-NaN values."""
    return _quantile("nanquantile", x, q, dim, keepdim, interpolation, True)
