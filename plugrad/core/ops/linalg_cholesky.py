"""``cholesky_solve`` and ``cholesky_inverse`` with PyTorch's gradient rules.

The forward reads only the factor's triangle (two solves with it, as LAPACK's
``potrs``/``potri``). The gradients are PyTorch's formulas (``cholesky_solve_backward``,
``cholesky_inverse_backward`` in ``FunctionsManual.cpp``): the gradient of ``(L L^T)^-1`` in
the whole of ``L``, not only its triangle, so a factor's other triangle gets one too, as in
PyTorch. Written with ``F.<op>`` calls, they serve ``create_graph`` as well.
"""
from __future__ import annotations

from plugrad.core.autograd.node import OUTPUT, KeepsOutput
from plugrad.core.autograd.record import record
from plugrad.core.errors import DTypeError, ShapeError, broadcast_shapes
from plugrad.core.grad_mode import _state, no_grad
from plugrad.core.ops import linalg_decomp as D
from plugrad.core.ops.select import where
from plugrad.core.tensor import Tensor

mT = D.mT


def _triangle(L, upper):
    """``L``'s upper or lower triangle (the other set to 0, NaN and inf included)."""
    n = L.shape[-1]
    mask = D._const(L, [[(j >= i) if upper else (j <= i) for j in range(n)]
                        for i in range(n)]).to(bool) if n else None
    return L if mask is None else where(mask, L, 0.0)


def _solve_factored(F, T, G, upper):
    """``A^-1 G`` for ``A = T T^T`` (``T^T T`` with ``upper``), two solves."""
    if upper:
        return F.linalg_solve(T, F.linalg_solve(mT(F, T), G))
    return F.linalg_solve(mT(F, T), F.linalg_solve(T, G))


class CholeskySolveBackward0(KeepsOutput):
    """``gB = A^-1 g``; ``gL = -(C + C^T) L`` (``-L (C + C^T)`` with ``upper``) with
    ``C = gB X^T``: PyTorch's rule, in the whole of ``L``."""

    def grad(self, F, g, T, L, X):
        if getattr(F, "tensors", False):  # create_graph: gB's own gradient is this rule too
            gB = cholesky_solve(g, L, self.upper)
        else:
            gB = _solve_factored(F, T, g, self.upper)
        gL = None
        if self.next[1]:
            c = F.matmul(gB, mT(F, X))
            c = F.add(c, mT(F, c))
            gL = F.neg(F.matmul(L, c) if self.upper else F.matmul(c, L))
        return (gB if self.next[0] else None), gL


class CholeskyInverseBackward0(KeepsOutput):
    """``gL = -(Y (g + g^T) Y) L`` (``-L (...)`` with ``upper``), ``Y`` the inverse: PyTorch's
    rule, in the whole of ``L``."""

    def grad(self, F, g, L, Y):
        c = F.matmul(Y, F.matmul(F.add(g, mT(F, g)), Y))
        return (F.neg(F.matmul(L, c) if self.upper else F.matmul(c, L)),)


def _solve_triangles(B, T, upper):
    """The two solves of the rule's plain binding (``linalg_solve`` kernels on the
    triangle), so that both bindings of the rule agree bit for bit."""
    if upper:
        return D.solve(T, D.solve(T.mT, B))
    return D.solve(T.mT, D.solve(T, B))


def cholesky_solve(B, L, upper=False):
    """``X`` with ``A X = B`` for ``A = L L^T`` (``U^T U`` with ``upper``), batch dims
    broadcast."""
    for name, t in (("input", B), ("input2", L)):
        if not isinstance(t, Tensor):
            raise TypeError(f"cholesky_solve(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    if B.ndim < 2 or L.ndim < 2:
        raise ShapeError(f"cholesky_solve: b should have at least 2 dimensions, but has "
                         f"{B.ndim} dimensions instead" if B.ndim < 2 else
                         f"cholesky_solve: u should have at least 2 dimensions, but has "
                         f"{L.ndim} dimensions instead")
    if B.dtype is not L.dtype:
        raise DTypeError(f"cholesky_solve: Expected b and A to have the same dtype, but found "
                         f"b of type {B.dtype.name} and A of type {L.dtype.name} instead.")
    n = L.shape[-1]
    if L.shape[-2] != n or B.shape[-2] != n:
        raise ShapeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                         f"{L.shape[-2]} by {n} but each b matrix is {B.shape[-2]} by "
                         f"{B.shape[-1]}")
    batch = broadcast_shapes("cholesky_solve", tuple(B.shape[:-2]), tuple(L.shape[:-2]))
    if tuple(B.shape[:-2]) != batch:
        B = B.expand(*batch, *B.shape[-2:])
    if tuple(L.shape[:-2]) != batch:
        L = L.expand(*batch, n, n)
    recording = _state.enabled and (B._rg or L._rg)
    T = _triangle(L, upper)
    with no_grad():
        X = _solve_triangles(B.detach(), T.detach(), upper)
    if recording:
        node = CholeskySolveBackward0()
        node.upper = upper
        record(X, node, (B, L), (T, L, OUTPUT))
    return X


def cholesky_inverse(L, upper=False):
    """The inverse of ``L L^T`` (``U^T U`` with ``upper``) from its Cholesky factor."""
    D.check_matrix("cholesky_inverse", L, square=True)
    with no_grad():
        Lc = L.detach()
        Y = _solve_triangles(D.eye_like(Lc).expand(Lc.shape), _triangle(Lc, upper), upper)
    if _state.enabled and L._rg:
        node = CholeskyInverseBackward0()
        node.upper = upper
        record(Y, node, (L,), (L, OUTPUT))
    return Y
