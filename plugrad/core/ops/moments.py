"""PyTorch's CPU ``RowwiseMoments`` (its layer_norm and group_norm statistics), for the rows
where it is not the two-pass mean and variance to within rounding.

That reduction is Welford's within SIMD lanes (4 doubles or 8 floats: the AVX2 kernels
these ops dispatch to), chunks of 16 vectors combined in a cascade, a scalar tail, then the
lanes merged into the tail's state with ``m2 += m2_a + delta * delta * c * m0``. Where a
lane's mean squared overflows, that term is ``inf * 0`` (the first lane without a tail,
``m0 = 0``, or lanes that hold nothing, ``c = 0``): PyTorch's variance is NaN where the
two-pass one is inf (or finite). :func:`suspect_rows` picks the rows whose statistics are too large for every
intermediate to be finite (and those with inf or NaN); :func:`rowwise_moments` replays the
reduction on them, one lane step at a time over all those rows at once.
"""
from __future__ import annotations

import math

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core.factories import tensor
from plugrad.core.grad_mode import no_grad

#: per dtype: (SIMD lanes, bound on |mean| and on the variance's square root under which
#: no step of the reduction can overflow for rows of up to ~10**6 elements)
_LANES = {"float64": (4, 1e140), "float32": (8, 1e12)}


def applies(dtype) -> bool:
    return dtype.name in _LANES


def suspect_rows(k, mean, var_or_rstd, *, rstd: bool):
    """Flat indices (a NumPy array, maybe empty) of the rows whose mean or spread is beyond
    the bound (or not finite): only there can PyTorch's statistics differ beyond rounding."""
    bound = _LANES[k.dtype_of(mean)][1]
    m, v = k.to_numpy(mean), k.to_numpy(var_or_rstd)
    lo, hi = (1.0 / bound, math.inf) if rstd else (-1.0, bound * bound)
    if m.size <= 8:  # the common case, cheaply: sums are NaN or inf where any term is
        vs = v.ravel().tolist()
        if sum(map(abs, m.ravel().tolist())) < bound and lo < min(vs) and sum(vs) < hi:
            return _NONE
    elif np.abs(m).max() < bound and (v.min() > lo if rstd else v.max() < hi):
        return _NONE  # (NaN fails every comparison; an infinite rstd is var 0 in both)
    m = np.abs(np.asarray(m, dtype=np.float64)).reshape(-1)
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    return np.flatnonzero(~((m < bound) & (lo < v) & (v < hi)))


_NONE = np.zeros(0, dtype=np.int64)


def _ceil_log2(m: int) -> int:
    return 1 if m <= 2 else (m - 1).bit_length()


def _add(m0_add, m1_add, m2_add, state, dt, vec=False):
    """PyTorch's ``AddMoments`` (``m2 += m2_a + delta * delta * c * m0``) or, ``vec``, its
    ``AddMomentsVec`` (``m2 = fmadd(delta * m0, c * delta, m2 + m2_a)``: no ``inf * 0`` at
    ``m0 = 0``): merge ``(m0_add, m1_add, m2_add)`` into ``state = [m0, m1, m2]`` (``m0`` a
    count; the means and M2s Tensors)."""
    m0, m1, m2 = state
    n = m0 + m0_add
    c = 0.0 if n == 0 else float(np.asarray(m0_add, dt) / np.asarray(n, dt))
    delta = m1_add - m1
    state[0] = n
    state[1] = m1 + delta * c
    if vec:
        state[2] = (m2 + m2_add) + (delta * float(m0)) * (delta * c)
    else:
        state[2] = m2 + (m2_add + delta * delta * c * float(m0))


def rowwise_moments(x):
    """``(mean, variance)`` of each row of the 2-D Tensor ``x`` (float32 or float64) as
    PyTorch's ``RowwiseMoments(X, N)`` computes them (population variance)."""
    rows, N = x.shape
    dt = np.dtype(x.dtype.name)
    V = _LANES[x.dtype.name][0]
    n = N // V
    chunks = -(-n // 16)
    depth = _ceil_log2(chunks)
    zeros = x.new_zeros((rows, V))
    stack = [[0, zeros, zeros] for _ in range(depth)]
    lanes = x[:, :n * V].reshape(rows, n, V)
    for i in range(chunks):
        count = min(16, n - i * 16)
        m1 = m2 = zeros
        for j in range(count):
            xv = lanes[:, i * 16 + j]
            delta = xv - m1
            m1 = m1 + delta * float(np.asarray(1.0, dt) / np.asarray(j + 1, dt))
            m2 = m2 + delta * (xv - m1)
        _add(count, m1, m2, stack[0], dt, vec=True)
        mask, j = i + 1, 1
        while j < depth and (mask & 1) == 0:
            _add(stack[j - 1][0], stack[j - 1][1], stack[j - 1][2], stack[j], dt, vec=True)
            stack[j - 1] = [0, zeros, zeros]
            mask >>= 1
            j += 1
    for i in range(1, depth):
        _add(stack[i][0], stack[i][1], stack[i][2], stack[0], dt, vec=True)
    state = [0, x.new_zeros((rows,)), x.new_zeros((rows,))]
    for i in range(n * V, N):  # the scalar tail
        xi = x[:, i]
        delta = xi - state[1]
        state[0] += 1
        state[1] = state[1] + delta / float(state[0])
        state[2] = state[2] + delta * (xi - state[1])
    for lane in range(V):
        _add(n, stack[0][1][:, lane], stack[0][2][:, lane], state, dt)
    return state[1], state[2] / float(N)


def pytorch_statistics(x2d, mean, var):
    """``(mean, var)`` Tensors of the rows of ``x2d`` (2-D, one row per statistic) with the
    suspect rows' values replaced by PyTorch's (constants there), for a composed
    normalisation such as group_norm; the Tensors themselves when no row is suspect."""
    if not applies(x2d.dtype) or x2d.device.type == "cuda" or not x2d.numel():
        return mean, var
    rows = suspect_rows(mean._k, mean._data, var._data, rstd=False)
    if not rows.size:
        return mean, var
    with no_grad():
        at = tensor(rows.tolist(), dtype=_dt.int64, device=x2d.device)
        m, v = rowwise_moments(x2d.detach().index_select(0, at))
        mask = x2d.new_zeros((x2d.shape[0],), dtype=_dt.bool_).index_fill(0, at, True)
        mask = mask.reshape(mean.shape)
        fixed_m = mean.detach().reshape(-1).index_copy(0, at, m).reshape(mean.shape)
        fixed_v = var.detach().reshape(-1).index_copy(0, at, v).reshape(var.shape)
    return fixed_m.where(mask, mean), fixed_v.where(mask, var)
