"""More of ``torch.linalg``: the LU family (``lu_factor``, ``lu``, ``lu_unpack``,
``lu_solve``), ``matrix_exp``, ``lstsq``, the ``*_ex`` variants, ``tensorsolve``,
``tensorinv``, ``householder_product``, ``cholesky_solve``/``cholesky_inverse``,
``linalg.vander``/``linalg.diagonal``, and the older ``torch.*`` spellings
(``torch.lu``, ``torch.lu_solve``, ``torch.triangular_solve``, ``torch.orgqr``).

No new kernel: the LU factorisation is Gaussian elimination with partial pivoting written in
Tensor ops (one step per column, batched; the pivot is the first largest magnitude, as
LAPACK's), and the rest compose it with the existing factorisations and triangular solves,
so every backend has them and their gradients are those of the composed ops.
"""
from __future__ import annotations

import math

from plugrad.core import dtypes as _dt
from plugrad.core import factories
from plugrad.core.autograd.node import OUTPUT
from plugrad.core.autograd.record import record
from plugrad.core.errors import ShapeError, shape_str
from plugrad.core.grad_mode import _state as _grad_state
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops import linalg_cholesky as _chol
from plugrad.core.ops import linalg_decomp as D
from plugrad.core.ops._dims import return_type
from plugrad.core.ops.declare import op
from plugrad.core.ops.join import cat, stack
from plugrad.core.ops.linalg import matmul
from plugrad.core.ops.linalg_extra import pinv, solve_triangular
from plugrad.core.ops.linalg_lu_grad import (  # noqa: F401 (lu_solve: re-exported)
    LinalgLuBackward0, LinalgLuFactorExBackward0, linalg_lu_solve, lu_solve, lu_unpack)
from plugrad.core.ops.linalg_lu_steps import _lu_steps
from plugrad.core.ops.select import where

_LU = return_type("linalg_lu_factor", "LU", "pivots")
_LU_EX = return_type("linalg_lu_factor_ex", "LU", "pivots", "info")
_PLU = return_type("linalg_lu", "P", "L", "U")
_LSTSQ = return_type("linalg_lstsq", "solution", "residuals", "rank", "singular_values")
_INV_EX = return_type("linalg_inv_ex", "inverse", "info")
_CHOL_EX = return_type("linalg_cholesky_ex", "L", "info")
_SOLVE_EX = return_type("linalg_solve_ex", "result", "info")
_TRI = return_type("triangular_solve", "solution", "cloned_coefficient")


def _matrix(name, A):
    D.check_matrix(name, A)
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point tensor as input. Got "
                           f"{A.dtype.name}")


# ---------------------------------------------------------------------- LU
def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """``(LU, pivots, info)``: the LU factorisation with partial pivoting (PyTorch's
    ``linalg.lu_factor_ex``); ``info`` is the 1-based index of the first zero pivot."""
    _matrix("linalg.lu_factor_ex", A)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU")
    with no_grad():
        lu, piv, info = _lu_steps(A.detach())
        if lu is A or not min(A.shape[-2:]):
            lu = lu.clone()
    if _grad_state.enabled and A._rg:  # PyTorch's rule (lu_factor_ex_backward)
        record(lu, LinalgLuFactorExBackward0(), (A,), (OUTPUT, piv))
    if check_errors and bool((info != 0).any()):
        raise D.LinAlgError(f"linalg.lu_factor_ex: The factorization could not be completed "
                            f"because the input is not invertible (U[{int(info.max())}, "
                            f"{int(info.max())}] is zero)")
    return _LU_EX(lu, piv, info)


def lu_factor(A, *, pivot=True):
    """``(LU, pivots)`` (``linalg.lu_factor``); as PyTorch's, an exactly zero pivot is an
    error (``lu_solve`` would divide by it): ``lu_factor_ex`` and ``linalg.lu`` take such
    matrices."""
    lu, piv, info = lu_factor_ex(A, pivot=pivot)
    with no_grad():
        bad = (info != 0).reshape(-1)
        if bad.numel() and bool(bad.any()):
            b = int(bad.to(_dt.int64).argmax())
            i = int(info.reshape(-1)[b])
            where_ = f"(Batch element {b}): " if A.ndim > 2 else ""
            raise RuntimeError(
                f"torch.linalg.lu_factor: {where_}U[{i},{i}] is zero and using it on lu_solve "
                f"would result in a division by zero. If you still want to perform the "
                f"factorization, consider calling linalg.lu(A, pivot) or "
                f"linalg.lu_factor_ex(A, pivot)")
    return _LU(lu, piv)


def linalg_lu(A, *, pivot=True):
    """``(P, L, U)`` with ``A = P L U`` (``linalg.lu``)."""
    with no_grad():
        lu_, piv, _ = lu_factor_ex(A.detach(), pivot=pivot)
        P, L, U = lu_unpack(lu_, piv)
    if _grad_state.enabled and A._rg:  # PyTorch's rule (linalg_lu_backward)
        D.record_outputs([L, U], LinalgLuBackward0(), (A,), (OUTPUT, P, U))
    return _PLU(P, L, U)


@op("lu", method="lu")
def lu(A, pivot=True, get_infos=False):
    """``torch.lu``: ``(LU, pivots)`` and, with ``get_infos``, ``info``."""
    lu_, piv, info = lu_factor_ex(A, pivot=pivot)
    return (lu_, piv, info) if get_infos else (lu_, piv)


# ---------------------------------------------------------------------- *_ex
def inv_ex(A, *, check_errors=False):
    """``(inverse, info)``: ``info`` is 0, or the first zero pivot of A's LU factors."""
    D.check_matrix("linalg.inv_ex", A, square=True)
    with no_grad():
        lu, piv, info = lu_factor_ex(A.detach())
    bad = info != 0
    if bool(bad.any()):
        if check_errors:
            raise D.LinAlgError("linalg.inv_ex: The diagonal element of U is zero, the "
                                "inversion could not be completed because the input matrix "
                                "is singular.")
        with no_grad():
            raw = linalg_lu_solve(lu, piv, D.eye_like(A).expand(A.shape))
        return _INV_EX(_on_regular(A, bad, D.inv, raw), info)
    return _INV_EX(D.inv(A), info)


def _on_regular(A, bad, fn, raw, *rest):
    """``fn(A, *rest)`` for the regular matrices of the batch; for the singular ones
    ``raw``, the substitutions with their factors (the infinities and NaN of a zero pivot,
    as PyTorch's getrs gives), without a gradient (None: NaN)."""
    mask = bad.reshape(*bad.shape, 1, 1)
    eye = D.eye_like(A).expand(A.shape)
    out = fn(where(mask, eye, A), *rest)
    mask = mask.reshape(*bad.shape, *([1] * (out.ndim - bad.ndim)))
    return where(mask, math.nan if raw is None else raw, out)


def solve_ex(A, B, *, left=True, check_errors=False):
    """``(result, info)`` of ``linalg.solve`` (``info`` as in ``inv_ex``)."""
    D.check_matrix("linalg.solve_ex", A, square=True)
    with no_grad():
        lu, piv, info = lu_factor_ex(A.detach())
    bad = info != 0
    if bool(bad.any()):
        if check_errors:
            raise D.LinAlgError("linalg.solve_ex: The solver failed because the input matrix "
                                "is singular.")
        raw = None
        if left and (B.ndim == A.ndim and tuple(B.shape[:-1]) == tuple(A.shape[:-1])):
            with no_grad():
                raw = linalg_lu_solve(lu, piv, B.detach())
        return _SOLVE_EX(_on_regular(A, bad, lambda M: D.solve(M, B, left=left), raw), info)
    return _SOLVE_EX(D.solve(A, B, left=left), info)


def cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: ``info`` is 0, or the order of the first leading minor that is not
    positive-definite (then ``L`` is NaN for that matrix)."""
    D.check_matrix("linalg.cholesky_ex", A, square=True)
    try:
        L = D.cholesky(A, upper=upper)
        return _CHOL_EX(L, factories.zeros(tuple(A.shape[:-2]), dtype=_dt.int32,
                                           device=A.device))
    except D.LinAlgError:
        if check_errors:
            raise
    n = A.shape[-1]
    flat = A.reshape(-1, n, n)
    outs, infos = [], []
    for i in range(flat.shape[0]):
        a = flat[i]
        try:
            outs.append(D.cholesky(a, upper=upper))
            infos.append(0)
        except D.LinAlgError:
            bad = n
            for k in range(1, n + 1):
                try:
                    D.cholesky(a[:k, :k].detach())
                except D.LinAlgError:
                    bad = k
                    break
            outs.append(a * math.nan)
            infos.append(bad)
    L = stack(outs).reshape(A.shape)
    info = factories.tensor(infos, dtype=_dt.int32, device=A.device).reshape(A.shape[:-2])
    return _CHOL_EX(L, info)


# ---------------------------------------------------------------------- matrix_exp
@op("matrix_exp", method="matrix_exp")
def matrix_exp(A):
    """``exp(A)`` by scaling and squaring as PyTorch's ``mexp``: each matrix is divided by
    ``2**s``, ``s = max(0, ceil(log2(||A||_1 / theta)))`` with its degree-18 ``theta``
    (1.09 in float64, 3.01 in float32), then the Taylor series (to 18 / 22 terms, accurate
    to the dtype at that norm) is squared ``s`` times. As PyTorch's, a matrix whose norm is
    NaN gives NaN, and one whose norm overflows to inf is scaled to zero and not squared: the
    identity if its entries are finite, NaN if not."""
    D.check_matrix("linalg.matrix_exp", A, square=True)
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point tensor, got "
                           f"{A.dtype.name}")
    if A.numel() == 0:
        return A.clone()
    double = A.dtype is _dt.float64
    theta, terms = (1.090863719290036, 18) if double else (3.010066362817634, 22)
    with no_grad():
        norm = A.abs().sum(-2).amax(-1).to(_dt.float64)  # the 1-norm of each matrix
        bad = norm.isnan()
        over = norm == math.inf
        safe = where(bad.logical_or(over), 0.0, norm)
        s = where(safe > theta, (safe / theta).log2().ceil(), 0.0)
        steps = int(s.max())
        scale = where(over, 0.0, 2.0 ** -s).to(A.dtype).unsqueeze(-1).unsqueeze(-1)
        s = s.unsqueeze(-1).unsqueeze(-1)
    X = A * scale if steps or bool(over.any()) else A
    eye = D.eye_like(A).expand(A.shape)
    out, term = eye, eye
    for k in range(1, terms + 1):
        term = matmul(term, X) / float(k)
        out = out + term
    for i in range(steps):
        new = where(s > i, matmul(out, out), out)
        with no_grad():  # a fixed point (inf / NaN everywhere) stays one
            same = bool(((new == out).logical_or(new.isnan().logical_and(out.isnan()))).all())
        out = new
        if same:
            break
    if bool(bad.any()):
        out = where(bad.unsqueeze(-1).unsqueeze(-1), math.nan, out)
    return out


# ---------------------------------------------------------------------- least squares
def lstsq(A, B, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)`` of ``min ||A X - B||`` (the
    minimum-norm solution, through the pseudo-inverse). The other results follow the driver
    as in PyTorch: ``rank`` except for ``gels``, ``singular_values`` for ``gelsd``/``gelss``,
    ``residuals`` (the squared column norms of ``A X - B``) except for ``gelsy`` (the
    default) and only when ``m > n`` and every matrix has full rank."""
    name = "linalg.lstsq"
    D.check_matrix(name, A)
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss)")
    vector = B.ndim == A.ndim - 1
    rhs = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2], A.shape[-1]
    if rhs.shape[-2] != m:
        raise ShapeError(f"{name}: input.size(-2) should match other.size(-2), got "
                         f"{shape_str(A.shape)} and {shape_str(B.shape)}")
    eps = 2.0 ** -52 if A.dtype is _dt.float64 else 2.0 ** -23
    rtol = (eps * max(m, n)) if rcond is None or rcond < 0 else rcond
    X = matmul(pinv(A, rtol=rtol), rhs)
    empty = factories.zeros((0,), dtype=A.dtype, device=A.device)
    with no_grad():
        sv = D.svdvals(A.detach())
        rank = _lstsq_rank(A.detach(), rtol, driver) if min(m, n) else \
            factories.zeros(tuple(A.shape[:-2]), dtype=_dt.int64, device=A.device)
    full = bool((rank == min(m, n)).all())
    # (as PyTorch: gelsy leaves them empty; empty or not, they require grad with the inputs)
    residuals = ((matmul(A, X) - rhs) ** 2).sum(-2) if m > n and full and driver != "gelsy" \
        else X.reshape(-1)[:0]
    rank_out = empty.to(_dt.int64) if driver == "gels" else rank
    svs = sv.to(A.dtype) if driver in ("gelsd", "gelss") else empty
    sol = X.squeeze(-1) if vector else X
    if vector and residuals.numel():
        residuals = residuals.squeeze(-1)
    return _LSTSQ(sol, residuals, rank_out, svs)


def _lstsq_rank(A, rtol, driver):
    """The rank LAPACK's drivers report: the singular values above ``rtol`` times the
    largest of ``A`` scaled by its largest magnitude (the drivers scale a matrix whose
    entries are near the overflow or underflow threshold; unscaled, its singular values
    overflow to inf and nothing counts). ``gelsy`` (QR with column pivoting) at a matrix
    with an inf or NaN: 1 (its scaling by ``bignum / inf`` leaves NaN there, so the leading
    ``R`` entry is NaN and the condition estimate stops after it)."""
    scale = A.abs().amax((-2, -1), keepdim=True)
    finite = scale.isfinite()
    ok = finite.logical_and(scale > 0)
    sv = D.svdvals(A / where(ok, scale, 1.0))
    rank = (sv > rtol * sv[..., :1]).sum(-1)
    if driver == "gelsy":
        rank = where(finite.reshape(tuple(rank.shape)), rank, 1)
    return rank


# ---------------------------------------------------------------------- tensor forms
def tensorinv(A, ind=2):
    """The inverse of ``A`` viewed as a matrix of its first ``ind`` dims by the rest."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape, in_shape = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(out_shape), math.prod(in_shape)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) "
                           f"== prod(self.shape[:ind]), but got {cols} != {rows}")
    return D.inv(A.reshape(rows, cols)).reshape(*in_shape, *out_shape)


def tensorsolve(A, B, dims=None):
    """``X`` with ``tensordot(A, X, X.ndim) == B``."""
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        rest = [d for d in range(A.ndim) if d not in dims]
        A = A.permute(*rest, *dims)
    rhs = math.prod(B.shape)
    x_shape = tuple(A.shape[B.ndim:])
    if math.prod(x_shape) != rhs:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other."
                           f"ndim:]) == prod(self.shape[:other.ndim]), but got "
                           f"{math.prod(x_shape)} != {rhs}")
    X = D.solve(A.reshape(rhs, rhs), B.reshape(rhs, 1))
    return X.reshape(*x_shape)


def householder_product(A, tau):
    """The first ``n`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T`` with ``v_i``
    the ``i``-th column of ``A`` below the diagonal and 1 on it (LAPACK's ``orgqr``)."""
    D.check_matrix("linalg.householder_product", A)
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if n > m or k > n:
        raise RuntimeError(f"linalg.householder_product: input.shape[-2] must be greater than "
                           f"or equal to input.shape[-1] >= tau.shape[-1], got "
                           f"{shape_str(A.shape)} and tau {shape_str(tau.shape)}")
    # LAPACK's dorg2r order: from the last reflector back, H_i applied to the block below
    # and right of (i, i) only, column i set to H_i e_i directly; so an inf or NaN in ``A``
    # meets only the entries LAPACK lets it meet (no 0 * inf elsewhere)
    batch = tuple(A.shape[:-2])
    R = factories.eye(m - k, n - k, dtype=A.dtype, device=A.device)
    R = R.expand(*batch, m - k, n - k) if batch else R
    for i in range(k - 1, -1, -1):
        t = tau[..., i:i + 1].unsqueeze(-1)  # (..., 1, 1)
        below = A[..., i + 1:, i:i + 1]  # (..., m-i-1, 1)
        C = cat([R.new_zeros((*batch, 1, n - i - 1)), R], -2)  # rows i.., columns i+1..
        if n - i - 1:
            v = cat([below.new_ones((*batch, 1, 1)), below], -2)
            with no_grad():
                finite = bool(v.isfinite().all()) and bool(C.isfinite().all())
            if finite:
                w = matmul(v.transpose(-2, -1), C)  # (..., 1, n-i-1)
                C = C + v * (-t * w)
            else:
                C = _reflect_as_dlarf(v, t, C)
        col = cat([1.0 - t, -t * below], -2)
        R = cat([col, C], -1)
    return R


def _reflect_as_dlarf(v, t, C):
    """``C - t v (v^T C)`` as LAPACK's ``dlarf`` at non-finite entries: nothing when
    ``t == 0``, and only the rows up to ``v``'s last nonzero and the columns up to the last
    one nonzero in those rows take part (elsewhere the 0 * inf of the plain products is
    not computed: the NaN it would give is dropped, the rest of the graph kept)."""
    with no_grad():
        def trailing(nz, dim):  # whether a nonzero is at or after each position along dim
            return nz.to(_dt.int64).flip(dim).cumsum(dim).flip(dim) > 0
        rows = trailing(v != 0, -2)  # (..., r, 1)
        cols = trailing(where(rows, C != 0, False).any(-2, keepdim=True), -1)  # (..., 1, c)
        active = rows.logical_and(cols).logical_and(t != 0)
    prod = v * C
    w = where(active.logical_not().logical_and(prod.isnan()), 0.0, prod).sum(-2, keepdim=True)
    outer = v * (-t * w)
    return C + where(active.logical_not().logical_and(outer.isnan()), 0.0, outer)


@op("cholesky_solve", method="cholesky_solve")
def cholesky_solve(B, L, upper=False):
    """``X`` with ``A X = B`` for ``A = L L^T`` (or ``U^T U`` with ``upper``)."""
    return _chol.cholesky_solve(B, L, upper)


@op("cholesky_inverse", method="cholesky_inverse")
def cholesky_inverse(L, upper=False):
    """The inverse of ``L L^T`` (``U^T U`` with ``upper``) from its Cholesky factor."""
    return _chol.cholesky_inverse(L, upper)


@op("triangular_solve", method="triangular_solve")
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """``(X, A.clone())`` with ``A X = b`` (``A^T X = b`` with ``transpose``): the older
    spelling of ``linalg.solve_triangular``."""
    M = A.transpose(-2, -1) if transpose else A
    X = solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    return _TRI(X, A.clone())


def linalg_vander(x, *, N=None):
    """``(..., n, N)`` of increasing powers of ``x``'s last dim (a cumulative product)."""
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        if n < 1:
            raise RuntimeError(f"N must be greater than 1. Got N = {n}")
        return x.unsqueeze(-1).new_ones(tuple(x.shape) + (1,))
    dt = _dt.promote_types(x.dtype, _dt.int64)
    xs = x.to(dt).unsqueeze(-1).expand(*x.shape, n - 1)
    return cat([xs.new_ones(tuple(x.shape) + (1,)), xs.cumprod(-1)], -1)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


@op("orgqr", method="orgqr")
def orgqr(input, tau):
    """``torch.orgqr``: ``linalg.householder_product``."""
    return householder_product(input, tau)
