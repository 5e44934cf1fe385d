"""The backend contract, continued: the optional linear-algebra factorisations behind
``plugrad.linalg`` (solve, slogdet, Cholesky, QR, symmetric eigendecomposition, SVD).

Unlike the other optional kernels these have no composite written in primitives: a
factorisation is an iterative numerical algorithm, not an expression. A backend that does not
override one raises :class:`NotImplementedError` naming the kernel and the backend (the core
adds the op), so a missing kernel is a clear error and never a wrong answer. NumPy and CuPy
share one implementation over ``xp.linalg``; the reference backend's is plain Python.

Conventions, beyond :mod:`plugrad.backends.contract`'s: inputs are float32 or float64
arrays of at least 2 dims, the last two the matrix, the leading ones a batch (several
operands share one batch shape: the core has broadcast them); results are in the input's
dtype. Where the problem has no solution (an exactly singular matrix, a matrix that is not
positive-definite) a kernel raises :class:`LinAlgKernelError` rather than returning
infinities or NaN. The signs of eigenvectors and singular vectors are whatever the algorithm
gives (any valid choice); eigenvalues ascend, singular values descend.
"""
from __future__ import annotations


class LinAlgKernelError(ArithmeticError):
    """A factorisation that cannot be completed. ``batch``: the flat index of the first
    failing matrix of the batch (None for an unbatched input or if unknown); ``order``: the
    1-based index of the zero pivot (solve) or of the leading minor that is not
    positive-definite (Cholesky), or None if unknown."""

    def __init__(self, message: str, batch: int | None = None, order: int | None = None):
        super().__init__(message)
        self.batch, self.order = batch, order


def _missing(backend, kernel: str):
    return NotImplementedError(
        f"the {backend.name!r} backend (device type {backend.device_type!r}) has no "
        f"{kernel!r} kernel: it is an optional linear-algebra kernel without a composite "
        f"fallback (see plugrad/backends/contract_linalg.py); move the tensor to a device "
        f"whose backend has it, e.g. .cpu()")


class LinalgKernels:
    """The spec of the optional linear-algebra kernels (no composite: missing is an error)."""

    def linalg_solve(self, a, b):
        """``x`` with ``a @ x == b`` for ``a`` ``(..., n, n)`` and ``b`` ``(..., n, k)`` (one
        batch shape), by LU with partial pivoting. An exactly zero pivot raises
        :class:`LinAlgKernelError` (``order``: its 1-based index where known)."""
        raise _missing(self, "linalg_solve")

    def linalg_slogdet(self, a):
        """``(sign, logabsdet)`` of ``a`` ``(..., n, n)``, each of the batch shape: the sign
        (1, -1, or 0 for a singular matrix, whose ``logabsdet`` is ``-inf``) and the natural
        log of ``|det(a)|``. ``n == 0`` gives ``(1, 0)``."""
        raise _missing(self, "linalg_slogdet")

    def linalg_cholesky(self, a):
        """The lower-triangular ``l`` (positive diagonal, zeros above) with ``l @ l.T == a``
        for a symmetric positive-definite ``a`` ``(..., n, n)``; only the lower triangle of
        ``a`` is read. Not positive-definite raises :class:`LinAlgKernelError` (``order``:
        the leading minor's order where known)."""
        raise _missing(self, "linalg_cholesky")

    def linalg_qr(self, a, complete: bool):
        """``(q, r)`` with ``q @ r == a`` for ``a`` ``(..., m, n)``, ``q`` with orthonormal
        columns and ``r`` upper triangular: ``q`` ``(..., m, k)``, ``r`` ``(..., k, n)``
        with ``k = min(m, n)``, or ``k = m`` when ``complete``."""
        raise _missing(self, "linalg_qr")

    def linalg_eigh(self, a, upper: bool):
        """``(w, v)``: the eigenvalues ``(..., n)`` in ascending order and orthonormal
        eigenvectors ``(..., n, n)`` (columns) of the symmetric matrix whose lower (or,
        with ``upper``, upper) triangle is that of ``a``; the other triangle is not read."""
        raise _missing(self, "linalg_eigh")

    def linalg_svd(self, a, full_matrices: bool, compute_uv: bool):
        """``(u, s, vh)`` with ``u @ diag(s) @ vh == a`` for ``a`` ``(..., m, n)``: ``s``
        ``(..., k)``, ``k = min(m, n)``, non-negative and descending; ``u`` ``(..., m, k)``
        and ``vh`` ``(..., k, n)`` with orthonormal columns/rows (``(m, m)`` and ``(n, n)``
        when ``full_matrices``). Without ``compute_uv``, ``u`` and ``vh`` are None."""
        raise _missing(self, "linalg_svd")
