"""``plugrad.linalg`` built from other ops: the norms, ``matrix_power``, ``multi_dot``,
``cross``, ``vecdot``, ``eigvalsh``, and PyTorch's top-level spellings (``torch.det``,
``torch.inverse``, ``torch.svd`` with its own convention, ...) with their Tensor methods.

Each is an exact composition of differentiable ops (the factorisations of
:mod:`plugrad.core.ops.linalg_decomp` among them), so gradients need no rule of their own.
"""
from __future__ import annotations

import math
from collections import namedtuple

from plugrad.core import factories
from plugrad.core.autograd.node import OUTPUT, KeepsOutput
from plugrad.core.autograd.record import record
from plugrad.core.errors import DTypeError, ShapeError, broadcast_shapes, c_dtype_name
from plugrad.core.grad_mode import _state as _grad_state
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops import linalg_decomp as D
from plugrad.core.ops.declare import op
from plugrad.core.ops.join import cat
from plugrad.core.ops.linalg import matmul
from plugrad.core.ops.linalg_lu_steps import _substitute
from plugrad.core.ops.products import cross_expanded
from plugrad.core.ops.select import where
from plugrad.core.ops.statistics import norm as _pnorm
from plugrad.core.ops.tensor_rule import TensorRule
from plugrad.core.tensor import Tensor, _wrap_dim

svd_result = namedtuple("svd", ["U", "S", "V"])
qr_result = namedtuple("qr", ["Q", "R"])


def _check_float(name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{name}: Expected a floating point or complex tensor as input. "
                         f"Got {c_dtype_name(x.dtype)}")


# ---------------------------------------------------------------------- norms
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``sum(|x|^ord)^(1/ord)`` over ``dim`` (all dims when None); ``ord`` inf, -inf, 0 too."""
    _check_float("linalg.vector_norm", x)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Expected a numeric ord, got {ord!r}")
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(dim, int):
        dim = (dim,)
    return _pnorm(x, float(ord), dim, keepdim)


def _matrix_dims(name, A, dim):
    if A.ndim < 2:
        raise ShapeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {dim}")
    d0, d1 = (_wrap_dim(d, A.ndim, name) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Frobenius, nuclear, spectral (2, -2) and induced 1 / inf norms (and their -1 / -inf
    minima) of the matrices spanning ``dim``."""
    name = "linalg.matrix_norm"
    _check_float(name, A)
    d0, d1 = _matrix_dims(name, A, dim)
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return _pnorm(A, 2.0, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        moved = A.movedim((d0, d1), (-2, -1))
        s = D.svdvals(moved)
        r = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            for d in sorted((d0, d1)):
                r = r.unsqueeze(d)
        return r
    if ord in (1, -1, math.inf, -math.inf):
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(inner, keepdim=True)
        r = sums.amax(outer, keepdim=True) if ord > 0 else sums.amin(outer, keepdim=True)
        return r if keepdim else r.squeeze((d0, d1))
    raise RuntimeError(f"{name}: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm over one dim (or all), a matrix norm over two (PyTorch's dispatch)."""
    _check_float("linalg.norm", A)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got {list(dims)}")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                       f"1D or 2D. Got {A.ndim}D.")


# ---------------------------------------------------------------------- pinv
class LinalgPinvBackward0(KeepsOutput):
    """PyTorch's ``pinv_backward``: the derivative of the pseudo-inverse of constant rank."""

    def grad(self, F, g, A, P):
        m, n = A.shape[-2], A.shape[-1]
        Ph, gh = D.mT(F, P), D.mT(F, g)
        if m <= n:
            K = F.matmul(gh, P)
            KPh = F.matmul(K, Ph)
            out = F.add(F.sub(KPh, D.mT(F, F.matmul(P, K))),
                        F.sub(F.matmul(F.matmul(Ph, P), F.sub(gh, F.matmul(K, A))),
                              F.matmul(F.matmul(A, P), KPh)))
        else:
            K = F.matmul(P, gh)
            PhK = F.matmul(Ph, K)
            out = F.add(F.sub(F.matmul(F.matmul(F.sub(gh, F.matmul(A, K)), P), Ph),
                              D.mT(F, F.matmul(K, P))),
                        F.sub(PhK, F.matmul(F.matmul(PhK, P), A)))
        return (out,)


def _tolerances(A, atol, rtol):
    """PyTorch's defaults: ``rtol = eps * max(m, n)`` unless a positive ``atol`` is given."""
    eps = 2.0 ** -23 if A.dtype.name == "float32" else 2.0 ** -52
    if rtol is None:
        rtol = 0.0 if (atol is not None and _positive(atol)) else eps * max(A.shape[-2:])
    return 0.0 if atol is None else atol, rtol


def _kept(s, atol, rtol):
    """Which of the magnitudes ``s`` (..., k) exceed ``max(atol, rtol * max(s))``."""
    big = s.amax(-1, keepdim=True) if s.shape[-1] else s.sum(-1, keepdim=True)
    atol = atol.unsqueeze(-1) if isinstance(atol, Tensor) else _full_like(big, atol)
    rtol = rtol.unsqueeze(-1) if isinstance(rtol, Tensor) else rtol
    return s > (big * rtol).maximum(atol)


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """``A^+`` from the SVD (or, ``hermitian``, the eigendecomposition): singular values at
    most ``max(atol, rtol * largest)`` count as zero."""
    D.check_matrix("linalg.pinv", A, square=hermitian)
    atol, rtol = _tolerances(A, atol, rtol)
    with no_grad():
        if hermitian:
            sv, V = D.eigh(A)
            left, right = V, V
        else:
            left, sv, right = D.svd(A, full_matrices=False)
            right = right.mT
        keep = _kept(sv.abs(), atol, rtol)
        inv_s = (1.0 / sv.where(keep, _full_like(sv, 1.0))).where(keep, _full_like(sv, 0.0))
        P = (right * inv_s.unsqueeze(-2)) @ left.mT
    P = D.wrap(A, P._data)
    if D._recording(A):
        record(P, LinalgPinvBackward0(), (A,), (A, OUTPUT))
    return P


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """How many singular values (eigenvalue magnitudes, ``hermitian``) exceed the tolerance
    of :func:`pinv`; int64."""
    D.check_matrix("linalg.matrix_rank", A, square=hermitian)
    atol, rtol = _tolerances(A, atol, rtol)
    with no_grad():
        s = D.eigh(A).eigenvalues.abs() if hermitian else D.svdvals(A)
        return _kept(s, atol, rtol).sum(-1)


def cond(A, p=None):
    """The condition number in the norm ``p``: ``s_max / s_min`` for ``p`` None or 2 (-2:
    the inverse), else ``norm(A, p) * norm(inv(A), p)``, ``inf`` for a singular matrix."""
    D.check_matrix("linalg.cond", A)
    if p in (None, 2, -2):
        s = D.svdvals(A)
        big, small = s.amax(-1), s.amin(-1)
        return big / small if p != -2 else small / big
    D.check_matrix("linalg.cond", A, square=True)
    if p == "nuc":  # sum(s) sum(1/s), as PyTorch: a singular matrix is finite (or NaN)
        with no_grad():
            nan = A.isnan().reshape(-1, A.shape[-2] * A.shape[-1]).any(-1)
            if nan.numel() and bool(nan.any()):
                b = int(nan.to(bool).nonzero()[0, 0]) if A.ndim > 2 else None
                where_ = f"(Batch element {b}): " if b is not None else ""
                raise D.LinAlgError(f"linalg.svd: {where_}The algorithm failed to converge "
                                    f"because the input matrix contained non-finite values.")
        try:
            s = D.svdvals(A)
            r = s.sum(-1) * s.reciprocal().sum(-1)
            with no_grad():  # an inf entry: NaN on every backend, as PyTorch's
                inf = A.isinf().reshape(*A.shape[:-2], -1).any(-1)
            return where(inf, math.nan, r)
        except (D.LinAlgError, ValueError):  # no convergence (NumPy's LinAlgError is a
            # ValueError): NaN, as PyTorch's cond at non-finite input
            if A.ndim == 2:
                return _full_like(A.sum((-2, -1)), math.nan)
            flat = A.reshape(-1, *A.shape[-2:])
            return _stack([cond(a, p) for a in flat]).reshape(A.shape[:-2])
    try:
        r = matrix_norm(A, p) * matrix_norm(D.inv(A), p)
        return where(r.isnan(), math.inf, r)  # PyTorch's inf for NaN (non-finite input)
    except D.LinAlgError:  # inf for the singular matrices, the others as they are
        if A.ndim == 2:
            return _full_like(A.sum((-2, -1)), math.inf)
        flat = A.reshape(-1, *A.shape[-2:])
        return _stack([cond(a, p) for a in flat]).reshape(A.shape[:-2])


def _stack(ts):
    return cat([t.unsqueeze(0) for t in ts], 0)


class LinalgSolveTriangularBackward0(TensorRule):
    """``gB = A^-T g`` (the other triangle's solve), ``gA = -gB X^T`` (``-X^T gB`` when not
    ``left``) in ``A``'s triangle (without the diagonal when ``unitriangular``)."""

    def rule(self, g, A, X):
        upper, left, unit = self.upper, self.left, self.unitriangular
        gB = solve_triangular(A.mT, g, upper=not upper, left=left, unitriangular=unit)
        gA = None
        if self.next[0]:
            gA = -(gB @ X.mT) if left else -(X.mT @ gB)
            gA = gA.triu(int(unit)) if upper else gA.tril(-int(unit))
        return gA, (gB if self.next[1] else None)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """``X`` with ``A X = B`` (``X A = B``) reading only ``A``'s upper (lower) triangle, its
    diagonal taken as ones when ``unitriangular``; the gradient w.r.t. ``A`` is that
    triangle's, as PyTorch's."""
    D.check_matrix("linalg.solve_triangular", A, square=True)
    n = A.shape[-1]
    mask = [[((j >= i) if upper else (j <= i)) and not (unitriangular and i == j)
             for j in range(n)] for i in range(n)]
    with no_grad():  # (a where, not a product with the mask: the other triangle's inf or
        # NaN is not read)
        T = A.detach().where(factories.tensor(mask, device=A.device), 0.0) if n else \
            A.detach()
        if unitriangular:
            T = T + factories.eye(n, dtype=A.dtype, device=A.device)
    if B.ndim < 2:
        raise ShapeError(f"linalg.solve_triangular: The input tensor B must have at least 2 "
                         f"dimensions.")
    if B.dtype is not A.dtype:
        raise DTypeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                         f"but found A of type {c_dtype_name(A.dtype)} and B of type "
                         f"{c_dtype_name(B.dtype)} instead")
    batch = broadcast_shapes("linalg.solve_triangular", tuple(A.shape[:-2]),
                             tuple(B.shape[:-2]))
    if tuple(A.shape[:-2]) != batch:
        A, T = A.expand(*batch, n, n), T.expand(*batch, n, n)
    if tuple(B.shape[:-2]) != batch:
        B = B.expand(*batch, *B.shape[-2:])
    with no_grad():
        Td, Bd = T, B.detach()
        if n <= _SUBSTITUTE_UP_TO or not _finite(Td, Bd):
            if not left:  # X A = B  <=>  A^T X^T = B^T, the other triangle
                X = _substitute(Td.mT, Bd.mT, not upper, unitriangular).mT
            else:
                X = _substitute(Td, Bd, upper, unitriangular)
        else:
            X = D.solve(Td, Bd, left=left)
    if _grad_state.enabled and (A._rg or B._rg):  # PyTorch's rule (linalg_lu_grad)
        node = LinalgSolveTriangularBackward0()
        node.upper, node.left, node.unitriangular = upper, left, unitriangular
        record(X, node, (A, B), (A, OUTPUT))
    return X


#: up to this order (and whenever an input is not finite) a triangular system is solved by
#: substitution, as LAPACK's trsm: a NaN or inf meets only the entries that depend on it
#: (the LU solve's elimination multiplies it by the zeros of the other triangle)
_SUBSTITUTE_UP_TO = 32


def _finite(*ts) -> bool:
    with no_grad():
        return all(bool(t.isfinite().all()) for t in ts)


def _positive(x) -> bool:
    return bool((x > 0).all()) if isinstance(x, Tensor) else x > 0


def _full_like(t, value):
    return factories.full(tuple(t.shape), float(value), dtype=t.dtype, device=t.device)


# ---------------------------------------------------------------------- products
def matrix_power(A, n):
    """``A^n`` by repeated squaring; ``n == 0`` the identity, ``n < 0`` powers of ``inv(A)``."""
    name = "linalg.matrix_power"
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{name}(): argument 'n' must be int, not {type(n).__name__}")
    if A.ndim < 2:
        raise ShapeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"{name}: A must be batches of square matrices, but they are "
                         f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if n == 0:
        eye = factories.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        return eye.expand(*A.shape).clone()
    if n < 0:
        A, n = D.inv(A), -n
    # PyTorch's association (it decides inf / NaN when products overflow): A^3 is (A A) A,
    # higher powers multiply the result by the squares from the least significant bit up
    if n == 1:
        return A.clone()
    if n == 3:
        return matmul(matmul(A, A), A)
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def _chain_order(dims):
    """Split points of the cheapest product of matrices ``dims[i] x dims[i+1]``."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def multi_dot(tensors):
    """The product of a chain of matrices in its cheapest order (PyTorch's rules: the first
    may be a row vector, the last a column vector, the others 2-D)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vec, last_vec = tensors[0].ndim == 1, tensors[-1].ndim == 1
    for i, t in enumerate(tensors):
        want = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in want:
            kind = "1D or 2D" if len(want) == 2 else "2D"
            raise RuntimeError(f"multi_dot(): {'the first' if i == 0 else 'the last' if i == len(tensors) - 1 else f'tensor {i}'}"
                               f" tensor must be {kind} but got {t.ndim}D")
        if t.dtype is not tensors[0].dtype:
            raise DTypeError(f"multi_dot(): all tensors must have be the same dtype but "
                             f"tensor 0 is {tensors[0].dtype} and tensor {i} {t.dtype}")
    mats = list(tensors)
    if first_vec:
        mats[0] = mats[0].unsqueeze(0)
    if last_vec:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise ShapeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                             f"{tuple(mats[i].shape)} and {tuple(mats[i + 1].shape)} cannot "
                             f"be multiplied")
    split = _chain_order([m.shape[0] for m in mats] + [mats[-1].shape[1]])

    def product(i, j):
        if i == j:
            return mats[i]
        s = split[i][j]
        return matmul(product(i, s), product(s + 1, j))
    out = product(0, len(mats) - 1)
    if first_vec:
        out = out.squeeze(0)
    if last_vec:
        out = out.squeeze(-1)
    return out


def cross(input, other, *, dim=-1):
    """The 3-vector cross product along ``dim``, batch dims broadcast."""
    name = "linalg.cross"
    if input.dtype.name == "bool" or other.dtype.name == "bool":
        raise DTypeError(f"{name}: \"cross\" not implemented for 'Bool'")
    if input.ndim != other.ndim:
        raise RuntimeError(f"{name}: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, input.ndim, name)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"{name}: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    shape = broadcast_shapes(name, tuple(input.shape), tuple(other.shape))
    return cross_expanded(input.expand(*shape), other.expand(*shape), d)


def vecdot(x, y, *, dim=-1):
    """``sum(x * y, dim)`` (real tensors: no conjugation), batch dims broadcast."""
    _check_float("linalg.vecdot", x)
    return (x * y).sum(dim)


def eigvalsh(A, UPLO="L"):
    return D.eigh(A, UPLO).eigenvalues


# ---------------------------------------------------------------------- torch.* spellings
@op("det", method="det")
def det(A):
    return D.det(A)


@op("slogdet", method="slogdet")
def slogdet(A):
    return D.slogdet(A)


@op("logdet", method="logdet")
def logdet(A):
    """``log(det(A))``: NaN for a negative determinant, ``-inf`` for a singular matrix."""
    sign, logabs = D.slogdet(A)
    return logabs.where(sign >= 0, factories.full((), math.nan, dtype=A.dtype,
                                                  device=A.device))


@op("inverse", method="inverse")
def inverse(A):
    return D.inv(A)


@op("cholesky", method="cholesky")
def cholesky(A, upper=False):
    return D.cholesky(A, upper=upper, name="cholesky")


@op("qr", method="qr")
def qr(A, some=True):
    Q, R = D.qr(A, "reduced" if some else "complete")
    return qr_result(Q, R)


@op("svd", method="svd")
def svd(A, some=True, compute_uv=True):
    """PyTorch's older SVD: ``(U, S, V)`` with ``V`` (not ``V^H``), reduced when ``some``;
    without ``compute_uv``, ``U`` and ``V`` are zero-filled ``(m, m)`` and ``(n, n)``."""
    if not compute_uv:
        S = D.svdvals(A)
        m, n = A.shape[-2:]
        z = lambda k: factories.zeros(*A.shape[:-2], k, k, dtype=A.dtype, device=A.device)
        return svd_result(z(m), S, z(n))
    U, S, Vh = D.svd(A, full_matrices=not some)
    return svd_result(U, S, Vh.mT)


@op("pinverse", method="pinverse")
def pinverse(A, rcond=1e-15):
    return pinv(A, rtol=rcond)


@op("matrix_power", method="matrix_power")
def matrix_power_(A, n):
    return matrix_power(A, n)
