"""The op database's entries for the second round of issue 15's names: the math ops of
``plugrad.core.ops.math_more``, the tensor ops of ``tensor_more`` and the numerical helpers
of ``numeric_more`` (cov, trapezoid, vander, addmv, renorm, histogram, windows, ...).

Each gets forward-vs-ref in every listed dtype, float64 gradcheck, the bit-equality of the
two backward bindings, and its method and in-place forms. The comparisons with PyTorch are
in ``tests/core/test_breadth2_vs_torch.py``. Samples are tiny (``ref`` is pure Python) and
avoid ties and kinks where a gradient is checked.
"""
from __future__ import annotations

import plugrad
from plugrad.testing.opdb import (ALL, FLOATS, INTS, NUMS, SampleInput as S, _add, _P,
                                  s_binary, s_unary)

F3264 = ("float32", "float64")

#: Public names of this area that are not ops: why each is left out.
NOT_OPS_BREADTH2 = {
    "imag": "raises for every tensor (no complex dtypes): tests/core/test_breadth2_vs_torch.py",
    "hann_window": "factory (a window of a length): tests/core/test_breadth2_vs_torch.py",
    "hamming_window": "factory (a window of a length): tests/core/test_breadth2_vs_torch.py",
    "blackman_window": "factory (a window of a length): tests/core/test_breadth2_vs_torch.py",
    "bartlett_window": "factory (a window of a length): tests/core/test_breadth2_vs_torch.py",
    "kaiser_window": "factory (a window of a length): tests/core/test_breadth2_vs_torch.py",
    "unravel_index": "index arithmetic on Python shapes: tests/core/test_breadth2_vs_torch.py",
}


def _int_pair(make, dtype):
    yield S((make(2, 3, low=-12, high=12), make(2, 3, low=-12, high=12)), name="same shape")
    yield S((make(2, 3, low=-12, high=12), make(3, low=0, high=0)), name="with zeros")
    yield S((make(low=-9, high=9), make(2, low=-9, high=9)), name="0-d")


def s_nan_to_num(make, dtype):
    x = make(2, 3)
    if dtype in FLOATS:
        special = plugrad.tensor([[float("nan"), float("inf"), -float("inf")], [0, 0, 0]],
                                 device=x.device).to(x.dtype)
        mask = plugrad.tensor([[True] * 3, [False] * 3], device=x.device)
        # (the default infinity replacements are the dtype's own limits, which the float64
        # reference cannot share: tests/core/test_breadth2_vs_torch.py checks those)
        yield S((x.where(~mask, special), 1.0, 2.0, -3.0), name="given", grad=False)
    yield S((make(2, 3),), name="finite")
    yield S((make(),), name="0-d")


def s_ldexp(make, dtype):
    yield S((make(2, 3), make(2, 3, low=-3, high=3, dtype="int64")), name="int exponent")
    yield S((make(2, 3), make(3, low=-2, high=2, dtype="int64")), name="broadcast")


def s_nextafter(make, dtype):
    yield S((make(2, 3), make(2, 3)), name="same shape")
    yield S((make(2, 3), make(3)), name="broadcast")


def s_positive_floats(low, high):
    def gen(make, dtype):
        yield S((make(2, 3, low=low, high=high),), name="2x3")
        yield S((make(low=low, high=high),), name="0-d")
        yield S((make(3, 2, low=low, high=high, layout="T"),), name="transposed")
    return gen


def s_mvlgamma(make, dtype):
    yield S((make(2, 3, low=1.5, high=4.0), 1), name="p 1")
    yield S((make(3, low=2.5, high=4.0), 3), name="p 3")


def s_select(make, dtype):
    yield S((make(3, 4), 0, 1), name="dim 0")
    yield S((make(3, 4), -1, -2), name="dim -1 index -2")
    yield S((make(2, 3, 2, layout="T"), 1, 2), name="transposed")


def s_atleast(make, dtype):
    yield S((make(),), name="0-d")
    yield S((make(3),), name="1-d")
    yield S((make(2, 3),), name="2-d")
    yield S((make(2, 1, 3),), name="3-d")


def s_stack_pair(make, dtype):
    yield S(([make(3), make(3)],), name="1-d", method=False)
    yield S(([make(2, 3), make(2, 1)],), name="2-d", method=False)
    yield S(([make(), make()],), name="0-d", method=False)


def s_dstack(make, dtype):
    yield S(([make(3), make(3)],), name="1-d", method=False)
    yield S(([make(2, 3), make(2, 3, 2)],), name="2-d and 3-d", method=False)
    yield S(([make(), make()],), name="0-d", method=False)


def _scales(dtype):
    if dtype == "bool":
        return {"beta": True, "alpha": True}
    return {"beta": 2, "alpha": 3} if dtype in INTS else {"beta": 0.5, "alpha": 2.0}


def s_hsplit(make, dtype):
    yield S((make(2, 4), 2), name="2 sections")
    yield S((make(6), [1, 4]), name="1-d at indices")


def s_vsplit(make, dtype):
    yield S((make(4, 2), 2), name="2 sections")
    yield S((make(3, 2), [1]), name="at index")


def s_dsplit(make, dtype):
    yield S((make(2, 2, 4), 2), name="2 sections")


def s_split_sizes(make, dtype):
    yield S((make(5, 2), [2, 3]), name="dim 0")
    yield S((make(2, 5), [1, 1, 3], 1), name="dim 1")


def s_chunkish(make, dtype):
    yield S((make(5, 2), 2), name="dim 0")
    yield S((make(2, 6), 3, 1), name="dim 1")


def s_combinations(make, dtype):
    yield S((make(4),), name="pairs")
    yield S((make(3), 3), name="triples")
    yield S((make(3), 2, True), name="with replacement")


def s_select_scatter(make, dtype):
    yield S((make(3, 4), make(4), 0, 1), name="dim 0")
    yield S((make(3, 4), make(3), 1, -1), name="dim 1 index -1")


def s_diagonal_scatter(make, dtype):
    yield S((make(3, 3), make(3)), name="main")
    yield S((make(3, 4), make(3), 1), name="offset 1")
    yield S((make(2, 3, 3), make(2, 3), 0, 1, 2), name="batched")


def s_put(make, dtype):
    yield S((make(2, 3), plugrad.tensor([0, 5, -2], device=make.device), make(3)), name="set")
    # a repeated place: the last write wins, and (PyTorch's rule, not the derivative: no
    # gradcheck) every source element gets the place's gradient
    yield S((make(2, 3), plugrad.tensor([0, 5, -1], device=make.device), make(3)),
            name="set repeated", grad=False)
    if dtype != "bool":
        dup = plugrad.tensor([1, 1, 4], device=make.device)
        yield S((make(2, 3), dup, make(3), True), name="accumulate duplicates")


def s_index_reduce(make, dtype):
    idx = plugrad.tensor([0, 2, 0], device=make.device)
    for red in ("prod", "amax", "amin"):
        yield S((make(3, 2, low=0.5, high=2), 0, idx, make(3, 2, low=0.5, high=2), red),
                name=red, grad=red == "prod")
    if dtype in FLOATS:
        yield S((make(3, 2), 0, idx, make(3, 2), "mean"), name="mean")
        yield S((make(3, 2), 0, idx, make(3, 2), "mean"), {"include_self": False},
                name="mean without self")


def s_fill_diagonal(make, dtype):
    v = True if dtype == "bool" else 3
    yield S((make(3, 3), v), name="square", method=False)
    yield S((make(5, 2), v, True), name="tall wrap", method=False)
    yield S((make(2, 2, 2), v), name="cube", method=False)


def s_sum_to_size(make, dtype):
    yield S((make(2, 3), (1, 3)), name="keep cols")
    yield S((make(2, 3, 4), (3, 1)), name="lead and inner")


def s_type_as(make, dtype):
    yield S((make(2, 3), make(2)), name="same dtype")
    yield S((make(2, 3), make(2, dtype="int64")), name="to int64", grad=False)


def s_cov(make, dtype):
    yield S((make(3, 5),), name="rows")
    yield S((make(6),), name="1-d")
    yield S((make(2, 4),), {"correction": 0}, name="correction 0")
    fw = plugrad.tensor([1, 2, 1, 3], device=make.device)
    aw = plugrad.tensor([0.5, 1.0, 2.0, 1.5], device=make.device,
                        dtype=getattr(plugrad, dtype if dtype in FLOATS else "float64"))
    # (an integer input takes the weights' dtype, as in PyTorch: float64, which the
    # reference computes in too)
    yield S((make(2, 4),), {"fweights": fw, "aweights": aw}, name="weights")


def s_corrcoef(make, dtype):
    yield S((make(3, 5),), name="rows")


def s_trapz(make, dtype):
    yield S((make(2, 5),), name="dx 1")
    yield S((make(2, 5),), {"dx": 0.5}, name="dx 0.5")
    yield S((make(4, 3), make(4, dtype="float64" if dtype == "float64" else dtype)),
            {"dim": 0}, name="x samples dim 0")


def s_vander(make, dtype):
    yield S((make(3),), name="square")
    yield S((make(4), 3), name="N 3")
    yield S((make(3), 4, True), name="increasing")


def s_addmv(make, dtype):
    yield S((make(2), make(2, 3), make(3)), name="plain")
    yield S((make(1), make(2, 3), make(3)), _scales(dtype), name="scaled")


def s_addr(make, dtype):
    yield S((make(2, 3), make(2), make(3)), name="plain")
    yield S((make(3), make(2), make(3)), _scales(dtype), name="broadcast scaled")


def s_addbmm(make, dtype):
    yield S((make(2, 4), make(3, 2, 3), make(3, 3, 4)), name="plain")
    yield S((make(2, 4), make(2, 2, 3), make(2, 3, 4)), _scales(dtype), name="scaled")


def s_chain_matmul(make, dtype):
    yield S((make(2, 3), make(3, 4), make(4, 2)), name="three", method=False)


def s_dist(make, dtype):
    yield S((make(2, 3), make(2, 3)), name="p 2")
    yield S((make(2, 3), make(3), 1), name="p 1 broadcast")
    yield S((make(4), make(4), 3), name="p 3")


def s_renorm(make, dtype):
    yield S((make(3, 4), 2, 0, 1.0), name="rows")
    yield S((make(3, 4), 1, 1, 2.0), name="cols p 1")


def s_matrix_norms(make, dtype):
    yield S((make(3, 4), (0, 1)), name="2-d")
    yield S((make(2, 3, 3), (1, 2), True), name="batched keepdim")


def s_norm_except_dim(make, dtype):
    yield S((make(3, 4), 2, 0), name="dim 0")
    yield S((make(3, 4), 2, 1), name="dim 1")


def s_isin(make, dtype):
    yield S((make(3, 4, low=-3, high=3), make(3, low=-3, high=3)), name="tensors")
    yield S((make(5, low=-2, high=2), make(3, low=-2, high=2)), {"invert": True},
            name="invert")


def s_histogram(make, dtype):
    yield S((make(20),), {"bins": 4}, name="4 bins")
    yield S((make(10),), {"bins": 3, "range": (-1.0, 1.0)}, name="range")
    yield S((make(10),), {"bins": 3, "weight": make(10, low=0.0, high=1.0), "density": True},
            name="weights density")


def s_adjoint(make, dtype):
    yield S((make(2, 3),), name="2-d")
    yield S((make(2, 3, 4),), name="batched")


def s_frexp(make, dtype):
    yield from s_unary(-3.0, 3.0, nonzero=True)(make, dtype)


_add(
    _P("fmax", sample_inputs=s_binary(scalars=False), differentiable=True, dtypes=ALL),
    _P("fmin", sample_inputs=s_binary(scalars=False), differentiable=True, dtypes=ALL),
    _P("gcd", sample_inputs=_int_pair, dtypes=INTS),
    _P("lcm", sample_inputs=_int_pair, dtypes=INTS),
    _P("heaviside", sample_inputs=s_binary(scalars=False), dtypes=ALL),
    _P("isposinf", sample_inputs=s_unary(), dtypes=ALL),
    _P("isneginf", sample_inputs=s_unary(), dtypes=ALL),
    _P("signbit", sample_inputs=s_unary(), dtypes=ALL),
    _P("sgn", sample_inputs=s_unary(nonzero=True), differentiable=True, dtypes=ALL),
    _P("positive", sample_inputs=s_unary(), differentiable=True, dtypes=NUMS),
    _P("isreal", sample_inputs=s_unary(), dtypes=ALL),
    _P("conj", sample_inputs=s_unary(), differentiable=True, dtypes=ALL),
    _P("real", sample_inputs=s_unary(), differentiable=True, dtypes=ALL),
    _P("adjoint", sample_inputs=s_adjoint, differentiable=True, dtypes=ALL),
    _P("frexp", sample_inputs=s_frexp, differentiable=True, dtypes=FLOATS),
    _P("ldexp", sample_inputs=s_ldexp, differentiable=True, dtypes=ALL),
    _P("nextafter", sample_inputs=s_nextafter, dtypes=FLOATS),
    _P("i0", sample_inputs=s_unary(-4.0, 4.0), differentiable=True, dtypes=ALL),
    _P("mvlgamma", sample_inputs=s_mvlgamma, differentiable=True, dtypes=NUMS),
    _P("atleast_2d", sample_inputs=s_atleast, differentiable=True, dtypes=ALL),
    _P("atleast_3d", sample_inputs=s_atleast, differentiable=True, dtypes=ALL),
    _P("column_stack", sample_inputs=s_stack_pair, differentiable=True, dtypes=ALL),
    _P("dstack", sample_inputs=s_dstack, differentiable=True, dtypes=ALL),
    _P("hsplit", sample_inputs=s_hsplit, differentiable=True, dtypes=ALL),
    _P("vsplit", sample_inputs=s_vsplit, differentiable=True, dtypes=ALL),
    _P("dsplit", sample_inputs=s_dsplit, differentiable=True, dtypes=ALL),
    _P("split_with_sizes", sample_inputs=s_split_sizes, differentiable=True, dtypes=ALL),
    _P("unsafe_split", sample_inputs=s_chunkish, differentiable=True, dtypes=ALL),
    _P("unsafe_chunk", sample_inputs=s_chunkish, differentiable=True, dtypes=ALL),
    _P("combinations", sample_inputs=s_combinations, differentiable=True, dtypes=ALL),
    _P("sum_to_size", lambda x, s: x.sum_to_size(s), sample_inputs=s_sum_to_size,
       differentiable=True, method="sum_to_size", dtypes=ALL),
    _P("select_scatter", sample_inputs=s_select_scatter, differentiable=True, dtypes=ALL),
    _P("diagonal_scatter", sample_inputs=s_diagonal_scatter, differentiable=True, dtypes=ALL),
    _P("put", sample_inputs=s_put, differentiable=True, dtypes=ALL),
    _P("index_reduce", lambda x, *a, **k: x.index_reduce(*a, **k),
       sample_inputs=s_index_reduce, differentiable=True, method="index_reduce",
       inplace="index_reduce_", dtypes=ALL),
    _P("fill_diagonal_", lambda x, *a: x.clone().fill_diagonal_(*a),
       sample_inputs=s_fill_diagonal, differentiable=True, dtypes=ALL),
    _P("cov", sample_inputs=s_cov, differentiable=True, dtypes=NUMS),
    _P("corrcoef", sample_inputs=s_corrcoef, differentiable=True, dtypes=NUMS),
    _P("trapezoid", sample_inputs=s_trapz, differentiable=True, dtypes=NUMS),
    _P("trapz", sample_inputs=s_trapz, differentiable=True, dtypes=NUMS),
    _P("cumulative_trapezoid", sample_inputs=s_trapz, differentiable=True, dtypes=NUMS),
    _P("vander", sample_inputs=s_vander, differentiable=True, dtypes=ALL),
    _P("addmv", sample_inputs=s_addmv, differentiable=True, dtypes=NUMS),
    _P("addr", sample_inputs=s_addr, differentiable=True, dtypes=ALL),
    _P("addbmm", sample_inputs=s_addbmm, differentiable=True, dtypes=NUMS),
    _P("chain_matmul", lambda *ms: plugrad.chain_matmul(*ms), sample_inputs=s_chain_matmul,
       differentiable=True, dtypes=NUMS),
    _P("dist", sample_inputs=s_dist, differentiable=True, dtypes=FLOATS),
    _P("renorm", sample_inputs=s_renorm, differentiable=True, dtypes=FLOATS),
    _P("frobenius_norm", sample_inputs=s_matrix_norms, differentiable=True, dtypes=FLOATS),
    _P("nuclear_norm", sample_inputs=s_matrix_norms, differentiable=True, dtypes=F3264),
    _P("norm_except_dim", sample_inputs=s_norm_except_dim, differentiable=True,
       dtypes=FLOATS),
    _P("isin", sample_inputs=s_isin, dtypes=NUMS),
    _P("histogram", sample_inputs=s_histogram, dtypes=F3264),
)


# ---------------------------------------------------------------------- volumetric, sampling
import plugrad.nn.functional as F  # noqa: E402
from plugrad.testing.opdb import OpInfo  # noqa: E402

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
    _F("conv3d", s_conv3d),
    _F("conv_transpose3d", s_conv_transpose3d),
    _F("max_pool3d", s_pool3d, dtypes=_MAX_POOL),
    _F("avg_pool3d", s_pool3d),
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
    lu_, piv = LA.lu_factor(_square(make, "float64", 3, 3))
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
    _P("lu_unpack", sample_inputs=s_lu_unpack, differentiable=True, dtypes=FLOATS),
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
