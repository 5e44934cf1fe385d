"""PyTorch's LAPACK at special values, for the factorisations of ``linalg_decomp``: where a
matrix is not finite (or huge, or singular) the results are those of MKL's getrf/getrs,
potrf and gesdd, which NumPy's driver and the reference backend do not reproduce; these
checks pick the LU composite (``linalg_lu_steps``) or PyTorch's error there.
"""
from __future__ import annotations

import math

from plugrad.core import dtypes as _dt
from plugrad.core import factories
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops.linalg_lu_steps import (_apply_perm, _lu_steps, _substitute, lu_substitute,
                                              triangle)
from plugrad.core.ops.select import where
from plugrad.core.tensor import _wrap


def _as(A, data):
    return _wrap(data, A.dtype, A.device, A._k)


class LinAlgError(RuntimeError):
    """A matrix the factorisation cannot handle (singular, not positive-definite): PyTorch's
    ``torch.linalg.LinAlgError``, a RuntimeError."""


CHOLESKY_FAILURE = ("The factorization could not be completed because the input is not "
                    "positive-definite (the leading minor of order {order} is not "
                    "positive-definite).")


def _huge(A) -> float:
    """About the square root of the dtype's maximum: entries past it can overflow."""
    return 1.3e154 if A.dtype.name == "float64" else 1.8e19


def _lu_solve_special(A, B):
    """``A^-1 B`` by the LU composite and two substitutions when an input is not finite (or
    ``A`` huge enough for its elimination to overflow):
    PyTorch's getrf/getrs (MKL) meet NaN and inf in that order, which NumPy's driver does
    not; None where a pivot is exactly zero (the kernel raises for it)."""
    with no_grad():
        if bool(A.isfinite().all()) and bool(B.isfinite().all()) and not (
                A.numel() and float(A.abs().max()) > _huge(A)):
            return None
        lu, piv, info = _lu_steps(A.detach())
        if bool((info != 0).any()):
            return None
        return lu_substitute(lu, piv, B.detach())._data


def _lu_solve_adjoint_special(A, G):
    """``A^-T G`` by ``A``'s own LU factors (getrs' transposed solve: ``P L^-T U^-T G``)
    when an input is not finite or ``A`` huge, as PyTorch's ``linalg.solve`` backward
    solves with its forward's factors (a fresh factorisation of ``A^T`` spreads NaN
    otherwise); None elsewhere and at a zero pivot."""
    with no_grad():
        if bool(A.isfinite().all()) and bool(G.isfinite().all()) and not (
                A.numel() and float(A.abs().max()) > _huge(A)):
            return None
        lu, piv, info = _lu_steps(A.detach())
        if bool((info != 0).any()):
            return None
        y = _substitute(triangle(lu, True, False).mT, G.detach(), False, False)
        y = _substitute(triangle(lu, False, True).mT, y, True, True)
        return _apply_perm(y, piv, lu.shape[-1], inverse=True)._data


def _special(A, logabs) -> bool:
    """Whether a matrix of ``A`` is not finite, large enough for its elimination or the
    product of its pivots to overflow, or gives a non-finite or huge ``log|det|`` (subnormal
    pivots, where the drivers' roundings part): there PyTorch's
    results are those of its LU factors (the product of U's diagonal, inf where it
    overflows), which NumPy's LAPACK driver does not reproduce (its sign ignores a NaN
    pivot, its factors meet inf/NaN in another order, its det is exp(log|det|))."""
    with no_grad():
        if not (bool(_as(A, logabs).isfinite().all()) and bool(A.isfinite().all())):
            return True
        big = _huge(A)
        if A.numel() and float(_as(A, logabs).abs().max()) > math.log(big):  # subnormals
            return True
        return A.numel() > 0 and float(A.abs().max()) > big


def _lu_parts(A):
    """``(diag(U), det(P))`` of the LU factors with partial pivoting (MKL's special values,
    see ``linalg_lu``) that PyTorch's det/slogdet take: of ``A^T`` when ``A`` is contiguous
    (its LAPACK call reads the row-major memory as the column-major transpose, as
    ``det(A^T) == det(A)``), else of ``A``; detached."""
    with no_grad():
        lu, piv, _ = _lu_steps(A.detach().mT if A.is_contiguous() else A.detach())
        n = A.shape[-1]
        steps = factories.arange(1, n + 1, dtype=piv.dtype, device=A.device)
        odd = (piv != steps).sum(-1) % 2
        return lu.diagonal(0, -2, -1), 1.0 - 2.0 * odd.to(A.dtype)


def _nan_pivot(name, A, L) -> None:
    """LAPACK's ``potrf`` stops at a pivot that is NaN as at one that is not positive (its
    ``ajj <= 0 or isnan(ajj)``); NumPy's driver and the reference backend carry the NaN on.
    A NaN of the lower triangle always reaches the diagonal, so the first NaN there is the
    order PyTorch reports."""
    n = A.shape[-1]
    with no_grad():
        d = L.diagonal(0, -2, -1).isnan()
        if not n or not bool(d.any()):
            return
        flat = d.reshape(-1, n)
        b = int(flat.any(-1).to(_dt.int64).argmax())
        order = int(flat[b].to(_dt.int64).argmax()) + 1
    where = f"(Batch element {b}): " if A.ndim > 2 else ""
    raise LinAlgError(f"{name}: {where}" + CHOLESKY_FAILURE.format(order=order))


def _nonfinite(A):
    """Per matrix of ``A``: ``(has NaN, has inf)`` (batch-shaped bool tensors), or None when
    every entry is finite."""
    with no_grad():
        if not A.numel() or bool(A.isfinite().all()):
            return None
        flat = A.reshape(*A.shape[:-2], -1)
        return flat.isnan().any(-1), flat.isinf().any(-1)


def _nan_where(bad, *outs):
    """NaN for the matrices ``bad`` flags (LAPACK's results there, on every backend)."""
    with no_grad():
        return tuple(x if x is None else
                     _as(x, where(bad.reshape(*bad.shape, *([1] * (x.ndim - bad.ndim))),
                                   math.nan, x)._data) for x in outs)


def _svd_input_check(A):
    """PyTorch's gesdd refuses a NaN (LinAlgError naming the batch element) and gives NaN
    for a matrix with an infinity; NumPy's driver raised its own error, the reference
    backend computed."""
    bad = _nonfinite(A)
    if bad is None:
        return None
    nan, inf = bad
    if bool(nan.any()):
        b = int(nan.reshape(-1).to(_dt.int64).argmax()) if A.ndim > 2 else None
        where_ = f"(Batch element {b}): " if b is not None else ""
        raise LinAlgError(f"linalg.svd: {where_}The algorithm failed to converge because the "
                          f"input matrix contained non-finite values.")
    return inf
