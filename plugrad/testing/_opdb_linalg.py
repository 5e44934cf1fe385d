"""The op database's entries for ``plugrad.linalg``, PyTorch's top-level linalg spellings
(``det``, ``inverse``, ``svd``, ...) and the six ``linalg_*`` kernels.

Samples are small and well conditioned (distinct eigen/singular values, SPD where needed).
Eigenvectors and singular vectors are defined up to sign and backends may choose either, so
the entries compare them after fixing each vector's sign (its largest entry made positive):
a locally constant factor, so gradcheck still applies. Ops that read one triangle of a
symmetric input (``eigh``, ``cholesky``) are checked on ``(A + A^T) / 2``, whose gradient is
the symmetric one PyTorch's rules give. A backend without a factorisation kernel (they are
optional and have no composite) has the cases that need it skipped, saying so.
"""
from __future__ import annotations

import numpy as np

import plugrad
from plugrad.testing.opdb import (ALL, FLOATS, NUMS, Arr, OpInfo, SampleInput as S, _P, _add,
                                  _K, _tensor)

F64 = ("float32", "float64")


# ---------------------------------------------------------------------- inputs
def _mat(make, values, layout=None):
    """A sample matrix with these float64 values, as a Tensor or a kernel's Arr."""
    values = np.asarray(values)
    np_dtype = "float32" if make.dtype == "bfloat16" else make.dtype
    if make.kernel:
        return Arr(values.astype(np_dtype), make.dtype, layout)
    if layout is not None and values.ndim >= 2:
        make.layouts += 1
    return _tensor(values.astype(np_dtype), make.dtype, make.device, layout)


def _general(make, *shape):
    """Well conditioned: random entries plus a dominant diagonal."""
    v = make.values(shape, "float64", -1.0, 1.0)
    n = min(shape[-2:])
    v[..., range(n), range(n)] += 3.0 * np.sign(v[..., range(n), range(n)] + 0.01)
    return v


def _spd(make, *shape):
    """Symmetric positive-definite with well separated eigenvalues."""
    n = shape[-1]
    q, _ = np.linalg.qr(make.values(shape, "float64"))
    w = np.arange(1, n + 1, dtype=np.float64) * 1.5
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def _sym(make, *shape):
    """Symmetric, eigenvalues of both signs, well separated."""
    n = shape[-1]
    q, _ = np.linalg.qr(make.values(shape, "float64"))
    w = np.arange(n, dtype=np.float64) * 1.5 - 1.2
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def _distinct_sv(make, *shape):
    """Distinct singular values, well apart."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(make.values(shape[:-2] + (m, m), "float64"))
    v, _ = np.linalg.qr(make.values(shape[:-2] + (n, n), "float64"))
    s = np.arange(k, 0, -1, dtype=np.float64) + 0.5
    return (u[..., :, :k] * s[..., None, :]) @ np.swapaxes(v[..., :, :k], -1, -2)


# ---------------------------------------------------------------------- sign fixing
def _fix(V):
    """``V`` with each column's largest-magnitude entry positive (Tensors)."""
    idx = V.detach().abs().argmax(dim=-2, keepdim=True)
    return V * V.detach().gather(-2, idx).sign()


def _fix_svd(U, S, Vh):
    k = S.shape[-1]
    Uk = U[..., :, :k]
    idx = Uk.detach().abs().argmax(dim=-2, keepdim=True)
    s = Uk.detach().gather(-2, idx).sign()
    return Uk * s, S, Vh[..., :k, :] * s.mT


def _kfix(k, v):
    """:func:`_fix` on a backend's arrays (kernel entries)."""
    axis = len(v.shape) - 2
    idx = k.argmax(k.abs(v), axis, True)
    return k.mul(v, k.sign(k.gather(v, axis, idx)))


def _sym_of(A):
    return (A + A.mT) * 0.5 if A.dtype.is_floating_point else A


def k_eigh_fixed(k, a, upper):
    w, v = k.linalg_eigh(a, upper)
    return w, _kfix(k, v)


def k_svd_fixed(k, a, full, compute_uv):
    u, s, vh = k.linalg_svd(a, full, compute_uv)
    if not compute_uv:
        return s
    n = len(u.shape)
    m, kk = u.shape[-1], s.shape[-1]
    lead = tuple(slice(0, d, 1) for d in u.shape[:-1])
    uk = k.slice(u, lead + (slice(0, kk, 1),)) if m != kk else u
    axis = n - 2
    sign = k.sign(k.gather(uk, axis, k.argmax(k.abs(uk), axis, True)))
    vlead = tuple(slice(0, d, 1) for d in vh.shape[:-2])
    vk = k.slice(vh, vlead + (slice(0, kk, 1), slice(0, vh.shape[-1], 1)))
    perm = tuple(range(n - 2)) + (n - 1, n - 2)
    return k.mul(uk, sign), s, k.mul(vk, k.permute(sign, perm))


def k_qr_fixed(k, a, complete):
    q, r = k.linalg_qr(a, complete)
    n = len(r.shape)
    kk = min(a.shape[-2:])
    lead = tuple(slice(0, d, 1) for d in q.shape[:-1])
    qk = k.slice(q, lead + (slice(0, kk, 1),))
    rlead = tuple(slice(0, d, 1) for d in r.shape[:-2])
    rk = k.slice(r, rlead + (slice(0, kk, 1), slice(0, r.shape[-1], 1)))
    sign = k.sign(k.gather(qk, n - 2, k.argmax(k.abs(qk), n - 2, True)))
    perm = tuple(range(n - 2)) + (n - 1, n - 2)
    return k.mul(qk, sign), k.mul(rk, k.permute(sign, perm))


# ---------------------------------------------------------------------- public samples
def s_square(gen=_general, shapes=((3, 3), (2, 2, 2)), transposed=True):
    def samples(make, dtype):
        for shape in shapes:
            yield S((_mat(make, gen(make, *shape)),), name=f"{shape}")
        if transposed:
            yield S((_mat(make, gen(make, 3, 3), layout="T"),), name="transposed")
    return samples


def s_rect(gen=_distinct_sv, shapes=((3, 2), (2, 3), (2, 3, 3)), kwargs=({},)):
    def samples(make, dtype):
        for shape in shapes:
            for kw in kwargs:
                yield S((_mat(make, gen(make, *shape)),), dict(kw), name=f"{shape} {kw}")
    return samples


def s_solve(make, dtype):
    yield S((_mat(make, _general(make, 3, 3)), make(3, 2)), name="matrix rhs")
    yield S((_mat(make, _general(make, 3, 3)), make(3)), name="vector rhs")
    yield S((_mat(make, _general(make, 2, 2, 2)), make(2, 2, 1)), name="batched")
    yield S((_mat(make, _general(make, 3, 3), layout="T"), make(2, 3, 1)), name="broadcast")


def s_matrix_power(make, dtype):
    floating = dtype.startswith("float")
    powers = (0, 1) + ((3,) if dtype != "bool" else ())  # bool products raise (PyTorch's)
    for n in powers + ((-2,) if floating and dtype != "float16" else ()):
        yield S((_mat(make, _general(make, 2, 2, 2)) if floating else make(2, 2, 2), n),
                name=f"n={n}", grad=n != 0)


def s_multi_dot(make, dtype):
    yield S(([make(3), make(3, 4), make(4, 2)],), name="vector first", method=False)
    yield S(([make(2, 3), make(3, 4), make(4, 2), make(2)],), name="vector last",
            method=False)


def s_cross(make, dtype):
    yield S((make(2, 3), make(2, 3)), name="rows")
    yield S((make(3, 2), make(3, 1)), {"dim": 0}, name="dim=0, broadcast")


def s_vecdot(make, dtype):
    yield S((make(2, 3), make(2, 3)), name="rows", method=False)
    yield S((make(3, 2), make(2)), {"dim": -1}, name="broadcast", method=False)


def s_vector_norm(make, dtype):
    yield S((make(2, 3, low=0.2),), name="default")
    for kw in ({"ord": 1, "dim": 1}, {"ord": float("inf")}, {"ord": 3, "dim": (0, 1)},
               {"ord": 0.5, "dim": -1, "keepdim": True}):
        yield S((make(2, 3, low=0.2),), kw, name=repr(kw))


def s_matrix_norm(linalg_norm=False):
    def samples(make, dtype):
        ords = ["fro", 1, -1, float("inf"), -float("inf")]
        if dtype != "float16":
            ords += ["nuc", 2, -2]
        for o in ords:
            yield S((_mat(make, _distinct_sv(make, 3, 2)),), {"ord": o}, name=f"ord={o}")
        yield S((_mat(make, _distinct_sv(make, 2, 3, 2)),), {"dim": (0, 2), "keepdim": True},
                name="dims (0, 2), keepdim")
        if linalg_norm:
            yield S((make(2, 3),), {}, name="flattened 2-norm")
            yield S((make(4),), {"ord": 3}, name="vector ord 3")
    return samples


def s_cond(make, dtype):
    for p in (None, 2, -2, "fro", "nuc", 1, float("inf")):
        yield S((_mat(make, _general(make, 3, 3)),), {"p": p}, name=f"p={p}")
    yield S((_mat(make, _general(make, 2, 2, 2)),), {"p": 1}, name="batched")


def s_solve_triangular(make, dtype):
    for kw in ({"upper": True}, {"upper": False, "left": False},
               {"upper": False, "unitriangular": True}):
        yield S((_mat(make, _general(make, 3, 3)), make(3, 2) if kw.get("left", True)
                 else make(2, 3)), kw, name=repr(kw))


# ---------------------------------------------------------------------- public entries
L = plugrad.linalg
_add(
    _P("linalg.inv", L.inv, sample_inputs=s_square(), differentiable=True, dtypes=F64),
    _P("linalg.det", L.det, sample_inputs=s_square(), differentiable=True, dtypes=F64),
    _P("linalg.slogdet", L.slogdet, sample_inputs=s_square(), differentiable=True,
       dtypes=F64),
    _P("linalg.solve", L.solve, sample_inputs=s_solve, differentiable=True, dtypes=F64),
    _P("linalg.cholesky", lambda A, **kw: L.cholesky(_sym_of(A), **kw),
       sample_inputs=s_rect(_spd, ((3, 3), (2, 2, 2)), ({}, {"upper": True})),
       differentiable=True, dtypes=F64),
    _P("linalg.qr", lambda A, **kw: L.qr(A, **kw),
       sample_inputs=s_rect(_distinct_sv, ((3, 2), (2, 3), (2, 2, 2))), differentiable=True,
       dtypes=F64),
    _P("linalg.eigh", lambda A, **kw: (lambda w, v: (w, _fix(v)))(*L.eigh(_sym_of(A), **kw)),
       sample_inputs=s_rect(_sym, ((3, 3), (2, 2, 2)), ({}, {"UPLO": "U"})),
       differentiable=True, dtypes=F64),
    _P("linalg.eigvalsh", lambda A, **kw: L.eigvalsh(_sym_of(A), **kw),
       sample_inputs=s_rect(_sym, ((3, 3),)), differentiable=True, dtypes=F64),
    _P("linalg.svd", lambda A, **kw: _fix_svd(*L.svd(A, **kw)),
       sample_inputs=s_rect(kwargs=({}, {"full_matrices": False})), differentiable=True,
       dtypes=F64),
    _P("linalg.svdvals", L.svdvals, sample_inputs=s_rect(), differentiable=True, dtypes=F64),
    _P("linalg.pinv", L.pinv, sample_inputs=s_rect(kwargs=({}, {"rtol": 1e-3})),
       differentiable=True, dtypes=F64),
    _P("linalg.matrix_rank", L.matrix_rank,
       sample_inputs=s_rect(kwargs=({}, {"atol": 1.0}, {"rtol": 0.5})), dtypes=F64),
    _P("linalg.cond", L.cond, sample_inputs=s_cond, differentiable=True, dtypes=F64),
    _P("linalg.solve_triangular", L.solve_triangular, sample_inputs=s_solve_triangular,
       differentiable=True, dtypes=F64),
    _P("linalg.matrix_power", L.matrix_power, sample_inputs=s_matrix_power,
       differentiable=True, dtypes=ALL),  # bool: n=0 and 1 only (PyTorch has no bool matmul)
    _P("linalg.multi_dot", L.multi_dot, sample_inputs=s_multi_dot, differentiable=True,
       dtypes=NUMS),  # bool products raise, as in PyTorch
    _P("linalg.cross", L.cross, sample_inputs=s_cross, differentiable=True, dtypes=NUMS),
    _P("linalg.vecdot", L.vecdot, sample_inputs=s_vecdot, differentiable=True, dtypes=FLOATS),
    _P("linalg.vector_norm", L.vector_norm, sample_inputs=s_vector_norm, differentiable=True,
       dtypes=FLOATS),
    _P("linalg.matrix_norm", L.matrix_norm, sample_inputs=s_matrix_norm(),
       differentiable=True, dtypes=FLOATS),
    _P("linalg.norm", L.norm, sample_inputs=s_matrix_norm(True), differentiable=True,
       dtypes=FLOATS),
    # PyTorch's top-level spellings (and Tensor methods, from their declarations)
    _P("det", sample_inputs=s_square(), differentiable=True, dtypes=F64),
    _P("logdet", sample_inputs=s_square(_spd), differentiable=True, dtypes=F64),
    _P("slogdet", sample_inputs=s_square(), differentiable=True, dtypes=F64),
    _P("inverse", sample_inputs=s_square(), differentiable=True, dtypes=F64),
    _P("cholesky", lambda A, *a: plugrad.cholesky(_sym_of(A), *a),
       method=lambda args, kw: _sym_of(args[0]).cholesky(*args[1:], **kw),
       sample_inputs=s_rect(_spd, ((3, 3), (2, 2, 2))), differentiable=True, dtypes=F64),
    _P("qr", lambda A, *a: plugrad.qr(A, *a), method=lambda args, kw: args[0].qr(*args[1:], **kw),
       sample_inputs=s_rect(_distinct_sv, ((3, 2), (2, 3))), differentiable=True, dtypes=F64),
    _P("svd", lambda A, *a, **kw: _fix_torch_svd(plugrad.svd(A, *a, **kw)),
       method=lambda args, kw: _fix_torch_svd(args[0].svd(*args[1:], **kw)),
       sample_inputs=s_rect(kwargs=({}, {"some": False})), differentiable=True, dtypes=F64),
    _P("pinverse", sample_inputs=s_rect(), differentiable=True, dtypes=F64),
    _P("matrix_power", sample_inputs=s_matrix_power, differentiable=True, dtypes=ALL),
)


def _fix_torch_svd(usv):
    U, S, V = usv
    U, S, Vh = _fix_svd(U, S, V.mT)
    return U, S, Vh.mT


# ---------------------------------------------------------------------- kernels
def k_solve(make, dtype):
    yield S((_mat(make, _general(make, 3, 3)), make(3, 2)), name="3x3")
    yield S((_mat(make, _general(make, 2, 2, 2), layout="T"), make(2, 2, 1)), name="batched")


def k_one(gen, shapes):
    def samples(make, dtype):
        for shape in shapes:
            yield S((_mat(make, gen(make, *shape)),), name=f"{shape}")
    return samples


def k_flagged(gen, shapes, flags):
    def samples(make, dtype):
        for shape in shapes:
            for f in flags:
                yield S((_mat(make, gen(make, *shape)),) + tuple(f), name=f"{shape} {f}")
    return samples


_add(
    _K("linalg_solve", k_solve, F64),
    _K("linalg_slogdet", k_one(_general, ((3, 3), (2, 2, 2))), F64),
    _K("linalg_cholesky", k_one(_spd, ((3, 3), (2, 2, 2))), F64),
    _K("linalg_qr", k_flagged(_distinct_sv, ((3, 2), (2, 3)), ((False,), (True,))), F64,
       fn=k_qr_fixed),
    _K("linalg_eigh", k_flagged(_sym, ((3, 3), (2, 2, 2)), ((False,), (True,))), F64,
       fn=k_eigh_fixed),
    _K("linalg_svd", k_flagged(_distinct_sv, ((3, 2), (2, 3)),
                               ((False, True), (True, True), (False, False))), F64,
       fn=k_svd_fixed),
)

#: The optional linalg kernels (no composite) each entry needs: skipped where missing.
NEEDS = {
    **{n: ("linalg_solve",) for n in ("linalg.inv", "linalg.solve", "inverse",
                                      "linalg.solve_triangular",
                                      "linalg.matrix_power", "matrix_power")},
    **{n: ("linalg_slogdet", "linalg_solve") for n in ("linalg.det", "linalg.slogdet", "det",
                                                       "slogdet", "logdet")},
    **{n: ("linalg_cholesky", "linalg_solve") for n in ("linalg.cholesky", "cholesky")},
    **{n: ("linalg_qr", "linalg_solve") for n in ("linalg.qr", "qr")},
    **{n: ("linalg_eigh",) for n in ("linalg.eigh", "linalg.eigvalsh")},
    **{n: ("linalg_svd",) for n in ("linalg.svd", "linalg.svdvals", "linalg.pinv", "svd",
                                    "pinverse", "linalg.matrix_norm", "linalg.norm",
                                    "linalg.matrix_rank")},
    "linalg.cond": ("linalg_svd", "linalg_solve"),
    **{n: (n,) for n in ("linalg_solve", "linalg_slogdet", "linalg_cholesky", "linalg_qr",
                         "linalg_eigh", "linalg_svd")},
}


def missing_kernels(op: OpInfo, device: str) -> list[str]:
    """The kernels ``op`` needs that ``device``'s backend does not have."""
    need = NEEDS.get(op.name)
    if not need:
        return []
    from plugrad.core.registry import get_registry
    sources = get_registry().table(device).sources
    return [k for k in need if sources.get(k) == "composite"]
