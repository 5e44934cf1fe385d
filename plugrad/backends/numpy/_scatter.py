"""``scatter_add`` on NumPy without ``np.add.at``'s slow multi-dimensional path.

``np.add.at`` with a key of one index array per dimension (what ``take_along_axis`` style
indexing needs) costs about 10 ns per element; on a flat array with flat positions it takes
NumPy's 1-D fast path, 2.5-10x faster, and adds in the same order (so bit-identical).

An embedding's gradient (``axis == 0`` of a 2-D array, the row index broadcast across the
columns) does better still by rows: a fancy-index ``out[r] += src[s]`` is correct where the
rows ``r`` are distinct, so the occurrences are dealt in *rounds* -- each row's first
occurrence in one round, its second in the next, ... (one stable sort of the row indices).
Within a row the additions keep their order, so this too is bit-identical to ``np.add.at``.
Once the rounds become small (a few rows, or one row repeated very often, like a padding
token) the rest goes to the flat path.

Measured (one BLAS thread, float32, ms, best of 5 on a shared machine; the multi-index
``np.add.at`` -> this): max_pool2d's gradient 32x16x28x28, 3x3/1: 10.9 -> 1.6;
64x64x32x32, 2x2/2: 60 -> 24; an embedding of n rows into V x D: n=512 V=50 D=512:
4.1 -> 0.3; n=4096 V=1000 D=128: 12.7 -> 1.2; n=4096 V=30000 D=128: 18.6 -> 3.8;
n=4096 V=10 D=64: 7.8 -> 1.4. (Sorting and ``np.add.reduceat`` lost to these in every case
tried; a one-hot GEMM wins only for a tiny ``V``.)

:func:`gather` is ``np.take_along_axis``'s fancy index without its Python checks and with
the ``arange`` of each other axis made once per size (a classifier's loss picks one logit
per row on every step: ~55 us -> ~12 us in a replayed MLP step).
"""
from __future__ import annotations

import functools

import numpy as np


@functools.lru_cache(maxsize=128)
def _axis_arange(n: int, dim: int, ndim: int):
    """``arange(n)`` shaped to broadcast along ``dim`` of ``ndim`` dims (read-only: shared)."""
    a = np.arange(n).reshape((1,) * dim + (n,) + (1,) * (ndim - dim - 1))
    a.flags.writeable = False
    return a


def along_axis_key(index, axis: int) -> tuple:
    """``array_api.along_axis_key`` (``index`` given along ``axis``, every other dimension
    enumerated over ``index``'s sizes) with the kept aranges."""
    return _key(index, axis, index.shape)


def gather(x, axis: int, index):
    """``np.take_along_axis(x, index, axis)``: the same key, so the same values and errors."""
    ndim = x.ndim
    if index.ndim != ndim or not ndim or not -ndim <= axis < ndim or index.dtype.kind not in "iu":
        return np.take_along_axis(x, index, axis=axis)  # its errors
    return x[_key(index, axis % ndim, x.shape)]


def _key(index, axis: int, shape) -> tuple:
    """``index`` at ``axis``, the kept arange of each other dimension of ``shape``."""
    if len(shape) == 2:  # a classifier's (N, C): no generator frame
        return (index, _axis_arange(shape[1], 1, 2)) if axis == 0 else \
            (_axis_arange(shape[0], 0, 2), index)
    ndim = len(shape)
    return tuple(index if d == axis else _axis_arange(n, d, ndim) for d, n in enumerate(shape))


#: A round of fewer elements than this costs more in per-call overhead than it saves.
SMALL_ROUND = 4096


def scatter_add_into(out, axis: int, index, src) -> None:
    """``out[..., index, ...] += src`` along ``axis`` (``out`` C-contiguous and writable)."""
    if index.ndim == 0:
        np.add.at(out, (), src)
        return
    if axis == 0 and index.ndim == 2 and index.strides[1] == 0 \
            and index.size >= 4 * SMALL_ROUND:
        _add_rows(out, index[:, 0], src)
        return
    np.add.at(out.reshape(-1), flat_positions(index, axis, out.shape).reshape(-1),
              np.broadcast_to(src, index.shape).reshape(-1))


def flat_positions(index, axis: int, shape: tuple):
    """The flat (C-order) positions in an array of ``shape`` that ``index`` addresses along
    ``axis``, every other dimension enumerated (as ``take_along_axis`` does)."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    pos = index * strides[axis] if strides[axis] != 1 else index.astype(np.int64, copy=True)
    for d, n in enumerate(index.shape):
        if d != axis and n > 1:
            view = [1] * index.ndim
            view[d] = n
            pos = pos + (np.arange(n, dtype=np.int64) * strides[d]).reshape(view)
    return pos


def _add_rows(out, rows, src) -> None:
    """``out[rows[i]] += src[i]`` for every ``i`` in order, repeated rows accumulating."""
    n, width = rows.shape[0], out.shape[1]
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    first = np.empty(n, dtype=bool)
    first[0] = True
    np.not_equal(sorted_rows[1:], sorted_rows[:-1], out=first[1:])
    pos = np.arange(n)
    rank = pos - np.maximum.accumulate(np.where(first, pos, 0))  # occurrence number in row
    by_round = order[np.argsort(rank, kind="stable")]
    lo = 0
    for size in np.bincount(rank).tolist():
        if size * width < SMALL_ROUND:
            rest = by_round[lo:]
            index = np.broadcast_to(rows[rest][:, None], (rest.shape[0], width))
            np.add.at(out.reshape(-1), flat_positions(index, 0, out.shape).reshape(-1),
                      np.broadcast_to(src[rest], index.shape).reshape(-1))
            return
        take = by_round[lo:lo + size]
        out[rows[take]] += src[take]
        lo += size
