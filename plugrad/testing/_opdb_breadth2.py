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
    # (PyTorch's gradient for an integer exponent is g * pow(2, e) in the integer dtype: 0
    # for e < 0, not the derivative, so gradcheck takes only non-negative exponents)
    yield S((make(2, 3), make(2, 3, low=0, high=4, dtype="int64")), name="int exponent")
    yield S((make(2, 3), make(3, low=0, high=3, dtype="int64")), name="broadcast")
    yield S((make(2, 3), make(2, 3, low=-3, high=3, dtype="int64")), name="negative exponent",
            grad=False)
    yield S((make(2, 3), make(2, 3, low=-3, high=3)), name="float exponent")


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


# the volumetric and sampling nn ops of this round: plugrad/testing/_opdb_volumetric.py
from plugrad.testing import _opdb_volumetric  # noqa: E402,F401
