"""The LU factors' ops that PyTorch's gradient rules of the LU family need (``lu_unpack``,
``linalg.lu_solve``) and those rules (``FunctionsManual.cpp``: ``linalg_lu_backward``,
``lu_factor_ex_backward``, ``linalg_lu_solve_LU``), one node per op.

The forwards are compositions (elimination steps, substitutions) whose own gradients agree
with these rules on finite input but meet NaN / inf / huge factors in another order; with
PyTorch's rules the special values of the gradients are PyTorch's too. The rules are Tensor
code (:class:`~plugrad.core.ops.tensor_rule.TensorRule`): they need triangular solves.
"""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core import factories
from plugrad.core.autograd.node import OUTPUT
from plugrad.core.autograd.record import record
from plugrad.core.errors import ShapeError, broadcast_shapes
from plugrad.core.grad_mode import _state as _grad_state
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops import linalg_decomp as D
from plugrad.core.ops._dims import return_type
from plugrad.core.ops.declare import op
from plugrad.core.ops.join import cat
from plugrad.core.ops.linalg_extra import solve_triangular
from plugrad.core.ops.linalg_lu_steps import _apply_perm, _permutation
from plugrad.core.ops.tensor_rule import TensorRule

_UNPACK = return_type("lu_unpack", "P", "L", "U")


# ---------------------------------------------------------------------- LU
def lu_backward(gL, gU, P, L, U):
    """PyTorch's ``linalg_lu_backward`` (``A = P L U``, ``L`` ``m x k``, ``U`` ``k x n``);
    ``gL`` / ``gU`` may be None."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if gL is None and gU is None:
        return None
    if m == n:
        gA = (L.mT @ gL).tril(-1) if gL is not None else None
        if gU is not None:
            t = (gU @ U.mT).triu()
            gA = t if gA is None else gA + t
        gA = solve_triangular(U.mT, gA, upper=False, left=False)
        gA = solve_triangular(L.mT, gA, upper=True, left=True, unitriangular=True)
        return P @ gA
    if m < n:  # wide: U = (U1 | U2)
        U1 = U[..., :, :k]
        gA = L.mT @ gL if gL is not None else None
        if gU is not None:
            t = gU.triu() @ U.mT
            gA = -t if gA is None else gA - t
        gA = solve_triangular(U1.mT, gA.tril(-1), upper=False, left=False)
        if gU is not None:
            gA = cat([gA + gU[..., :, :k].triu(), gU[..., :, k:]], -1)
        gA = solve_triangular(L.mT, gA, upper=True, left=True, unitriangular=True)
        if gU is None:
            gA = cat([gA, U.new_zeros(tuple(U.shape[:-1]) + (n - k,))], -1)  # zeros_like(U2)
        return P @ gA
    L1 = L[..., :k, :]  # tall: L = (L1 ; L2)
    gA = gU @ U.mT if gU is not None else None
    if gL is not None:
        t = L.mT @ gL.tril(-1)
        gA = -t if gA is None else gA - t
    gA = solve_triangular(L1.mT, gA.triu(), upper=True, left=True, unitriangular=True)
    if gL is not None:
        gA = cat([gA + gL[..., :k, :].tril(-1), gL[..., k:, :]], -2)
    gA = solve_triangular(U.mT, gA, upper=False, left=False)
    if gL is None:
        gA = cat([gA, L.new_zeros(tuple(L.shape[:-2]) + (m - k, k))], -2)  # zeros_like(L2)
    return P @ gA


class LinalgLuFactorExBackward0(TensorRule):
    """PyTorch's ``lu_factor_ex_backward``: ``linalg_lu_backward`` of the unpacked factors
    with the packed gradient's first ``k`` columns as ``gL`` and first ``k`` rows as
    ``gU``."""

    def rule(self, g, LU, pivots):
        m, n = LU.shape[-2], LU.shape[-1]
        k = min(m, n)
        P, L, U = lu_unpack(LU, pivots)
        return (lu_backward(g[..., :, :k], g[..., :k, :], P, L, U),)


class LinalgLuBackward0(TensorRule):
    """``linalg.lu``'s rule: ``linalg_lu_backward`` of ``(gL, gU)``; ``P`` has none."""

    n_outputs = 2

    def rule(self, g, L, P, U):
        gL, gU = g
        return (lu_backward(gL, gU, P, L, U),)


class LinalgLuSolveBackward0(TensorRule):
    """PyTorch's rules of ``linalg.lu_solve``: ``gB = lu_solve(LU, pivots, g, left,
    not adjoint)``; ``gLU`` by ``linalg_lu_solve_LU`` (two triangular solves with the
    unpacked factors)."""

    def rule(self, g, X, LU, pivots):
        left, adjoint = self.left, self.adjoint
        gB = linalg_lu_solve(LU, pivots, g, left=left, adjoint=not adjoint) \
            if self.next[1] else None
        gLU = None
        if self.next[0]:
            P, L, U = lu_unpack(LU, pivots)
            if left != adjoint:
                gR = solve_triangular(U.mT, -((g if left else g.mT) @ (X.mT if left else X)),
                                      upper=False)
                gL = solve_triangular(L.mT, gR @ U.mT, upper=True, left=True,
                                      unitriangular=True).tril(-1)
                gLU = gL + gR.triu()
            else:
                gR = -(P.mT @ (X if left else X.mT) @ (g.mT if left else g) @ P)
                gR = solve_triangular(L.mT, gR, upper=True, left=False, unitriangular=True)
                gU = solve_triangular(U.mT, L.mT @ gR, upper=False, left=False).triu()
                gLU = gR.tril(-1) + gU
        return gLU, gB


# ---------------------------------------------------------------------- ops
@op("lu_unpack")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` with ``A = P L U`` from ``lu_factor``'s results."""
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    batch = tuple(LU_data.shape[:-2])
    empty = factories.zeros((0,), dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:  # any dtype, as PyTorch's (bool: the unit diagonal is an or)
        eye = factories.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        low = LU_data[..., :, :k].tril(-1)
        L = low.logical_or(eye) if LU_data.dtype is _dt.bool_ else low + eye
        U = LU_data[..., :k, :].triu()
    else:
        L = U = empty
    if unpack_pivots:
        perms = _permutation(LU_pivots, m)
        eye = [[0.0] * m for _ in range(m)]
        mats = []
        for perm in perms:
            P = [row[:] for row in eye]
            for i, r in enumerate(perm):
                P[r][i] = 1.0
            mats.append(P)
        P = factories.tensor(mats, dtype=LU_data.dtype, device=LU_data.device).reshape(
            *batch, m, m)
    else:
        P = empty
    return _UNPACK(P, L, U)


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """``X`` with ``A X = B`` (or ``X A = B``, or with ``A^H``) from ``lu_factor``'s
    factors: the row swaps, then two triangular solves; the gradients by PyTorch's rules
    (``linalg_lu_grad``)."""
    D.check_matrix("linalg.lu_solve", LU, square=True)
    if B.ndim < 2:
        raise ShapeError("linalg.lu_solve: Expected B to have at least 2 dimensions, but it "
                         f"has {B.ndim}")
    n = LU.shape[-1]
    batch = broadcast_shapes("linalg.lu_solve", tuple(LU.shape[:-2]), tuple(B.shape[:-2]),
                             tuple(pivots.shape[:-1]))
    if tuple(LU.shape[:-2]) != batch:
        LU = LU.expand(*batch, n, n)
    if tuple(pivots.shape[:-1]) != batch:
        pivots = pivots.expand(*batch, pivots.shape[-1])
    if tuple(B.shape[:-2]) != batch:
        B = B.expand(*batch, *B.shape[-2:])
    with no_grad():
        X = _lu_solve_values(LU.detach(), pivots, B.detach(), left, adjoint)
    if _grad_state.enabled and (LU._rg or B._rg):
        node = LinalgLuSolveBackward0()
        node.left, node.adjoint = left, adjoint
        record(X, node, (LU, B), (OUTPUT, LU, pivots))
    return X


def _lu_solve_values(LU, pivots, B, left, adjoint):
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _lu_solve_values(LU, pivots, B.transpose(-2, -1), True, not adjoint) \
            .transpose(-2, -1)
    m = LU.shape[-1]
    if B.shape[-2] != m:
        raise ShapeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                         f"AX = B ({m}x{m} and {B.shape[-2]}x{B.shape[-1]})")
    if not adjoint:  # A = P L U: X = U^-1 L^-1 P^T B
        y = solve_triangular(LU, _apply_perm(B, pivots, m), upper=False, unitriangular=True)
        return solve_triangular(LU, y, upper=True)
    # A^T = U^T L^T P^T: X = P L^-T U^-T B
    Lt = LU.transpose(-2, -1)
    y = solve_triangular(Lt, B, upper=False)  # U^T is lower triangular
    y = solve_triangular(Lt, y, upper=True, unitriangular=True)  # L^T: unit upper
    return _apply_perm(y, pivots, m, inverse=True)


@op("lu_solve", method="lu_solve")
def lu_solve(b, LU_data, LU_pivots):
    """``torch.lu_solve(b, LU_data, LU_pivots)`` (the older argument order)."""
    return linalg_lu_solve(LU_data, LU_pivots, b)
