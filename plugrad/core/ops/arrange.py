"""Rearranging ops: tile, diag, diagonal, diag_embed, diagflat, trace, take, diff, rot90,
Tensor.unfold, block_diag, meshgrid, cartesian_prod, triu_indices, tril_indices.

Each is an exact composition of differentiable ops (slicing, reshape, cat, index_select),
so their gradients are those ops' rules. Unlike PyTorch's, ``diagonal``, ``unfold`` and
``meshgrid`` return copies rather than views sharing storage.
"""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core.errors import ShapeError, no_bool_kernel, shape_str
from plugrad.core.factories import arange, tensor, zeros
from plugrad.core.ops.declare import op
from plugrad.core.ops.indexing import as_index_tensor, wrap_negative
from plugrad.core.ops.join import cat, stack
from plugrad.core.ops.lattice import as_strided_step, diagonal_step, lattice_view, unfold_step
from plugrad.core.tensor import Tensor, _wrap_dim


def _dims_tuple(dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return tuple(dims)


@op("tile", method="tile")
def tile(x, *dims):
    """``x`` repeated ``dims`` times per dim (``dims`` shorter than ``x.ndim``: ones first)."""
    reps = _dims_tuple(dims)
    if len(reps) < x.ndim:
        reps = (1,) * (x.ndim - len(reps)) + reps
    return x.repeat(*reps)


# ---------------------------------------------------------------------- diagonals
@op("diagonal", method="diagonal")
def diagonal(x, offset=0, dim1=0, dim2=1):
    """The diagonal of ``x`` in dims ``dim1``/``dim2`` (``offset`` above it), as a last dim."""
    if x.ndim < 2:
        raise RuntimeError(f"diagonal(): input must have at least 2 dimensions, got shape "
                           f"{shape_str(x.shape)}")
    d1, d2 = _wrap_dim(dim1, x.ndim, "diagonal"), _wrap_dim(dim2, x.ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal(): diagonal dimensions cannot be identical {dim1}, "
                           f"{dim2}")
    return lattice_view(x, diagonal_step(tuple(x.shape), offset, d1, d2, x.device.index),
                        "DiagonalBackward0")


@op("as_strided", method="as_strided")
def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s elements at the given strides (windows, overlapping ones too)."""
    return lattice_view(input, as_strided_step(input, size, stride, storage_offset),
                        "AsStridedBackward0")


@op("diag_embed", method="diag_embed")
def diag_embed(x, offset=0, dim1=-2, dim2=-1):
    """Matrices (in output dims ``dim1``/``dim2``) with the last dim of ``x`` on their
    ``offset`` diagonal, zeros elsewhere."""
    nd = x.ndim + 1
    d1, d2 = _wrap_dim(dim1, nd, "diag_embed"), _wrap_dim(dim2, nd, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diag_embed(): diagonal dimensions cannot be identical {dim1}, "
                           f"{dim2}")
    v = x if x.ndim else x.reshape(1)
    lead, n = v.shape[:-1], v.shape[-1]
    k = abs(offset)
    z = zeros(*lead, n, n, dtype=x.dtype, device=x.device)
    if n:  # rows [v_i, 0 * n] flattened and cut to n * n: v on the diagonal
        z = cat([v.unsqueeze(-1), z], -1).reshape(*lead, n * (n + 1))[..., :n * n]
        z = z.reshape(*lead, n, n)
    if k:
        side = zeros(*lead, n, k, dtype=x.dtype, device=x.device)
        z = cat([side, z] if offset > 0 else [z, side], -1)
        band = zeros(*lead, k, n + k, dtype=x.dtype, device=x.device)
        z = cat([z, band] if offset > 0 else [band, z], -2)
    rest = iter(range(len(lead)))
    perm = [nd - 2 if p == d1 else nd - 1 if p == d2 else next(rest) for p in range(nd)]
    return z.permute(*perm)


@op("diag", method="diag")
def diag(x, diagonal=0):
    """A 1-D ``x`` on the ``diagonal`` of a square matrix, or a 2-D ``x``'s diagonal."""
    if x.ndim == 1:
        return diag_embed(x, diagonal)
    if x.ndim == 2:
        return globals()["diagonal"](x, diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D (shape "
                       f"{shape_str(x.shape)})")


@op("diagflat", method="diagflat")
def diagflat(x, offset=0):
    """The flattened ``x`` on the ``offset`` diagonal of a square matrix."""
    return diag_embed(x.reshape(-1), offset)


@op("trace", method="trace")
def trace(x):
    """The sum of a matrix's main diagonal (integers sum in int64, as ``sum``)."""
    no_bool_kernel("trace", "trace", x)
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim} "
                           f"(shape {shape_str(x.shape)})")
    return diagonal(x).sum()


# ---------------------------------------------------------------------- take, diff, rot90
@op("take", method="take")
def take(x, index):
    """Elements of the flattened ``x`` at ``index`` (negative ones from the end), in
    ``index``'s shape."""
    index = as_index_tensor("take", index, x)
    flat = wrap_negative("take", index.reshape(-1), x.numel(), 0)
    if x.numel() == 0 and flat.numel():
        raise IndexError("take(): tried to take from an empty tensor")
    return x.reshape(-1).index_select(0, flat).reshape(index.shape)


@op("diff", method="diff")
def diff(x, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first)."""
    if x.ndim == 0:
        raise RuntimeError("diff(): expected input to be at least one-dimensional")
    axis = _wrap_dim(dim, x.ndim, "diff")
    if n < 0:
        raise RuntimeError(f"diff(): order must be non-negative but got {n}")
    parts = []
    for extra in (prepend, append):
        if extra is not None and not isinstance(extra, Tensor):
            extra = tensor(extra, dtype=x.dtype, device=x.device)
            if extra.ndim == 0:
                shape = list(x.shape)
                shape[axis] = 1
                extra = extra.expand(*shape)
        parts.append(extra)
    if parts[0] is not None or parts[1] is not None:
        x = cat([t for t in (parts[0], x, parts[1]) if t is not None], axis)
    for _ in range(n):
        length = x.shape[axis]
        if length == 0:
            break
        hi, lo = x.narrow(axis, 1, length - 1), x.narrow(axis, 0, length - 1)
        x = hi.logical_xor(lo) if x.dtype is _dt.bool_ else hi.sub(lo)
    return x


@op("rot90", method="rot90")
def rot90(x, k=1, dims=(0, 1)):
    """``x`` rotated by 90 degrees ``k`` times, from ``dims[0]`` towards ``dims[1]``."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90(): expected total rotation dims == 2, but got dims = "
                           f"{len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"rot90(): expected total dims >= 2, but got total dims = {x.ndim}")
    a, b = _wrap_dim(dims[0], x.ndim, "rot90"), _wrap_dim(dims[1], x.ndim, "rot90")
    if a == b:
        raise RuntimeError(f"rot90(): expected rotation dims to be different, but got dim0 = "
                           f"{a} and dim1 = {b}")
    k %= 4
    if k == 1:
        return x.flip(b).transpose(a, b)
    if k == 2:
        return x.flip(a, b)
    if k == 3:
        return x.flip(a).transpose(a, b)
    return x.clone()


@op(method="unfold", name="Tensor.unfold")
def unfold(x, dimension, size, step):
    """Every ``size``-long window along ``dimension``, ``step`` apart, as a new last dim."""
    if x.ndim == 0:
        if size != 1 and size != 0 or step <= 0:
            raise RuntimeError(f"unfold(): maximum size for tensor at dimension 0 is 1 but "
                               f"size is {size}")
        return x.reshape(1)[:size]
    axis = _wrap_dim(dimension, x.ndim, "unfold")
    length = x.shape[axis]
    if size > length:
        raise RuntimeError(f"unfold(): maximum size for tensor at dimension {axis} is {length} "
                           f"but size is {size}")
    if step <= 0:
        raise RuntimeError(f"unfold(): step is {step} but must be > 0")
    return lattice_view(x, unfold_step(tuple(x.shape), axis, size, step, x.device.index),
                        "UnfoldBackward0")


# ---------------------------------------------------------------------- joining
@op("block_diag")
def block_diag(*tensors):
    """The tensors (0-d, 1-D as a row, 2-D) as blocks on the diagonal of one matrix."""
    blocks = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"block_diag(): argument {i} must be a Tensor, got "
                            f"{type(t).__name__}")
        if t.ndim > 2:
            raise RuntimeError(f"block_diag(): Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.ndim} dimensions")
        blocks.append(t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1
                      else t)
    if not blocks:  # PyTorch: a 1 x 0 matrix
        return zeros(1, 0)
    dtype = _dt.result_type_of(tuple((b.dtype, False) for b in blocks))
    blocks = [b if b.dtype is dtype else b.to(dtype) for b in blocks]
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        parts = [zeros(r, left, dtype=dtype, device=b.device), b,
                 zeros(r, width - left - c, dtype=dtype, device=b.device)]
        rows.append(cat(parts, 1))
        left += c
    return cat(rows, 0)


@op("meshgrid")
def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D (or 0-d) tensors: ``'ij'`` (matrix, the default) or
    ``'xy'`` (Cartesian: the first two dims swapped)."""
    ts = _dims_tuple(tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                      "the indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                         f"received: {indexing}")
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: shape {shape_str(t.shape)}")
    flat = [t.reshape(-1) for t in ts]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.shape[0] for t in flat)
    grids = []
    for i, t in enumerate(flat):
        view = [1] * len(flat)
        view[i] = -1
        grids.append(t.reshape(*view).expand(*shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@op("cartesian_prod")
def cartesian_prod(*tensors):
    """Every combination of the elements of the 1-D tensors, one per row."""
    ts = _dims_tuple(tensors)
    for t in ts:
        if t.ndim != 1:
            raise RuntimeError(f"cartesian_prod(): Expect a 1D vector, but got shape "
                               f"{shape_str(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    return stack([g.reshape(-1) for g in meshgrid(*ts, indexing="ij")], 1)


def _tri_indices(name, row, col, offset, dtype, device, upper):
    if row < 0 or col < 0:
        raise RuntimeError(f"{name}(): row and col must be non-negative, got {row}, {col}")
    rows, cols = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
    dt = _dt.int64 if dtype is None else _dt.get_dtype(dtype)
    return tensor(np.stack([rows, cols]).astype(np.int64).reshape(2, -1), dtype=dt,
                  device=device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """``2 x N`` indices of the upper triangle of a ``row x col`` matrix (row-major)."""
    return _tri_indices("triu_indices", row, col, offset, dtype, device, True)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """``2 x N`` indices of the lower triangle of a ``row x col`` matrix (row-major)."""
    return _tri_indices("tril_indices", row, col, offset, dtype, device, False)

