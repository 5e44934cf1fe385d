"""``plugrad.linalg``: PyTorch's ``torch.linalg`` (names, signatures, defaults, errors).

The factorisations are optional backend kernels (NumPy's and CuPy's ``linalg``, the
reference backend's plain Python); on a backend without one, the op raises
:class:`NotImplementedError` naming the op and the backend. A matrix the factorisation
cannot handle raises :class:`LinAlgError`, a RuntimeError, as in PyTorch.
"""
from plugrad.core.api import matmul  # plugrad.matmul itself (with out=)
from plugrad.core.ops.linalg_decomp import (LinAlgError, cholesky, det, eigh, inv, pinv, qr,
                                            slogdet, solve, svd, svdvals)
from plugrad.core.ops.linalg_extra import (cross, eigvalsh, matrix_norm, matrix_power,
                                           multi_dot, norm, vecdot, vector_norm)

__all__ = ["LinAlgError", "cholesky", "cross", "det", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve",
           "svd", "svdvals", "vecdot", "vector_norm"]
