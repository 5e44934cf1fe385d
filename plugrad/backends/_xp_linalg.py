"""The linear-algebra kernels (:mod:`plugrad.backends.contract_linalg`) on ``self.xp.linalg``,
written once for NumPy and CuPy (LAPACK / cuSOLVER underneath, batched).

``xp.linalg`` reports a failed factorisation by raising (NumPy always; CuPy inside
:meth:`_linalg_guard`); the batch element and pivot that failed are then found again on the
host, element by element. That path runs only on an error, so it may be slow.
"""
from __future__ import annotations

import contextlib
import numpy as np

from plugrad.backends.contract_linalg import LinAlgKernelError

_NULL = contextlib.nullcontext()


def _first_zero_pivot(m: np.ndarray) -> int | None:
    """1-based index of the first exactly zero pivot of LU with partial pivoting (LAPACK's
    ``getrf`` ``info``), or None."""
    m = np.array(m, dtype=np.float64)
    n = m.shape[0]
    for j in range(n):
        p = j + int(np.argmax(np.abs(m[j:, j])))
        if m[p, j] == 0:
            return j + 1
        m[[j, p]] = m[[p, j]]
        m[j + 1:, j:] -= np.outer(m[j + 1:, j] / m[j, j], m[j, j:])
    return None


def _first_bad_minor(m: np.ndarray) -> int | None:
    """Order of the first leading minor of ``m`` that is not positive-definite, or None."""
    for k in range(1, m.shape[0] + 1):
        try:
            np.linalg.cholesky(np.asarray(m[:k, :k], dtype=np.float64))
        except np.linalg.LinAlgError:
            return k
    return None


class XpLinalgKernels:
    """``linalg_*`` kernels over ``self.xp`` (a mixin of :class:`XpKernels`)."""

    def _linalg_guard(self):
        """A context in which ``xp.linalg`` raises on a failed factorisation (CuPy's
        override turns its error state on; NumPy always raises)."""
        return _NULL

    def _locate(self, a, fn, find_order):
        """The :class:`LinAlgKernelError` for the first matrix of ``a`` that ``fn`` fails on."""
        host = np.asarray(self.to_numpy(a))
        flat = host.reshape((-1,) + host.shape[-2:])
        batch = None
        for i, m in enumerate(flat):
            try:
                fn(np.asarray(m, dtype=np.float64))
            except np.linalg.LinAlgError:
                batch = i
                break
        if batch is None:  # failed in the input's precision only: the first element
            batch = 0
        order = find_order(flat[batch]) if flat.shape[0] else None
        return LinAlgKernelError("factorisation failed",
                                 batch if host.ndim > 2 else None, order)

    def linalg_solve(self, a, b):
        try:
            with self._linalg_guard():
                return self.xp.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            raise self._locate(a, np.linalg.inv, _first_zero_pivot) from None

    def linalg_slogdet(self, a):
        sign, logabs = self.xp.linalg.slogdet(a)  # NumPy gives scalars for one matrix
        return self.xp.asarray(sign, dtype=a.dtype), self.xp.asarray(logabs, dtype=a.dtype)

    def linalg_cholesky(self, a):
        try:
            with self._linalg_guard():
                return self.xp.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            raise self._locate(a, np.linalg.cholesky, _first_bad_minor) from None

    def linalg_qr(self, a, complete: bool):
        q, r = self.xp.linalg.qr(a, mode="complete" if complete else "reduced")
        return q, r

    def linalg_eigh(self, a, upper: bool):
        w, v = self.xp.linalg.eigh(a, UPLO="U" if upper else "L")
        return w, v

    def linalg_svd(self, a, full_matrices: bool, compute_uv: bool):
        if not compute_uv:
            return None, self.xp.linalg.svd(a, compute_uv=False), None
        u, s, vh = self.xp.linalg.svd(a, full_matrices=full_matrices)
        return u, s, vh
