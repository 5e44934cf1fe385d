"""The op database's entries for issue 15's tensor ops: order statistics, scans, unique,
diagonals, products, binning, index writes and ``scatter_reduce``.

Each gets the checks every entry gets (forward against the reference backend in every
listed dtype, float64 ``gradcheck``, the bit-equality of the two backward bindings, method
and in-place forms). Comparisons with PyTorch itself are in
``tests/core/test_tensor_ops_vs_torch.py``. Samples stay tiny (the reference backend is pure
Python) and avoid ties where a gradient is checked.
"""
from __future__ import annotations

import numpy as np

import plugrad

from plugrad.testing.opdb import (ALL, FLOATS, INTS, NUMS, OpInfo, SampleInput as S,
                                  _add, _P)

F64 = ("float32", "float64")

#: Public names of this area that are not ops: why each is left out.
NOT_OPS_TENSOR = {
    "triu_indices": "factory (index pairs of a shape): tests/core/test_tensor_ops_vs_torch.py",
    "tril_indices": "factory (index pairs of a shape): tests/core/test_tensor_ops_vs_torch.py",
}


def _distinct(make, *shape):
    """Values without ties (sort-based gradients are smooth there): a shuffled range."""
    n = int(np.prod(shape)) if shape else 1
    vals = make.rng.permutation(n).reshape(shape) - n // 2
    if make.dtype in FLOATS:
        vals = vals * 0.25
    return plugrad.tensor(vals, dtype=getattr(plugrad, make.dtype), device=make.device)


# ---------------------------------------------------------------------- order statistics
def s_median(make, dtype):
    yield S((_distinct(make, 2, 5),), name="all")
    yield S((_distinct(make, 3, 4), 1), name="dim 1 (even)")
    yield S((_distinct(make, 3, 2), 0, True), name="dim 0 keepdim")
    yield S((make(),), name="0-d")
    yield S((make(0, 3), 1), name="zero rows", grad=False)


def s_kthvalue(make, dtype):
    yield S((_distinct(make, 2, 5), 2), name="k 2")
    yield S((_distinct(make, 4, 3), 4, 0, True), name="k 4 dim 0 keepdim")
    yield S((make(), 1), name="0-d")


def s_mode(make, dtype):
    yield S((make(3, 6, low=0, high=2),), name="repeats")
    yield S((make(4, 3, low=-1, high=1), 0, True), name="dim 0 keepdim")
    yield S((make(),), name="0-d")


def s_quantile(make, dtype):
    yield S((_distinct(make, 2, 5), 0.3), name="all, scalar q")
    q = plugrad.tensor([0.1, 0.25, 0.9], device=make.device).to(getattr(plugrad, dtype))
    yield S((_distinct(make, 3, 4), q, 1), name="dim 1, q tensor")
    for mode in ("lower", "higher", "midpoint", "nearest"):
        yield S((_distinct(make, 2, 5), 0.4, 1, True), {"interpolation": mode}, name=mode)


# ---------------------------------------------------------------------- scans, unique
def s_cum(make, dtype):
    yield S((_distinct(make, 2, 5), 1), name="dim 1")
    yield S((_distinct(make, 3, 2), 0), name="dim 0")
    yield S((make(3, 4, low=0, high=1), -1), name="ties", grad=False)
    yield S((make(), 0), name="0-d")
    yield S((make(0, 3), 1), name="empty")


def s_logcumsumexp(make, dtype):
    yield S((make(2, 5), 1), name="dim 1")
    yield S((make(3, 2, layout="T"), 0), name="dim 0 transposed")
    yield S((make(), 0), name="0-d")


def s_unique(make, dtype):
    yield S((make(3, 4, low=-2, high=2),), {"return_inverse": True, "return_counts": True},
            name="all, inverse, counts")
    yield S((make(4, 2, low=0, high=1),), {"dim": 0, "return_counts": True}, name="dim 0")
    yield S((make(0),), name="empty")


def s_unique_consecutive(make, dtype):
    yield S((make(8, low=0, high=1),), {"return_inverse": True, "return_counts": True},
            name="runs")
    yield S((make(4, 2, low=0, high=1),), {"dim": 0}, name="dim 0")


def s_aminmax(make, dtype):
    yield S((_distinct(make, 2, 3),), name="all")
    yield S((_distinct(make, 3, 2),), {"dim": 1, "keepdim": True}, name="dim 1 keepdim")


def s_nanmean(make, dtype):
    x = make(3, 4)
    if dtype not in FLOATS:  # (no NaN to put in; the op refuses the dtype anyway)
        yield S((x,), name="all")
        return
    x = x.masked_fill(plugrad.tensor([[True, False, False, False], [False] * 4,
                                      [True] * 4], device=x.device), float("nan"))
    yield S((x,), name="all", grad=False)
    yield S((make(3, 4),), {"dim": 1}, name="dim 1")
    yield S((x, 0, True), name="dim 0 keepdim, NaN", grad=False)


# ---------------------------------------------------------------------- arrangement
def s_tile(make, dtype):
    yield S((make(2, 3), (2,)), name="fewer reps")
    yield S((make(3), (2, 2)), name="more reps")


def s_diagonal(make, dtype):
    yield S((make(3, 4),), name="main")
    yield S((make(3, 4), 1), name="offset 1")
    yield S((make(2, 3, 4), -1, 2, 0), name="offset -1 dims 2, 0")
    yield S((make(2, 3), 5), name="empty")


def s_diag_embed(make, dtype):
    yield S((make(2, 3),), name="batched")
    yield S((make(3), 1), name="offset 1")
    yield S((make(2, 2), -1, 0, 2), name="offset -1 dims 0, 2")


def s_diag(make, dtype):
    yield S((make(3),), name="vector")
    yield S((make(3), -2), name="vector offset -2")
    yield S((make(3, 4), 1), name="matrix offset 1")


def s_diagflat(make, dtype):
    yield S((make(2, 2),), name="matrix")
    yield S((make(3), 1), name="offset 1")


def s_trace(make, dtype):
    yield S((make(3, 4),), name="3x4")
    yield S((make(2, 2, layout="T"),), name="transposed")


def s_take(make, dtype):
    yield S((make(3, 4), make.index((2, 3), 12)), name="2-d index")
    yield S((make(3, 2, layout="T"), make.index((4,), 6)), name="transposed")


def s_diff(make, dtype):
    yield S((make(2, 5),), name="last dim")
    yield S((make(4, 3), 2, 0), name="n 2 dim 0")
    yield S((make(2, 3), 1, 1, make(2, 1), make(2, 2)), name="prepend, append")


def s_rot90(make, dtype):
    yield S((make(2, 3),), name="k 1")
    yield S((make(2, 3, 2), 3, (2, 0)), name="k 3 dims 2, 0")
    yield S((make(2, 3), -2), name="k -2")


def s_unfold(make, dtype):
    yield S((make(2, 5), 1, 2, 1), name="size 2 step 1")
    yield S((make(5, 2), 0, 2, 2), name="dim 0 step 2")
    yield S((make(), 0, 1, 1), name="0-d")


def s_as_strided(make, dtype):
    yield S((make(10), (4, 3), (2, 1)), name="overlapping windows")
    yield S((make(2, 6), (3, 2), (1, 4), 1), name="offset, transposed strides")
    yield S((make(6), (0, 2), (1, 1)), name="empty")


def s_block_diag(make, dtype):
    yield S((make(2, 3), make(2), make()), name="2-d, 1-d, 0-d", method=False)
    yield S((make(1, 1), make(0, 2)), name="empty block", method=False)


def s_meshgrid(make, dtype):
    yield S((make(3), make(2)), {"indexing": "ij"}, name="ij", method=False)
    yield S((make(3), make(2), make(2)), {"indexing": "xy"}, name="xy", method=False)


def s_cartesian_prod(make, dtype):
    yield S((make(3), make(2)), name="two", method=False)
    yield S((make(2), make(2), make(1)), name="three", method=False)


# ---------------------------------------------------------------------- products, binning
def s_tensordot(make, dtype):
    yield S((make(2, 3, 4), make(3, 4, 2)), name="dims 2", method=False)
    yield S((make(2, 3), make(3, 2)), {"dims": ([0, 1], [1, 0])}, name="dim lists",
            method=False)
    yield S((make(2), make(3)), {"dims": 0}, name="outer", method=False)


def s_kron(make, dtype):
    yield S((make(2, 3), make(2, 2)), name="2-d")
    yield S((make(2), make(2, 3)), name="1-d, 2-d")


def s_inner(make, dtype):
    yield S((make(2, 3), make(4, 3)), name="2-d")
    yield S((make(3), make()), name="0-d operand")


def s_vdot(make, dtype):
    yield S((make(4), make(4)), name="vectors")


def s_cross(make, dtype):
    yield S((make(2, 3), make(2, 3)), {"dim": 1}, name="dim 1")
    yield S((make(3, 2), make(3, 2), 0), name="dim 0")
    yield S((make(2, 4, 3), make(2, 4, 3)), {"dim": -1}, name="last")


def s_searchsorted(make, dtype):
    seq = plugrad.sort(make(6)).values
    yield S((seq, make(2, 3)), name="1-d boundaries", method=False)
    yield S((seq, make(4)), {"right": True}, name="right", method=False)
    yield S((plugrad.sort(make(2, 4), -1).values, make(2, 3)), {"side": "right"},
            name="batched", method=False)


def s_bucketize(make, dtype):
    yield S((make(2, 3), plugrad.sort(make(5)).values), name="left", method=False)
    yield S((make(4), plugrad.sort(make(3)).values), {"right": True, "out_int32": True},
            name="right int32", method=False)


def s_histc(make, dtype):
    yield S((make(3, 4),), {"bins": 4}, name="data range")
    yield S((make(10),), {"bins": 3, "min": -1, "max": 1}, name="given range")


def s_bincount(make, dtype):
    idx = make.index((7,), 5).to(getattr(plugrad, dtype))
    yield S((idx,), name="counts")
    yield S((idx, None, 8), name="minlength")


# ---------------------------------------------------------------------- index writes
def s_index_copy(make, dtype):
    yield S((make(4, 3), 0, make.index((2,), 4, unique_axis=0), make(2, 3)), name="dim 0")
    yield S((make(2, 4, layout="T"), -1, make.index((3,), 4, unique_axis=0), make(2, 3)),
            name="neg dim, transposed")


def s_index_fill(make, dtype):
    v = True if dtype == "bool" else (2 if dtype in INTS else -0.5)
    yield S((make(3, 4), 1, make.index((2,), 4), v), name="dim 1")
    yield S((make(3, 2), 0, make.index((3,), 3), v), name="dim 0, repeats")


def s_index_put(make, dtype):
    yield S((make(4, 3), (make.index((3,), 4, unique_axis=0),), make(3, 3)), name="rows")
    yield S((make(4, 3), (make.index((5,), 4), make.index((5,), 3)), make(5)),
            {"accumulate": True}, name="pairs, accumulate")
    yield S((make(3, 2), (make.mask((3,)),), make(2)), name="mask, broadcast value",
            grad=False)


def s_masked_scatter(make, dtype):
    yield S((make(2, 3), make.mask((2, 3)), make(6)), name="same shape")
    yield S((make(2, 3), make.mask((3,)), make(2, 4)), name="broadcast mask")


def s_scatter_reduce(make, dtype):
    reduces = ("sum", "prod", "mean", "amax", "amin") if dtype != "bool" else ("amax", "amin")
    for i, red in enumerate(reduces):
        idx = make.index((2, 4), 3)
        yield S((_distinct(make, 2, 3), 1, idx, _distinct(make, 2, 4) if red.startswith("a")
                 else make(2, 4)), {"reduce": red, "include_self": i % 2 == 0},
                name=f"{red}, include_self={i % 2 == 0}")
    yield S((make(3, 2), 0, make.index((2, 2), 3), make(2, 2), "sum"), name="positional")


_add(
    _P("median", sample_inputs=s_median, differentiable=True, dtypes=NUMS),
    _P("nanmedian", sample_inputs=s_median, differentiable=True, dtypes=NUMS),
    _P("kthvalue", sample_inputs=s_kthvalue, differentiable=True, dtypes=NUMS),
    _P("mode", sample_inputs=s_mode, differentiable=True, dtypes=ALL),
    _P("quantile", sample_inputs=s_quantile, differentiable=True, dtypes=F64),
    _P("nanquantile", sample_inputs=s_quantile, differentiable=True, dtypes=F64),
    _P("cummax", sample_inputs=s_cum, differentiable=True, dtypes=ALL),
    _P("cummin", sample_inputs=s_cum, differentiable=True, dtypes=ALL),
    _P("logcumsumexp", sample_inputs=s_logcumsumexp, differentiable=True, dtypes=FLOATS),
    _P("unique", sample_inputs=s_unique, dtypes=ALL),
    _P("unique_consecutive", sample_inputs=s_unique_consecutive, dtypes=ALL),
    _P("aminmax", sample_inputs=s_aminmax, differentiable=True, dtypes=ALL),
    _P("nanmean", sample_inputs=s_nanmean, differentiable=True, dtypes=FLOATS),
    _P("tile", sample_inputs=s_tile, differentiable=True, dtypes=ALL),
    _P("diagonal", sample_inputs=s_diagonal, differentiable=True, dtypes=ALL),
    _P("diag_embed", sample_inputs=s_diag_embed, differentiable=True, dtypes=ALL),
    _P("diag", sample_inputs=s_diag, differentiable=True, dtypes=ALL),
    _P("diagflat", sample_inputs=s_diagflat, differentiable=True, dtypes=ALL),
    _P("trace", sample_inputs=s_trace, differentiable=True, dtypes=NUMS),
    _P("take", sample_inputs=s_take, differentiable=True, dtypes=ALL),
    _P("diff", sample_inputs=s_diff, differentiable=True, dtypes=ALL),
    _P("rot90", sample_inputs=s_rot90, differentiable=True, dtypes=ALL),
    OpInfo("Tensor.unfold", lambda x, *a: x.unfold(*a), s_unfold, dtypes=ALL,
           differentiable=True, method="unfold"),
    _P("as_strided", sample_inputs=s_as_strided, differentiable=True, dtypes=ALL),
    _P("block_diag", sample_inputs=s_block_diag, differentiable=True, dtypes=ALL),
    _P("meshgrid", sample_inputs=s_meshgrid, differentiable=True, dtypes=ALL),
    _P("cartesian_prod", sample_inputs=s_cartesian_prod, differentiable=True, dtypes=ALL),
    _P("tensordot", sample_inputs=s_tensordot, differentiable=True, dtypes=NUMS),
    _P("kron", sample_inputs=s_kron, differentiable=True, dtypes=ALL),
    _P("inner", sample_inputs=s_inner, differentiable=True, dtypes=NUMS),
    _P("vdot", sample_inputs=s_vdot, differentiable=True, dtypes=NUMS),
    _P("cross", sample_inputs=s_cross, differentiable=True, dtypes=NUMS),
    _P("searchsorted", sample_inputs=s_searchsorted, dtypes=NUMS),
    _P("bucketize", sample_inputs=s_bucketize, dtypes=NUMS),
    _P("histc", sample_inputs=s_histc, dtypes=FLOATS),
    _P("bincount", sample_inputs=s_bincount, dtypes=INTS),
    _P("index_copy", sample_inputs=s_index_copy, differentiable=True, dtypes=ALL),
    _P("index_fill", sample_inputs=s_index_fill, differentiable=True, dtypes=ALL),
    _P("index_put", sample_inputs=s_index_put, differentiable=True, dtypes=ALL),
    _P("masked_scatter", sample_inputs=s_masked_scatter, differentiable=True, dtypes=ALL),
    _P("scatter_reduce", sample_inputs=s_scatter_reduce, differentiable=True, dtypes=ALL),
)
