"""The LU factorisation with partial pivoting written in Tensor ops, and the row swaps and
substitutions that solve with its factors: the core of ``linalg_lu`` that ``linalg_decomp``
also uses (det, slogdet, inv and solve at special values), in a module of its own so that
neither imports the other.

The special values follow MKL's ``getrf``/``getrs`` (PyTorch's CPU LAPACK): NumPy's driver
(OpenBLAS) meets NaN and inf in another order.
"""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core import factories
from plugrad.core.errors import ShapeError, broadcast_shapes
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops.join import cat
from plugrad.core.ops.linalg import matmul
from plugrad.core.ops.select import where


def _arange(n, like, dtype=_dt.int64):
    return factories.arange(n, dtype=dtype, device=like.device)


def _pivot_rows(col, j):
    """The pivot row of each column ``col`` (``..., m - j``), as MKL's ``idamax``: the first
    largest magnitude. Up to 16 entries (its scalar loop) a NaN never replaces the running
    maximum, so a NaN is the pivot only at the top; longer columns (its vectorised loop)
    take the first NaN."""
    a = col.abs()
    if col.shape[-1] > 16:
        return a.argmax(-1, keepdim=True) + j
    top = a[..., :1].isnan()
    return where(top, 0, where(a.isnan(), -1.0, a).argmax(-1, keepdim=True)) + j


def _lu_steps(A):
    """``(LU, pivots, info)`` of ``A`` (``..., m, n``): L's multipliers below the diagonal,
    U on and above it; ``pivots`` 1-based int32 row swaps; ``info`` the first zero pivot.
    The special values follow MKL's ``getrf`` (PyTorch's CPU LAPACK): a zero pivot's column
    is left unscaled, the multipliers are the column times the pivot's reciprocal (a
    division when one row is below it), and only the rows below the pivot are updated."""
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    rows = _arange(m, A).reshape(m, 1)
    cols = _arange(n, A).reshape(1, n)
    lu = A
    pivots, info = [], None
    batch = tuple(A.shape[:-2])
    for j in range(k):
        with no_grad():
            p = _pivot_rows(lu[..., j:, j], j)  # (..., 1)
        pivots.append(p)
        r = _arange(m, A).expand(*batch, m) if batch else _arange(m, A)
        swapped = where(r == j, p, where(r == p, j, r))
        lu = lu.gather(-2, swapped.unsqueeze(-1).expand(*batch, m, n))
        pivot = lu[..., j:j + 1, j:j + 1]  # (..., 1, 1)
        zero = pivot == 0
        with no_grad():
            first = zero.reshape(*batch) if batch else zero.reshape(())
            hit = first.to(_dt.int32) * (j + 1)
            info = hit if info is None else where(info == 0, hit, info)
        below = rows > j
        safe = where(zero, 1.0, pivot)
        col = lu[..., :, j:j + 1]
        scaled = col / safe if m - j == 2 else col * safe.reciprocal()
        mult = where(below, scaled, 0.0)  # (..., m, 1)
        update = mult * where(cols > j, lu[..., j:j + 1, :], 0.0)
        lu = where(below.logical_and(cols == j), mult,
                   where(below.logical_and(cols > j), lu - update, lu))
    if pivots:
        piv = cat(pivots, -1) + 1
    else:
        piv = factories.zeros(batch + (0,), dtype=_dt.int64, device=A.device)
    if info is None:
        info = factories.zeros(batch, dtype=_dt.int32, device=A.device)
    return lu, piv.to(_dt.int32), info


def _permutation(pivots, m):
    """Row order ``perm`` with ``P^T A = A[perm]``, from LAPACK's sequential swaps."""
    with no_grad():
        flat = pivots.reshape(-1, pivots.shape[-1]).tolist() if pivots.ndim else [[]]
    perms = []
    for swaps in flat:
        perm = list(range(m))
        for i, s in enumerate(swaps):
            perm[i], perm[s - 1] = perm[s - 1], perm[i]
        perms.append(perm)
    return perms


def _apply_perm(B, pivots, m, inverse=False):
    perms = _permutation(pivots, m)
    if inverse:
        inv = []
        for perm in perms:
            back = [0] * m
            for i, r in enumerate(perm):
                back[r] = i
            inv.append(back)
        perms = inv
    batch = tuple(pivots.shape[:-1])
    idx = factories.tensor(perms, dtype=_dt.int64, device=B.device).reshape(*batch, m, 1)
    lead = tuple(B.shape[:-2])
    full = tuple(lead) if len(lead) >= len(batch) else batch
    idx = idx.expand(*full, m, B.shape[-1]) if full else idx.expand(m, B.shape[-1])
    Bb = B.expand(*full, m, B.shape[-1]) if full else B
    return Bb.gather(-2, idx)


def _substitute(T, B, upper, unit):
    """Back (``upper``) or forward substitution, one row of ``X`` at a time."""
    n = T.shape[-1]
    if B.shape[-2] != n:
        raise ShapeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                         f"equation AX = B ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    batch = broadcast_shapes("linalg.solve_triangular", tuple(T.shape[:-2]),
                             tuple(B.shape[:-2]))
    if tuple(B.shape[:-2]) != batch:
        B = B.expand(*batch, *B.shape[-2:])
    rows = []
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        r = B[..., i:i + 1, :]
        if rows:
            done = cat(rows[::-1] if upper else rows, -2)
            known = T[..., i:i + 1, i + 1:] if upper else T[..., i:i + 1, :i]
            r = r - matmul(known, done)
        rows.append(r if unit else r / T[..., i:i + 1, i:i + 1])
    if not rows:
        return B + T.sum((-2, -1), keepdim=True) * 0  # the empty result, broadcast
    return cat(rows[::-1] if upper else rows, -2)


def triangle(A, upper, unit):
    """``A``'s upper (lower) triangle, the other set to 0 by a where (its inf and NaN are
    not read), with a unit diagonal when ``unit``."""
    n = A.shape[-1]
    mask = [[((j >= i) if upper else (j <= i)) and not (unit and i == j) for j in range(n)]
            for i in range(n)]
    T = A.where(factories.tensor(mask, device=A.device), 0.0) if n else A
    return T + factories.eye(n, dtype=A.dtype, device=A.device) if unit else T


def lu_substitute(lu, pivots, B):
    """``A^-1 B`` from ``A``'s LU factors: the row swaps, then forward and back substitution
    (getrs' order, with trsm's reading of the triangles)."""
    m = lu.shape[-1]
    y = _substitute(triangle(lu, False, True), _apply_perm(B, pivots, m), False, True)
    return _substitute(triangle(lu, True, False), y, True, False)
