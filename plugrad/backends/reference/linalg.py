"""The linear-algebra kernels of the reference backend, in plain Python (doubles, rounded to
the dtype on store): LU with partial pivoting (solve, slogdet), Cholesky, Householder QR,
cyclic Jacobi (symmetric eigendecomposition) and one-sided Jacobi (SVD).

These are the textbook algorithms, chosen for being obviously right on the small matrices
the conformance suite uses, not for speed. Each works on one matrix (a list of rows); the
mixin applies it over the batch.
"""
from __future__ import annotations

import math

from plugrad.backends.contract_linalg import LinAlgKernelError

from .array import RefArray, size_of
from .scalars import fsum  # IEEE specials (inf - inf is nan) where math.fsum raises

_EPS = 2.0 ** -52


def _matrices(a: RefArray):
    """The matrices of ``a`` as lists of rows, batch in row-major order."""
    m, n = a.shape[-2:]
    step = m * n
    for t in range(size_of(a.shape[:-2])):
        flat = a.data[t * step:(t + 1) * step]
        yield [list(map(float, flat[i * n:(i + 1) * n])) for i in range(m)]


def _flat(mats) -> list:
    return [v for mat in mats for row in mat for v in row]


def _transpose(mat):
    return [list(col) for col in zip(*mat)] if mat else []


def _lu(mat):
    """In-place LU with partial pivoting: (rows, swaps parity, index of first zero pivot)."""
    n = len(mat)
    sign, zero = 1.0, None
    for j in range(n):
        p = max(range(j, n), key=lambda i: abs(mat[i][j]))
        if mat[p][j] == 0.0:
            zero = j + 1 if zero is None else zero
            continue
        if p != j:
            mat[j], mat[p] = mat[p], mat[j]
            sign = -sign
        r = 1.0 / mat[j][j]  # scaled by the reciprocal, as LAPACK's getrf2
        for i in range(j + 1, n):
            f = mat[i][j] * r
            mat[i][j] = f
            for c in range(j + 1, n):
                mat[i][c] -= f * mat[j][c]
    return mat, sign, zero


def _solve(a, b, batch):
    n = len(a)
    perm = list(range(n))
    a = [row[:] for row in a]
    for j in range(n):
        p = max(range(j, n), key=lambda i: abs(a[i][j]))
        if a[p][j] == 0.0:
            raise LinAlgKernelError("singular matrix", batch, j + 1)
        a[j], a[p] = a[p], a[j]
        perm[j], perm[p] = perm[p], perm[j]
        r = 1.0 / a[j][j]
        for i in range(j + 1, n):
            f = a[i][j] * r
            a[i][j] = f
            for c in range(j + 1, n):
                a[i][c] -= f * a[j][c]
    x = [b[perm[i]][:] for i in range(n)]
    k = len(b[0]) if b else 0
    for i in range(n):  # forward: unit lower triangle
        for r in range(i):
            for c in range(k):
                x[i][c] -= a[i][r] * x[r][c]
    for i in reversed(range(n)):  # backward: upper triangle
        for r in range(i + 1, n):
            for c in range(k):
                x[i][c] -= a[i][r] * x[r][c]
        for c in range(k):
            x[i][c] /= a[i][i]
    return x


def _cholesky(a, batch):
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for j in range(n):
        d = a[j][j] - fsum(low[j][p] * low[j][p] for p in range(j))
        if not d > 0.0:  # NaN too
            raise LinAlgKernelError("not positive-definite", batch, j + 1)
        low[j][j] = math.sqrt(d)
        for i in range(j + 1, n):
            low[i][j] = (a[i][j] - fsum(low[i][p] * low[j][p] for p in range(j))) / low[j][j]
    return low


def _householder_qr(a):
    """Full ``q`` (m x m) and ``r`` (m x n) with ``a == q r``."""
    m, n = len(a), len(a[0]) if a else 0
    r = [row[:] for row in a]
    q = [[float(i == j) for j in range(m)] for i in range(m)]
    for j in range(min(m - 1, n) if m > 0 else 0):
        x = [r[i][j] for i in range(j, m)]
        norm = math.sqrt(fsum(v * v for v in x))
        if norm == 0.0:
            continue
        alpha = -norm if x[0] >= 0 else norm
        v = x[:]
        v[0] -= alpha
        vv = fsum(t * t for t in v)
        if vv == 0.0:
            continue
        for c in range(n):  # r <- (I - 2 v v^T / v^T v) r
            f = 2.0 * fsum(v[i] * r[j + i][c] for i in range(len(v))) / vv
            for i in range(len(v)):
                r[j + i][c] -= f * v[i]
        for row in q:  # q <- q (I - 2 v v^T / v^T v)
            f = 2.0 * fsum(row[j + i] * v[i] for i in range(len(v))) / vv
            for i in range(len(v)):
                row[j + i] -= f * v[i]
        for i in range(j + 1, m):
            r[i][j] = 0.0
    return q, r


def _jacobi_eigh(a):
    """Eigenvalues (ascending) and eigenvector columns of the symmetric ``a``."""
    n = len(a)
    a = [row[:] for row in a]
    v = [[float(i == j) for j in range(n)] for i in range(n)]
    for _ in range(100):
        off = fsum(a[i][j] ** 2 for i in range(n) for j in range(n) if i != j)
        scale = fsum(a[i][j] ** 2 for i in range(n) for j in range(n))
        if off <= (_EPS * _EPS) * scale * 1e-4 or off == 0.0:
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                if a[p][q] == 0.0:
                    continue
                theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q])
                t = math.copysign(1.0, theta) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(n):  # columns p, q
                    akp, akq = a[k][p], a[k][q]
                    a[k][p], a[k][q] = c * akp - s * akq, s * akp + c * akq
                for k in range(n):  # rows p, q
                    apk, aqk = a[p][k], a[q][k]
                    a[p][k], a[q][k] = c * apk - s * aqk, s * apk + c * aqk
                for k in range(n):
                    vkp, vkq = v[k][p], v[k][q]
                    v[k][p], v[k][q] = c * vkp - s * vkq, s * vkp + c * vkq
    order = sorted(range(n), key=lambda i: a[i][i])
    return [a[i][i] for i in order], [[row[i] for i in order] for row in v]


def _complete(cols, count, m):
    """Orthonormal columns (lists of length ``m``) extended to ``count`` of them."""
    out = [c[:] for c in cols]
    for e in range(m):
        if len(out) == count:
            break
        v = [float(i == e) for i in range(m)]
        for _ in range(2):  # Gram-Schmidt, twice for orthogonality to rounding
            for c in out:
                d = fsum(x * y for x, y in zip(v, c))
                v = [x - d * y for x, y in zip(v, c)]
        norm = math.sqrt(fsum(x * x for x in v))
        if norm > 1e-6:
            out.append([x / norm for x in v])
    return out


def _jacobi_svd(a, full):
    """``(u, s, vh)`` of ``a`` (m x n, m >= n) by one-sided Jacobi on its columns."""
    m, n = len(a), len(a[0])
    w = _transpose(a)  # the columns of a, rotated in place
    v = [[float(i == j) for j in range(n)] for i in range(n)]  # rows: columns of V
    for _ in range(100):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                alpha = fsum(x * x for x in w[p])
                beta = fsum(x * x for x in w[q])
                gamma = fsum(x * y for x, y in zip(w[p], w[q]))
                if gamma == 0.0 or abs(gamma) <= _EPS * math.sqrt(alpha * beta):
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                t = math.copysign(1.0, zeta) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                for vec in (w, v):
                    vp, vq = vec[p], vec[q]
                    vec[p] = [c * x - s * y for x, y in zip(vp, vq)]
                    vec[q] = [s * x + c * y for x, y in zip(vp, vq)]
        if not rotated:
            break
    sv = [math.sqrt(fsum(x * x for x in col)) for col in w]
    order = sorted(range(n), key=lambda i: -sv[i])
    s = [sv[i] for i in order]
    tiny = (s[0] if s else 0.0) * _EPS * max(m, n)
    ucols = [[x / sv[i] for x in w[i]] for i in order if sv[i] > tiny and sv[i] > 0.0]
    ucols = _complete(ucols, m if full else n, m)
    vrows = [v[i] for i in order]
    return _transpose(ucols), s, vrows


class RefLinalgKernels:
    """``linalg_*`` kernels of :class:`~plugrad.backends.reference.ReferenceBackend`."""

    def linalg_solve(self, a, b):
        batched = len(a.shape) > 2
        out = [_solve(ma, mb, t if batched else None)
               for t, (ma, mb) in enumerate(zip(_matrices(a), _matrices(b)))]
        return RefArray(b.shape, a.dtype, _flat(out))

    def linalg_slogdet(self, a):
        signs, logs = [], []
        for mat in _matrices(a):
            lu, sign, zero = _lu(mat)
            if zero is not None:
                signs.append(0.0)
                logs.append(-math.inf)
                continue
            for i in range(len(lu)):
                sign = -sign if lu[i][i] < 0 else sign
            signs.append(sign)
            logs.append(fsum(math.log(abs(lu[i][i])) for i in range(len(lu))))
        batch = a.shape[:-2]
        return RefArray(batch, a.dtype, signs), RefArray(batch, a.dtype, logs)

    def linalg_cholesky(self, a):
        batched = len(a.shape) > 2
        out = [_cholesky(m, t if batched else None) for t, m in enumerate(_matrices(a))]
        return RefArray(a.shape, a.dtype, _flat(out))

    def linalg_qr(self, a, complete: bool):
        m, n = a.shape[-2:]
        k = m if complete else min(m, n)
        qs, rs = [], []
        for mat in _matrices(a):
            q, r = _householder_qr(mat) if m else ([], [])
            qs.append([row[:k] for row in q])
            rs.append(r[:k])
        batch = a.shape[:-2]
        return (RefArray(batch + (m, k), a.dtype, _flat(qs)),
                RefArray(batch + (k, n), a.dtype, _flat(rs)))

    def linalg_eigh(self, a, upper: bool):
        n = a.shape[-1]
        ws, vs = [], []
        for mat in _matrices(a):
            sym = [[mat[min(i, j)][max(i, j)] if upper else mat[max(i, j)][min(i, j)]
                    for j in range(n)] for i in range(n)]
            w, v = _jacobi_eigh(sym)
            ws.append(w)
            vs.append(v)
        batch = a.shape[:-2]
        return (RefArray(batch + (n,), a.dtype, [x for w in ws for x in w]),
                RefArray(a.shape, a.dtype, _flat(vs)))

    def linalg_svd(self, a, full_matrices: bool, compute_uv: bool):
        m, n = a.shape[-2:]
        k = min(m, n)
        us, ss, vhs = [], [], []
        for mat in _matrices(a):
            if k == 0:
                u = [[float(i == j) for j in range(m if full_matrices else 0)]
                     for i in range(m)]
                vh = [[float(i == j) for j in range(n)] for i in range(n if full_matrices else 0)]
                s = []
            elif not all(math.isfinite(x) for row in mat for x in row):
                # LAPACK's gesdd gives NaN for a non-finite matrix (Jacobi's ordering and
                # column tests break on inf / NaN)
                nan = math.nan
                u = [[nan] * (m if full_matrices else k) for _ in range(m)]
                vh = [[nan] * n for _ in range(n if full_matrices else k)]
                s = [nan] * k
            elif m >= n:
                u, s, vh = _jacobi_svd(mat, full_matrices)
            else:  # a^T = v s u^T
                vt, s, uh = _jacobi_svd(_transpose(mat), full_matrices)
                u, vh = _transpose(uh), _transpose(vt)
            us.append(u)
            ss.append(s)
            vhs.append(vh)
        batch = a.shape[:-2]
        sv = RefArray(batch + (k,), a.dtype, [x for s in ss for x in s])
        if not compute_uv:
            return None, sv, None
        um, vn = (m, n) if full_matrices else (k, k)
        return (RefArray(batch + (m, um), a.dtype, _flat(us)), sv,
                RefArray(batch + (vn, n), a.dtype, _flat(vhs)))
