"""The factorisations of ``plugrad.linalg``: solve, inv, det, slogdet, cholesky, qr, eigh,
svd, pinv, each one kernel call (:mod:`plugrad.backends.contract_linalg`) and one node.

The gradient rules are PyTorch's (``FunctionsManual.cpp``), written with ``F.<op>`` calls so
that ``create_graph=True`` differentiates them again. The one factorisation a rule needs is a
solve, ``F.linalg_solve``: the kernel in the plain binding, :func:`solve_batched` (itself
differentiable) in the Tensor binding. Constant matrices a rule needs (identity, triangle
masks) are saved as Tensors, so both bindings see them.
"""
from __future__ import annotations

from collections import namedtuple

from plugrad.backends.contract_linalg import LinAlgKernelError
from plugrad.core import factories
from plugrad.core.autograd.node import OUTPUT, KeepsOutput, Node
from plugrad.core.autograd.record import record
from plugrad.core.errors import DTypeError, ShapeError, broadcast_shapes, c_dtype_name, shape_str
from plugrad.core.grad_mode import _state
from plugrad.core.ops import linalg_special as _sp
from plugrad.core.ops.linalg_special import LinAlgError  # noqa: F401 (D.LinAlgError)
from plugrad.core.ops.select import where
from plugrad.core.tensor import Tensor, _wrap


slogdet_result = namedtuple("slogdet", ["sign", "logabsdet"])
eigh_result = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
svd_result = namedtuple("linalg_svd", ["U", "S", "Vh"])
qr_result = namedtuple("linalg_qr", ["Q", "R"])


# ---------------------------------------------------------------------- checks, kernel calls
def check_matrix(name: str, A, square: bool = False) -> None:
    """PyTorch's checks of a linalg input: a floating Tensor (not half), at least 2-D."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise ShapeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if not A.dtype.is_floating_point:
        raise DTypeError(f"{name}: Expected a floating point or complex tensor as input. "
                         f"Got {c_dtype_name(A.dtype)}")
    if A.dtype.name in ("float16", "bfloat16"):
        raise DTypeError(f"{name}: Low precision dtypes not supported. Got "
                         f"{c_dtype_name(A.dtype)}")
    if square and A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"{name}: A must be batches of square matrices, but they are "
                         f"{A.shape[-2]} by {A.shape[-1]} matrices")


_FAILURES = {
    "linalg.inv": "The diagonal element {order} is zero, the inversion could not be "
                  "completed because the input matrix is singular.",
    "linalg.solve": "The solver failed because the input matrix is singular.",
    "linalg.cholesky": _sp.CHOLESKY_FAILURE,
}
_FAILURES["cholesky"] = _FAILURES["linalg.cholesky"]


def call(name: str, k, kernel: str, *args):
    """``k.<kernel>(*args)``, its failures in PyTorch's words naming the op."""
    try:
        return getattr(k, kernel)(*args)
    except NotImplementedError as e:
        raise NotImplementedError(f"{name}: {e}") from None
    except LinAlgKernelError as e:
        text = _FAILURES.get(name, "The algorithm failed: {order}").format(
            order=e.order if e.order is not None else "?")
        where = f"(Batch element {e.batch}): " if e.batch is not None else ""
        prefix = "torch.linalg.solve" if name == "linalg.solve" else name
        raise LinAlgError(f"{prefix}: {where}{text}") from None


def wrap(A, data):
    return _wrap(data, A.dtype, A.device, A._k)


def mT(F, x):
    """The matrix transpose in either binding."""
    n = len(x.shape)
    return F.permute(x, tuple(range(n - 2)) + (n - 1, n - 2))


def eye_like(A, n=None):
    n = A.shape[-1] if n is None else n
    return factories.eye(n, dtype=A.dtype, device=A.device)


def _const(A, values):
    return factories.tensor(values, dtype=A.dtype, device=A.device)


def record_outputs(outs, node, inputs, saved) -> None:
    """One node for several outputs (each its own ``output_nr``)."""
    record(outs[0], node, inputs, saved)
    node.n_outputs = len(outs)
    for nr, o in enumerate(outs[1:], 1):
        o.grad_fn, o._rg, o._output_nr = node, True, nr


def _recording(*xs) -> bool:
    return _state.enabled and any(x._rg for x in xs)


# ---------------------------------------------------------------------- solve, inv
class LinalgSolveBackward0(KeepsOutput):
    """``X = A^-1 B``: ``gB = A^-T g``, ``gA = -gB X^T``."""

    def grad(self, F, g, A, X):
        gB = None
        if not getattr(F, "tensors", False):  # at special values PyTorch's plain backward
            # solves with the forward's LU factors of A (its create_graph one factors A^T)
            dt = self.out_meta[0]
            gB = _sp._lu_solve_adjoint_special(_wrap(A, dt, self.device, self.k),
                                               _wrap(g, dt, self.device, self.k))
        if gB is None:
            gB = F.linalg_solve(mT(F, A), g)
        gA = F.neg(F.matmul(gB, mT(F, X))) if self.next[0] else None
        return gA, gB


def solve_batched(A, B, name="linalg.solve"):
    """The kernel's form: ``A`` ``(..., n, n)``, ``B`` ``(..., n, k)`` of one batch shape."""
    x = _sp._lu_solve_special(A, B)
    r = wrap(A, call(name, A._k, "linalg_solve", A._data, B._data) if x is None else x)
    if _recording(A, B):
        record(r, LinalgSolveBackward0(), (A, B), (A, OUTPUT))
    return r


def solve(A, B, *, left=True):
    """``X`` with ``A X = B`` (``X A = B`` when not ``left``), batch dims broadcast; ``B``
    a (batch of) vector(s) when it is 1-D or has ``A``'s shape without the last dim."""
    check_matrix("linalg.solve", A, square=True)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve(): argument 'B' must be Tensor, not {type(B).__name__}")
    if B.dtype is not A.dtype:
        raise DTypeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                         f"A of type {c_dtype_name(A.dtype)} and B of type "
                         f"{c_dtype_name(B.dtype)} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if not left:
        if vector:
            raise ShapeError("linalg.solve: Vector broadcasting of the left hand side is not "
                             "supported for left=False. In this case linalg.solve is "
                             "equivalent to B / A.squeeze(-1)")
        return solve(A.mT, B.mT).mT
    B2 = B.unsqueeze(-1) if vector else B
    n = A.shape[-1]
    if B2.ndim < 2 or B2.shape[-2] != n:
        raise ShapeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                         f"AX = B ({A.shape[-2]}x{n} and {B2.shape[-2] if B2.ndim > 1 else 1}x"
                         f"{B2.shape[-1]})")
    batch = broadcast_shapes("linalg.solve", tuple(A.shape[:-2]), tuple(B2.shape[:-2]))
    A2 = A if tuple(A.shape[:-2]) == batch else A.expand(*batch, n, n)
    if tuple(B2.shape[:-2]) != batch:
        B2 = B2.expand(*batch, *B2.shape[-2:])
    X = solve_batched(A2, B2)
    return X.squeeze(-1) if vector else X


class LinalgInvBackward0(KeepsOutput):
    """``gA = -A^-T g A^-T``."""

    def grad(self, F, g, Ainv):
        t = mT(F, Ainv)
        return (F.neg(F.matmul(F.matmul(t, g), t)),)


def inv(A):
    check_matrix("linalg.inv", A, square=True)
    eye = eye_like(A).expand(*A.shape)
    x = _sp._lu_solve_special(A, eye)
    r = wrap(A, call("linalg.inv", A._k, "linalg_solve", A._data, eye._data) if x is None
             else x)
    if _recording(A):
        record(r, LinalgInvBackward0(), (A,), (OUTPUT,))
    return r


# ---------------------------------------------------------------------- det, slogdet
def _inv_T(F, A, eye):
    """``A^-T`` in either binding."""
    return F.linalg_solve(mT(F, A), F.broadcast_to(eye, A.shape))


def _cofactors(F, A, eye):
    """The cofactor matrix ``det(A) A^-T`` of any square ``A``, singular included, from its
    SVD: ``det(U) det(V) U diag(prod_{j != i} s_j) V^T``."""
    U, S, Vh = F.linalg_svd(A, False, True)
    off = F.mul(F.sub(eye, 1.0), -1.0)
    P = F.prod(F.add(F.mul(_row(F, S), off), eye), (len(S.shape),), False)
    signs = F.mul(F.linalg_slogdet(U)[0], F.linalg_slogdet(Vh)[0])
    return F.mul(F.reshape(signs, tuple(signs.shape) + (1, 1)),
                 F.matmul(F.mul(U, _row(F, P)), Vh))


class LinalgDetBackward0(KeepsOutput):
    """``gA = g det(A) A^-T``. A batch with a singular matrix takes ``g`` times the
    cofactors instead, and, as PyTorch's, the plain backward then gives 0 for the singular
    matrices themselves (its LU path) while ``create_graph`` gives their cofactors."""

    def grad(self, F, g, A, eye, d):
        try:
            c = F.reshape(F.mul(g, d), tuple(d.shape) + (1, 1))
            return (F.mul(c, _inv_T(F, A, eye)),)
        except (LinAlgKernelError, LinAlgError):
            pass
        gA = F.mul(F.reshape(g, tuple(g.shape) + (1, 1)), _cofactors(F, A, eye))
        if not getattr(F, "tensors", False):
            nonzero = F.astype(F.ne(d, 0.0), F.dtype_of(d))
            gA = F.mul(gA, F.reshape(nonzero, tuple(d.shape) + (1, 1)))
        return (gA,)


def det(A):
    check_matrix("linalg.det", A, square=True)
    k = A._k
    sign, logabs = call("linalg.det", k, "linalg_slogdet", A._data)
    if _sp._special(A, logabs):  # as PyTorch: the product of U's diagonal, signed by P
        diag, p = _sp._lu_parts(A)
        r = diag.prod(-1) * p
        r = wrap(A, r._data)
    else:
        r = wrap(A, k.mul(sign, k.exp(logabs)))
    if _recording(A):
        eye = eye_like(A)
        record(r, LinalgDetBackward0(), (A,), (A, eye, OUTPUT))
    return r


class LinalgSlogdetBackward0(Node):
    """``g_logabsdet A^-T``. The sign output is recorded too (in PyTorch it requires grad)
    but contributes nothing: its derivative is zero."""

    def grad(self, F, g, A, eye):
        gl = g[1]
        if gl is None:
            return (None,)
        c = F.reshape(gl, tuple(gl.shape) + (1, 1))
        return (F.mul(c, _inv_T(F, A, eye)),)


def slogdet(A):
    check_matrix("linalg.slogdet", A, square=True)
    sign, logabs = call("linalg.slogdet", A._k, "linalg_slogdet", A._data)
    if _sp._special(A, logabs):  # PyTorch's: prod(sgn(diag U)) det(P), sum(log|diag U|)
        diag, p = _sp._lu_parts(A)
        sign, logabs = (diag.sign().prod(-1) * p)._data, diag.abs().log().sum(-1)._data
    sign, logabs = wrap(A, sign), wrap(A, logabs)
    if _recording(A):
        eye = eye_like(A)
        record_outputs([sign, logabs], LinalgSlogdetBackward0(), (A,), (A, eye))
    return slogdet_result(sign, logabs)


# ---------------------------------------------------------------------- cholesky
def tril_masks(A, n):
    """The lower triangle (diagonal included) and the strict lower triangle, as 0/1."""
    return (_const(A, [[float(j <= i) for j in range(n)] for i in range(n)]),
            _const(A, [[float(j < i) for j in range(n)] for i in range(n)]))


class LinalgCholeskyBackward0(KeepsOutput):
    """Murray (2016): ``gA = L^-T P L^-1``, ``P`` the symmetric part of ``tril(L^T gL)``
    with its diagonal halved."""

    def grad(self, F, g, low, strict, L):
        t = F.mul(F.matmul(mT(F, L), g), low)
        p = F.mul(F.add(t, mT(F, F.mul(t, strict))), 0.5)
        x = F.linalg_solve(mT(F, L), p)  # L^-T P
        return (F.linalg_solve(mT(F, L), mT(F, x)),)  # (L^-T (L^-T P)^T)^T, P symmetric


def cholesky(A, *, upper=False, name="linalg.cholesky"):
    """The lower factor ``L`` (``L L^T = A``) from ``A``'s lower triangle, or with ``upper``
    the upper factor ``U`` (``U^T U = A``) from its upper triangle, as LAPACK's ``uplo``."""
    check_matrix(name, A, square=True)
    if upper:  # A's upper triangle is the lower one of A^T
        return cholesky(A.mT, name=name).mT
    r = wrap(A, call(name, A._k, "linalg_cholesky", A._data))
    _sp._nan_pivot(name, A, r)
    if _recording(A):
        low, strict = tril_masks(A, A.shape[-1])
        record(r, LinalgCholeskyBackward0(), (A,), (low, strict, OUTPUT))
    return r


# ---------------------------------------------------------------------- qr
def _copyltu(F, M, low, strict):
    """The symmetric matrix with ``M``'s lower triangle."""
    return F.add(F.mul(M, low), mT(F, F.mul(M, strict)))


def _qr_square_grad(F, gQ, gR, Q, R, low, strict):
    """``gA = (gQ + Q copyltu(R gR^T - gQ^T Q)) R^-T`` for ``R`` square."""
    M = F.matmul(R, mT(F, gR)) if gR is not None else None
    if gQ is not None:
        t = F.matmul(mT(F, gQ), Q)
        M = F.neg(t) if M is None else F.sub(M, t)
    X = F.matmul(Q, _copyltu(F, M, low, strict))
    if gQ is not None:
        X = F.add(X, gQ)
    return mT(F, F.linalg_solve(R, mT(F, X)))


class LinalgQrBackward0(Node):

    def grad(self, F, g, Q, R, low, strict):
        if self.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not "
                               "computed when mode='r'. Please use linalg.qr(A, "
                               "mode='reduced') if you are going to differentiate through "
                               "linalg.qr.")
        m, n = Q.shape[-2], R.shape[-1]
        if self.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        gQ, gR = g
        if m >= n:
            return (_qr_square_grad(F, gQ, gR, Q, R, low, strict),)
        # A = Q [X | Y]: X square (m x m); Y = Q^T A2 feeds gQ
        lead = tuple(slice(0, s, 1) for s in R.shape[:-2]) + (slice(0, m, 1),)
        X = F.slice(R, lead + (slice(0, m, 1),))
        Y = F.slice(R, lead + (slice(m, n, 1),))
        gX = gY = None
        if gR is not None:
            gX = F.slice(gR, lead + (slice(0, m, 1),))
            gY = F.slice(gR, lead + (slice(m, n, 1),))
            extra = F.matmul(F.matmul(Q, Y), mT(F, gY))
            gQ = extra if gQ is None else F.add(gQ, extra)
        gU = _qr_square_grad(F, gQ, gX, Q, X, low, strict)
        if gY is None:
            gY = F.mul(Y, 0.0)
        return (F.concat([gU, F.matmul(Q, gY)], len(R.shape) - 1),)


def qr(A, mode="reduced"):
    check_matrix("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    q, r = call("linalg.qr", A._k, "linalg_qr", A._data, mode == "complete")
    Q, R = wrap(A, q), wrap(A, r)
    if _recording(A):
        low, strict = tril_masks(A, R.shape[-2])
        node = LinalgQrBackward0()
        node.mode = mode
        record_outputs([Q, R], node, (A,), (Q, R, low, strict))
    if mode == "r":
        Q = factories.zeros(0, dtype=A.dtype, device=A.device)
    return qr_result(Q, R)


# ---------------------------------------------------------------------- eigh
def _row(F, x):
    return F.reshape(x, tuple(x.shape[:-1]) + (1, x.shape[-1]))


def _col(F, x):
    return F.reshape(x, tuple(x.shape) + (1,))


class LinalgEighBackward0(Node):
    """``gA = V (skew(V^T gV) / E + diag(gL)) V^T``, ``E_ij = L_j - L_i`` (1 on the diagonal)."""

    def grad(self, F, g, L, V, eye):
        gL, gV = g
        inner = None
        if gV is not None:
            vg = F.matmul(mT(F, V), gV)
            skew = F.mul(F.sub(vg, mT(F, vg)), 0.5)
            E = F.add(F.sub(_row(F, L), _col(F, L)), eye)
            inner = F.div(skew, E)
        if gL is not None:
            d = F.mul(_row(F, gL), eye)
            inner = d if inner is None else F.add(inner, d)
        return (F.matmul(V, F.matmul(inner, mT(F, V))),)


def eigh(A, UPLO="L"):
    check_matrix("linalg.eigh", A, square=True)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, v = call("linalg.eigh", A._k, "linalg_eigh", A._data, UPLO == "U")
    L, V = wrap(A, w), wrap(A, v)
    if _recording(A):
        eye = eye_like(A)
        record_outputs([L, V], LinalgEighBackward0(), (A,), (L, V, eye))
    return eigh_result(L, V)


# ---------------------------------------------------------------------- svd
def _narrow(F, x, axis, k):
    key = tuple(slice(0, k if i == axis else s, 1) for i, s in enumerate(x.shape))
    return F.slice(x, key)


class LinalgSvdBackward0(Node):
    """PyTorch's ``svd_backward`` (real case); with ``full_matrices`` the vectors beyond
    ``k = min(m, n)`` do not enter (as PyTorch narrows them)."""

    def grad(self, F, g, U, S, Vh, eye):
        gU, gS, gVh = g
        m, n, k = U.shape[-2], Vh.shape[-1], S.shape[-1]
        nd = len(U.shape)
        if self.full_matrices:
            U, Vh = _narrow(F, U, nd - 1, k), _narrow(F, Vh, nd - 2, k)
            gU = None if gU is None else _narrow(F, gU, nd - 1, k)
            gVh = None if gVh is None else _narrow(F, gVh, nd - 2, k)
        if gU is None and gVh is None:
            if m >= n:
                return (F.matmul(U, F.mul(_col(F, gS), Vh)),)
            return (F.matmul(F.mul(U, _row(F, gS)), Vh),)
        V = mT(F, Vh)
        gV = None if gVh is None else mT(F, gVh)
        S2 = F.mul(S, S)
        E = F.add(F.sub(_row(F, S2), _col(F, S2)), eye)
        gA = None
        if gU is not None:
            ug = F.matmul(mT(F, U), gU)
            gA = F.mul(F.sub(ug, mT(F, ug)), _row(F, S))
        if gV is not None:
            vg = F.matmul(mT(F, V), gV)
            t = F.mul(_col(F, S), F.sub(vg, mT(F, vg)))
            gA = t if gA is None else F.add(gA, t)
        gA = F.div(gA, E)
        if gS is not None:
            gA = F.add(gA, F.mul(_row(F, gS), eye))
        if m > k and gU is not None:
            gA = F.matmul(U, gA)
            gus = F.div(gU, _row(F, S))
            gA = F.sub(F.add(gA, gus), F.matmul(U, F.matmul(mT(F, U), gus)))
            return (F.matmul(gA, Vh),)
        if n > k and gV is not None:
            gA = F.matmul(gA, Vh)
            sgv = F.div(mT(F, gV), _col(F, S))
            gA = F.sub(F.add(gA, sgv), F.matmul(F.matmul(sgv, V), Vh))
            return (F.matmul(U, gA),)
        return (F.matmul(U, F.matmul(gA, Vh)),)


def svd(A, full_matrices=True):
    check_matrix("linalg.svd", A)
    inf = _sp._svd_input_check(A)
    u, s, vh = call("linalg.svd", A._k, "linalg_svd", A._data, full_matrices, True)
    if inf is not None:
        u, s, vh = (t._data for t in _sp._nan_where(inf, wrap(A, u), wrap(A, s), wrap(A, vh)))
    U, S, Vh = wrap(A, u), wrap(A, s), wrap(A, vh)
    if _recording(A):
        eye = eye_like(A, min(A.shape[-2:]))
        node = LinalgSvdBackward0()
        node.full_matrices = full_matrices
        record_outputs([U, S, Vh], node, (A,), (U, S, Vh, eye))
    return svd_result(U, S, Vh)


def svdvals(A):
    """The singular values; through the full SVD only where a gradient needs the vectors."""
    check_matrix("linalg.svdvals", A)
    if _recording(A):
        return svd(A, full_matrices=False).S
    inf = _sp._svd_input_check(A)
    s = wrap(A, call("linalg.svdvals", A._k, "linalg_svd", A._data, False, False)[1])
    return s if inf is None else _sp._nan_where(inf, s)[0]
