"""Op-database entries of issue 15's second round, nn side: volumetric convolutions and
pools, unpooling, channel shuffle, grid sampling and CTC (the tensor side is
:mod:`plugrad.testing._opdb_breadth2`)."""
from __future__ import annotations

import plugrad
import plugrad.nn.functional as F
from plugrad.testing._opdb_breadth2 import NOT_OPS_BREADTH2
from plugrad.testing.opdb import ALL, FLOATS, INTS, OpInfo, SampleInput as S, _add, _P

NOT_OPS_BREADTH2.update({
    "nn.functional.gumbel_softmax": "random sampling: tests/nn/test_volumetric_vs_torch.py",
})


#: PyTorch's CPU max pools (but not plain max_pool1d, nor the adaptive ones) take integers
_MAX_POOL = FLOATS + ("uint8",) + INTS


def _F(name, sample_inputs, **kw) -> OpInfo:
    kw.setdefault("dtypes", FLOATS)
    kw.setdefault("differentiable", True)
    return OpInfo(f"nn.functional.{name}", getattr(F, name), sample_inputs, kind="public",
                  **kw)


def s_conv3d(make, dtype):
    yield S((make(1, 2, 3, 3, 3), make(2, 2, 2, 2, 2), make(2)), name="bias", method=False)
    yield S((make(1, 2, 4, 3, 3), make(2, 1, 2, 1, 2)), {"stride": (2, 1, 1), "padding": 1,
                                                         "groups": 2}, name="strided groups",
            method=False)


def s_conv_transpose3d(make, dtype):
    yield S((make(1, 2, 2, 2, 2), make(2, 1, 2, 2, 2), make(1)), name="bias", method=False)
    yield S((make(1, 2, 2, 2, 1), make(2, 1, 2, 1, 2)), {"stride": 2, "output_padding": 1},
            name="strided", method=False)


def s_pool3d(make, dtype):
    yield S((make(1, 2, 3, 4, 4), 2), name="k 2", method=False)
    yield S((make(1, 1, 4, 3, 3), (2, 2, 1), 1, (1, 0, 0)), name="stride 1 pad", method=False)


def s_adaptive3d(make, dtype):
    yield S((make(1, 2, 3, 4, 3), (2, 3, 2)), name="uneven", method=False)
    yield S((make(1, 1, 4, 2, 2), 2), name="even", method=False)


def s_lp_pool3d(make, dtype):
    yield S((make(1, 1, 2, 4, 4, low=0.5, high=2.0), 2.0, 2), name="p 2", method=False)


def s_with_indices(nd):
    def gen(make, dtype):
        shape = (1, 2) + (4,) * nd
        yield S((make(*shape), 2), name="k 2", method=False)
    return gen


def s_adaptive_with_indices(nd):
    def gen(make, dtype):
        shape = (1, 2) + (4,) * nd
        yield S((make(*shape), 3), name="out 3", method=False)
    return gen


def s_unpool(nd):
    def gen(make, dtype):
        shape = (1, 2) + (2,) * nd
        positions = plugrad.tensor([[[0, 3], [2, 1]]] if nd == 1 else
                                   ([[[[0, 3], [9, 14]], [[4, 7], [8, 15]]]] if nd == 2 else
                                    [[[[[0, 3], [9, 14]], [[20, 23], [40, 63]]],
                                      [[[1, 2], [8, 15]], [[16, 31], [48, 55]]]]]),
                                   device=make.device)
        yield S((make(*shape), positions, 2), name="k 2", method=False)
    return gen


def s_channel_shuffle(make, dtype):
    yield S((make(1, 4, 2, 3), 2), name="2 groups", method=False)


def s_affine_grid(make, dtype):
    yield S((make(2, 2, 3), (2, 1, 3, 2)), {"align_corners": False}, name="2-d", method=False)
    yield S((make(1, 3, 4), (1, 1, 2, 2, 3)), {"align_corners": True}, name="3-d",
            method=False)


def s_grid_sample(make, dtype):
    for mode, pad in (("bilinear", "zeros"), ("bilinear", "border"),
                      ("bilinear", "reflection"), ("nearest", "zeros")):
        yield S((make(1, 2, 3, 3), make(1, 2, 2, 2, low=-1.2, high=1.2)),
                {"mode": mode, "padding_mode": pad, "align_corners": False},
                name=f"{mode} {pad}", method=False, grad=mode == "bilinear")
    yield S((make(1, 1, 2, 3, 2), make(1, 2, 1, 2, 3, low=-1.0, high=1.0)),
            {"align_corners": True}, name="trilinear", method=False)


def s_ctc(make, dtype):
    lp = make(5, 2, 4)
    lp = lp.log_softmax(2) if dtype in FLOATS else lp
    targets = plugrad.tensor([[1, 2, 2], [3, 1, 0]], device=make.device)
    yield S((lp, targets, [5, 4], [3, 2]), name="mean", method=False)
    yield S((lp, targets, [5, 4], [3, 2]), {"reduction": "none"}, name="none", method=False)


_add(
    _F("conv3d", s_conv3d, dtypes=FLOATS + INTS),
    _F("conv_transpose3d", s_conv_transpose3d, dtypes=FLOATS + ("int64",)),
    _F("max_pool3d", s_pool3d, dtypes=_MAX_POOL),
    _F("avg_pool3d", s_pool3d, dtypes=FLOATS + ("int64",)),
    _F("lp_pool3d", s_lp_pool3d, dtypes=ALL),
    _F("adaptive_avg_pool3d", s_adaptive3d),
    _F("adaptive_max_pool3d", s_adaptive3d),
    _F("max_pool1d_with_indices", s_with_indices(1), dtypes=_MAX_POOL),
    _F("max_pool2d_with_indices", s_with_indices(2), dtypes=_MAX_POOL),
    _F("max_pool3d_with_indices", s_with_indices(3), dtypes=_MAX_POOL),
    _F("adaptive_max_pool1d_with_indices", s_adaptive_with_indices(1)),
    _F("adaptive_max_pool2d_with_indices", s_adaptive_with_indices(2)),
    _F("adaptive_max_pool3d_with_indices", s_adaptive_with_indices(3)),
    _F("max_unpool1d", s_unpool(1)),
    _F("max_unpool2d", s_unpool(2)),
    _F("max_unpool3d", s_unpool(3)),
    _F("channel_shuffle", s_channel_shuffle, dtypes=ALL),
    _F("native_channel_shuffle", s_channel_shuffle, dtypes=ALL),
    _F("affine_grid", s_affine_grid),
    _F("grid_sample", s_grid_sample),
    _F("ctc_loss", s_ctc, xfails={("test_gradcheck", "*", "float64"):
                                  "PyTorch's gradient w.r.t. log_probs folds log_softmax in "
                                  "(the logits' gradient: the derivative plus exp(log_probs))"
                                  ", not finite differences in log_probs; compared with "
                                  "torch in tests/nn/test_pool_special_vs_torch.py"}),
)


# ---------------------------------------------------------------------- linalg (LU family, ...)
import numpy as np  # noqa: E402,I001

import plugrad.linalg as LA  # noqa: E402


def _square(make, dtype, *shape):
    """A well-conditioned square matrix: random plus a dominant diagonal."""
    a = make.values(shape, "float64") + 3.0 * np.eye(shape[-1])
    return plugrad.tensor(a.astype(dtype), device=make.device)


def s_lu_square(make, dtype):
    yield S((_square(make, dtype, 3, 3),), name="3x3", method=False)
    yield S((_square(make, dtype, 2, 3, 3),), name="batched", method=False)


def s_lu_rect(make, dtype):
    yield S((make(4, 3),), name="tall", method=False)
    yield S((make(2, 3),), name="wide", method=False)


def s_lu_solve(make, dtype):
    yield S((_square(make, dtype, 3, 3), make(3, 2)), name="left", method=False)
    yield S((_square(make, dtype, 2, 3, 3), make(2, 3, 1)), {"adjoint": True},
            name="adjoint batched", method=False)


def _lu_solve(A, B, **kw):
    return LA.lu_solve(*LA.lu_factor(A), B, **kw)


def _torch_lu_solve(A, B):
    return plugrad.lu_solve(B, *LA.lu_factor(A))


def s_matrix_exp(make, dtype):
    yield S((make(3, 3),), name="3x3")
    yield S((make(2, 2, 2, low=-3.0, high=3.0),), name="batched, scaled")


def s_lstsq(make, dtype):
    yield S((make(4, 2), make(4, 1)), name="tall", method=False)


def s_spd_rhs(make, dtype):
    a = make.values((3, 3), "float64")
    spd = a @ a.T + 3.0 * np.eye(3)
    chol = plugrad.tensor(np.linalg.cholesky(spd).astype(dtype), device=make.device)
    yield S((make(3, 2), chol), name="lower", method=False)


def s_chol_inverse(make, dtype):
    a = make.values((3, 3), "float64")
    chol = np.linalg.cholesky(a @ a.T + 3.0 * np.eye(3))
    yield S((plugrad.tensor(chol.astype(dtype), device=make.device),), name="lower",
            method=False)


def s_triangular(make, dtype):
    yield S((make(3, 2), _square(make, dtype, 3, 3)), name="upper", method=False)
    yield S((make(3, 1), _square(make, dtype, 3, 3), False, True), name="lower transposed",
            method=False)


def s_orgqr(make, dtype):
    yield S((make(4, 3), make(3, low=0.5, high=1.5)), name="4x3", method=False)


def s_tensorinv(make, dtype):
    yield S((_square(make, dtype, 4, 4).reshape(2, 2, 4),), {"ind": 2}, name="2x2x4",
            method=False)


def s_tensorsolve(make, dtype):
    yield S((_square(make, dtype, 4, 4).reshape(2, 2, 4), make(2, 2)), name="2x2x4",
            method=False)


def s_lu_unpack(make, dtype):
    lu_, piv, _ = LA.lu_factor_ex(_square(make, "float64", 3, 3))
    yield S((lu_.to(getattr(plugrad, dtype)), piv), name="3x3", method=False)


def _with_method(gen):
    def out(make, dtype):
        for sample in gen(make, dtype):
            sample.method = True
            yield sample
    return out


def s_lu_solve_old(make, dtype):
    yield S((_square(make, dtype, 3, 3), make(3, 2)), name="3x3")


s_lu_methods, s_orgqr_m = _with_method(s_lu_square), _with_method(s_orgqr)
s_spd_rhs_m, s_chol_inverse_m = _with_method(s_spd_rhs), _with_method(s_chol_inverse)
s_triangular_m = _with_method(s_triangular)

F64 = ("float32", "float64")
_add(
    OpInfo("linalg.lu_factor", LA.lu_factor, s_lu_square, kind="public", differentiable=True,
           dtypes=F64),
    # (a program, not the function itself: the entry's name is no torch name, and the
    # differential suite runs the program on torch)
    OpInfo("linalg.lu_factor rect", lambda A: LA.lu_factor(A), s_lu_rect, kind="public",
           differentiable=True, dtypes=F64),
    OpInfo("linalg.lu", LA.lu, s_lu_square, kind="public", differentiable=True, dtypes=F64),
    OpInfo("linalg.lu_solve", _lu_solve, s_lu_solve, kind="public", differentiable=True,
           dtypes=F64),
    OpInfo("linalg.matrix_exp", LA.matrix_exp, s_matrix_exp, kind="public",
           differentiable=True, dtypes=F64),
    OpInfo("linalg.lstsq", LA.lstsq, s_lstsq, kind="public", differentiable=True, dtypes=F64),
    OpInfo("linalg.inv_ex", LA.inv_ex, s_lu_square, kind="public", differentiable=True,
           dtypes=F64),
    OpInfo("linalg.householder_product", LA.householder_product, s_orgqr, kind="public",
           differentiable=True, dtypes=F64),
    OpInfo("linalg.tensorinv", LA.tensorinv, s_tensorinv, kind="public", differentiable=True,
           dtypes=F64),
    OpInfo("linalg.tensorsolve", LA.tensorsolve, s_tensorsolve, kind="public",
           differentiable=True, dtypes=F64),
    _P("lu", sample_inputs=s_lu_methods, differentiable=True, dtypes=F64),
    _P("lu_solve", _torch_lu_solve, sample_inputs=s_lu_solve_old, differentiable=True,
       dtypes=F64, method=lambda args, kw: args[1].lu_solve(*LA.lu_factor(args[0]))),
    _P("lu_unpack", sample_inputs=s_lu_unpack, differentiable=True, dtypes=ALL),
    _P("matrix_exp", sample_inputs=s_matrix_exp, differentiable=True, dtypes=F64),
    _P("orgqr", sample_inputs=s_orgqr_m, differentiable=True, dtypes=F64),
    # (PyTorch's rules give the factor's other triangle a gradient, which the forward does
    # not read: the function forms take the triangle first so that gradcheck applies; the
    # method forms, compared with torch, keep the whole factor)
    _P("cholesky_solve", lambda B, L, upper=False: plugrad.cholesky_solve(
        B, L.triu() if upper else L.tril(), upper), sample_inputs=s_spd_rhs_m,
       differentiable=True, dtypes=F64),
    _P("cholesky_inverse", lambda L, upper=False: plugrad.cholesky_inverse(
        L.triu() if upper else L.tril(), upper), sample_inputs=s_chol_inverse_m,
       differentiable=True, dtypes=F64),
    _P("triangular_solve", sample_inputs=s_triangular_m, differentiable=True, dtypes=F64),
)

# the optional linalg kernels (no composite) these entries need: skipped where missing
from plugrad.testing import _opdb_linalg  # noqa: E402

_opdb_linalg.NEEDS.update({
    "nuclear_norm": ("linalg_svd",),
    "linalg.lstsq": ("linalg_svd",),
    **{n: ("linalg_solve",) for n in (
        "linalg.lu_solve", "linalg.inv_ex", "linalg.tensorinv", "linalg.tensorsolve",
        "lu_solve", "cholesky_solve", "cholesky_inverse", "triangular_solve")},
})
