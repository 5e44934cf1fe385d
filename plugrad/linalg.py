"""``plugrad.linalg``: PyTorch's ``torch.linalg`` (names, signatures, defaults, errors).

The factorisations are optional backend kernels (NumPy's and CuPy's ``linalg``, the
reference backend's plain Python); on a backend without one, the op raises
:class:`NotImplementedError` naming the op and the backend. A matrix the factorisation
cannot handle raises :class:`LinAlgError`, a RuntimeError, as in PyTorch.
"""
from plugrad.core.api import matmul  # plugrad.matmul itself (with out=)
from plugrad.core.ops.linalg_decomp import (LinAlgError, cholesky, det, eigh, inv, qr, slogdet,
                                            solve, svd, svdvals)
from plugrad.core.ops.linalg_extra import (cond, cross, eigvalsh, matrix_norm, matrix_power,
                                           matrix_rank, multi_dot, norm, pinv, solve_triangular,
                                           vecdot, vector_norm)

from plugrad.core.ops.linalg_lu import (cholesky_ex, householder_product, inv_ex,
                                       linalg_diagonal as diagonal, linalg_lu as lu,
                                       linalg_lu_solve as lu_solve, linalg_vander as vander,
                                       lstsq, lu_factor, lu_factor_ex, matrix_exp, solve_ex,
                                       tensorinv, tensorsolve)

__all__ = ["LinAlgError", "cholesky", "cond", "cross", "det", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr",
           "slogdet", "solve", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm",
           "cholesky_ex", "householder_product", "inv_ex", "diagonal", "lu", "lu_solve",
           "vander", "lstsq", "lu_factor", "lu_factor_ex", "matrix_exp", "solve_ex",
           "tensorinv", "tensorsolve"]
