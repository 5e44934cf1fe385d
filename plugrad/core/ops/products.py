"""Products and binning: tensordot, kron, inner, vdot, cross; searchsorted, bucketize,
histc, bincount.

The products are compositions of ``matmul``, broadcasting ``mul`` and reshapes, so their
gradients are those ops' rules. The binning ops return counts or positions (no gradient,
as in PyTorch); they compare every value with every boundary in one broadcast, which suits
the small boundary lists they are used with.
"""
from __future__ import annotations

import builtins
import functools
import math
import warnings

from plugrad.core import dtypes as _dt
from plugrad.core.errors import (DTypeError, DTypeNotImplementedError, ShapeError,
                                  broadcast_shapes, check_device,
                                  no_bool_kernel, shape_str)
from plugrad.core.factories import tensor, zeros
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record
from plugrad.core.grad_mode import _state as _grad_state
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops.declare import op
from plugrad.core.ops.join import cat
from plugrad.core.tensor import Tensor, _wrap, _wrap_dim


def _as_dims(dims, a, b):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > builtins.min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims="
                               f"{dims}")
        return list(range(a.ndim - dims, a.ndim)), list(range(dims))
    da, db = dims
    da = [da] if isinstance(da, int) else list(da)
    db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError(f"both dimension lists should have same length, got {da} and {db}")
    return ([_wrap_dim(d, a.ndim, "tensordot") for d in da],
            [_wrap_dim(d, b.ndim, "tensordot") for d in db])


@op("tensordot")
def tensordot(a, b, dims=2):
    """Sum of products over ``dims`` of ``a`` and ``b`` (an int: ``a``'s last and ``b``'s
    first ``dims`` dims; or two lists of dims)."""
    da, db = _as_dims(dims, a, b)
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise ShapeError(f"tensordot: contracted dimensions need to match, but first has "
                             f"size {a.shape[i]} in dim {i} and second has size {b.shape[j]} "
                             f"in dim {j}")
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    am = a.permute(*fa, *da).reshape(math.prod(a.shape[d] for d in fa), k)
    bm = b.permute(*db, *fb).reshape(k, math.prod(b.shape[d] for d in fb))
    out_shape = [a.shape[d] for d in fa] + [b.shape[d] for d in fb]
    return am.matmul(bm).reshape(*out_shape)


@op("kron", method="kron")
def kron(a, b):
    """The Kronecker product: every element of ``a`` times the whole of ``b``."""
    nd = builtins.max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    ea = a.reshape(*[s for n in sa for s in (n, 1)])
    eb = b.reshape(*[s for n in sb for s in (1, n)])
    return ea.mul(eb).reshape(*[x * y for x, y in zip(sa, sb)])


@op("inner", method="inner")
def inner(a, b):
    """Sum of products over the last dims (a 0-d operand multiplies). Bool operands are
    refused whatever their shapes (PyTorch refuses them except for a 0-d operand)."""
    if a.dtype is _dt.bool_ or b.dtype is _dt.bool_:
        raise DTypeNotImplementedError("inner: not implemented for 'Bool' tensors (as in "
                                       "PyTorch; convert with .long() or .float() first)")
    if a.ndim == 0 or b.ndim == 0:
        return a.mul(b)
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"inner() the last dimension must match on both input tensors but "
                         f"got shapes {shape_str(a.shape)} and {shape_str(b.shape)}")
    return tensordot(a, b, ([-1], [-1]))


@op("vdot", method="vdot")
def vdot(a, b):
    """The dot product of two 1-D tensors (real dtypes: no conjugation)."""
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype is not b.dtype:
        raise DTypeError(f"vdot: expected both vectors to have same dtype, but found {a.dtype} "
                         f"and {b.dtype}")
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                         f"[{b.shape[0]}] to have the same number of elements, but got "
                         f"{a.shape[0]} and {b.shape[0]} elements respectively")
    return a.dot(b)


@op("cross", method="cross")
def cross(a, b, dim=None):
    """The 3-vector cross product along ``dim``; without ``dim``, PyTorch's deprecated
    default: the first dim of size 3 (``linalg.cross`` uses the last)."""
    if a.ndim != b.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions "
                           f"(got {a.ndim} and {b.ndim})")
    shape = broadcast_shapes("cross", a.shape, b.shape)
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use "
                      "torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning,
                      stacklevel=2)
        sizes3 = [d for d, n in enumerate(shape) if n == 3]
        if not sizes3:
            raise RuntimeError(f"no dimension of size 3 in input (shapes "
                               f"{shape_str(a.shape)} and {shape_str(b.shape)})")
        axis = sizes3[0]
    else:
        axis = _wrap_dim(dim, len(shape), "cross")
        if shape[axis] != 3:
            raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                               f"{a.shape[axis]} and {b.shape[axis]}")
    if a.device is not b.device:
        check_device("cross", a, b)
    return cross_expanded(a.expand(*shape), b.expand(*shape), axis)


def _fms(F, x, y, u, v):
    """``x*y - u*v`` as PyTorch's compiled float kernel computes it, ``fma(x, y, -(u*v))``:
    ``x*y`` is not rounded first, so it may exceed the dtype's range where the result does
    not (``2.25e308 - 1.25e308`` is ``1e308``), and against an overflowed ``u*v`` it is a
    finite number (the result is ``-(u*v)``, never ``inf - inf``). Computed a quarter down:
    the same roundings as the plain formula wherever no product is subnormal."""
    q = F.mul(u, v)
    r = F.mul(F.sub(F.mul(F.mul(x, 0.25), y), F.mul(q, 0.25)), 4.0)
    finite = F.logical_and(F.lt(F.abs(x), math.inf), F.lt(F.abs(y), math.inf))
    return F.where(F.logical_and(F.eq(F.abs(q), math.inf), finite), F.neg(q), r)


def _cross_f(F, a, b, axis):
    """The cross product of same-shape arrays (or Tensors) along ``axis`` with the gradient
    ops ``F`` (forward, backward and double backward alike)."""
    def part(x, i):
        return F.slice(x, tuple(slice(i, i + 1, 1) if d == axis else slice(0, n, 1)
                                for d, n in enumerate(x.shape)))
    a0, a1, a2 = (part(a, i) for i in range(3))
    b0, b1, b2 = (part(b, i) for i in range(3))
    return F.concat([_fms(F, a1, b2, a2, b1), _fms(F, a2, b0, a0, b2),
                     _fms(F, a0, b1, a1, b0)], axis)


class LinalgCrossBackward0(Node):
    """PyTorch's rule: ``cross(other, g)`` and ``cross(g, input)``, each the fused form."""

    def grad(self, F, g, a, b):
        # (with Tensors, create_graph: the op itself, so the rule's rule is this rule)
        f = cross_expanded if isinstance(g, Tensor) else functools.partial(_cross_f, F)
        return (f(b, g, self.axis) if self.next[0] else None,
                f(g, a, self.axis) if self.next[1] else None)


def cross_expanded(a, b, axis):
    """``cross`` of operands already of one shape. float32/float64 of one dtype take the
    fused kernel's form (:func:`_fms`) with PyTorch's own rule; other dtypes the plain
    products (PyTorch's half and integer kernels round every product)."""
    if a.dtype is not b.dtype or a.dtype not in (_dt.float32, _dt.float64):
        a0, a1, a2 = (a.narrow(axis, i, 1) for i in range(3))
        b0, b1, b2 = (b.narrow(axis, i, 1) for i in range(3))
        return cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis)
    k = a._k
    r = _wrap(_cross_f(k, a._data, b._data, axis), a.dtype, a.device, k)
    if _grad_state.enabled and (a._rg or b._rg):
        node = LinalgCrossBackward0()
        node.axis = axis
        record(r, node, (a, b), (a if b._rg else None, b if a._rg else None))
    return r


# ---------------------------------------------------------------------- binning
def _positions(seq, values, right):
    """PyTorch's binary search itself, all values at once: each step probes ``mid`` and
    goes right where ``!(entry >= value)`` (``right``: ``!(entry > value)``). A NaN probe
    goes right, so with NaN entries (sorted last) the result depends on the probes, as in
    PyTorch; a NaN value goes after every entry. ``seq`` is 1-D or has the batch dims of
    ``values``; ``bit_length(n)`` steps (each halves every interval)."""
    n = seq.shape[-1]
    start = zeros(tuple(values.shape), dtype=_dt.int64, device=values.device)
    end = start + n
    flat = seq.ndim == 1
    for _ in range(n.bit_length()):
        mid = start + (end - start) // 2
        probe = mid.clamp(max=n - 1)  # where the search is over, mid may be n
        entry = seq[probe] if flat else seq.gather(-1, probe)
        active = start.lt(end)
        go_right = (entry.gt(values) if right else entry.ge(values)).logical_not()
        go_right = go_right.logical_and(active)
        start = mid.add(1).where(go_right, start)
        end = mid.where(active.logical_and(go_right.logical_not()), end)
    return start


@op("searchsorted")
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Insertion points of ``input`` in the last dim of ``sorted_sequence`` (left: before
    equal entries; ``right``/``side='right'``: after them)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence
    no_bool_kernel("searchsorted", "searchsorted_out_cpu", seq, input)
    scalar = not isinstance(input, Tensor)
    values = tensor(input, dtype=seq.dtype, device=seq.device) if scalar else input
    with no_grad():
        seq, values = seq.detach(), values.detach()
        if sorter is not None:
            seq = seq.gather(-1, sorter)
        if seq.ndim > 1 and (values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]):
            raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension "
                               f"or the first N-1 dimensions of boundaries tensor and input "
                               f"value tensor must match, but we got boundaries tensor "
                               f"{shape_str(seq.shape)} and input value tensor "
                               f"{shape_str(values.shape)}")
        if seq.dtype is not values.dtype:
            dtype = _dt.result_type_of(((seq.dtype, False), (values.dtype, False)))
            seq, values = seq.to(dtype), values.to(dtype)
        out = _positions(seq.reshape(-1) if seq.ndim <= 1 else seq, values, right)
    return out.to(_dt.int32) if out_int32 else out


@op("bucketize")
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value among the 1-D ``boundaries`` (``right``: buckets closed on
    the left)."""
    no_bool_kernel("bucketize", "searchsorted_out_cpu", input, boundaries)
    if boundaries.ndim != 1:
        raise RuntimeError(f"bucketize(): boundaries tensor must be 1 dimension, but got dim "
                           f"{boundaries.ndim}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


@op("histc", method="histc")
def histc(x, bins=100, min=0, max=0):
    """Counts of ``x`` in ``bins`` equal bins over ``[min, max]`` (both 0: the data's range);
    values outside are ignored, ``max`` itself falls in the last bin."""
    if not x.dtype.is_floating_point:
        raise DTypeError(f"histc(): \"histogram_cpu\" not implemented for "
                         f"'{x.dtype.name.capitalize()}'")
    if bins <= 0:
        raise RuntimeError(f"histc(): bins must be > 0, but got {bins}")
    with no_grad():
        v = x.detach().reshape(-1)
        lo, hi = float(min), float(max)
        if lo == hi and v.numel():
            lo, hi = float(v.min()), float(v.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if lo > hi or not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"histc(): max must be larger than min and both finite, got "
                               f"[{lo}, {hi}]")
        inside = v.ge(lo).logical_and(v.le(hi))
        w = v.masked_select(inside).to(_dt.float64)
        pos = w.sub(lo).mul(bins).div(hi - lo).floor().to(_dt.int64).clamp(0, bins - 1)
        counts = zeros(bins, dtype=_dt.float64, device=x.device)
        counts = counts.scatter_add(0, pos, pos.new_ones(pos.shape).to(_dt.float64))
    return counts.to(x.dtype)


@op("bincount", method="bincount")
def bincount(x, weights=None, minlength=0):
    """How often each non-negative integer occurs in the 1-D ``x`` (``weights``: their
    sums), at least ``minlength`` long."""
    if x.ndim != 1 or x.dtype.kind not in "iub" or x.dtype is _dt.bool_:
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs, got "
                           f"{x.dtype} of shape {shape_str(x.shape)}")
    if minlength < 0:
        raise RuntimeError(f"bincount(): minlength should be >= 0, got {minlength}")
    with no_grad():
        idx = x.to(_dt.int64)
        if idx.numel() and int(idx.min()) < 0:
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        n = builtins.max(int(idx.max()) + 1 if idx.numel() else 0, minlength)
        if weights is None:
            return zeros(n, dtype=_dt.int64, device=x.device).scatter_add(
                0, idx, idx.new_ones(idx.shape))
        if weights.shape != x.shape:
            raise RuntimeError(f"bincount(): weights should be 1-d and have the same length as "
                               f"input, got {shape_str(weights.shape)} and {shape_str(x.shape)}")
        dtype = weights.dtype if weights.dtype.is_floating_point else _dt.float64
        w = weights.detach().to(_dt.float64)
        return zeros(n, dtype=_dt.float64, device=x.device).scatter_add(0, idx, w).to(
            _dt.float64 if dtype is not _dt.float32 else _dt.float32)
