"""Issue 15's tensor ops against PyTorch: values, dtypes, shapes, returned indices (ties
included), named-tuple fields and gradients, on every built-in backend.

Each case is ``fn(M, *tensors)`` run once with ``M = plugrad`` and once with ``M = torch``
on the same arrays; floating inputs require grad, and every floating output gets a
distinct weight in the loss whose gradients are compared.
"""
import warnings

import numpy as np
import pytest

import plugrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(15)
NAN = float("nan")


def _f(*shape):
    return RNG.standard_normal(shape)


def _i(*shape, low=0, high=4):
    return RNG.integers(low, high, shape).astype(np.int64)


def _host(t):
    if isinstance(t, plugrad.Tensor):
        return np.asarray(t.detach().cpu().tolist()).reshape(tuple(t.shape))
    return t.detach().numpy()


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _compare(ours, theirs, where):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple), f"{where}: got {type(ours).__name__}, want a tuple"
        assert len(ours) == len(theirs), f"{where}: {len(ours)} outputs, want {len(theirs)}"
        if hasattr(theirs, "_fields") or hasattr(type(theirs), "n_fields"):
            fields = [f for f in dir(theirs) if f in ("values", "indices", "min", "max")]
            for f in fields:
                assert hasattr(ours, f), f"{where}: no field {f!r}"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            _compare(o, t, f"{where}[{i}]")
        return
    if isinstance(theirs, (bool, int, float)):
        assert ours == theirs, f"{where}: {ours} != {theirs}"
        return
    assert tuple(ours.shape) == tuple(theirs.shape), \
        f"{where}: shape {tuple(ours.shape)}, want {tuple(theirs.shape)}"
    assert _dtype_name(ours) == _dtype_name(theirs), \
        f"{where}: dtype {_dtype_name(ours)}, want {_dtype_name(theirs)}"
    a, b = _host(ours), _host(theirs)
    if b.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(a, b, err_msg=where)


def _leaves(x):
    out = []
    if isinstance(x, tuple):
        for y in x:
            out += _leaves(y)
    elif hasattr(x, "dtype") and x.dtype.is_floating_point and x.requires_grad:
        out.append(x)
    return out


def check(fn, *arrays, device, grad=True, dtype=None):
    """Run ``fn`` on plugrad (on ``device``) and torch; compare outputs and gradients."""
    def make(M, a, **kw):
        if not isinstance(a, np.ndarray):
            return a
        dt = None if dtype is None else getattr(M, dtype)
        t = M.tensor(a, dtype=dt if a.dtype.kind == "f" else None, **kw)
        if grad and t.dtype.is_floating_point:
            t.requires_grad_(True)
        return t
    ours_in = [make(plugrad, a, device=device) for a in arrays]
    theirs_in = [make(torch, a) for a in arrays]
    before = plugrad.get_default_device()
    plugrad.set_default_device(device)  # tensors the case makes (indices) go there too
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, theirs = fn(plugrad, *ours_in), fn(torch, *theirs_in)
    finally:
        plugrad.set_default_device(before)
    _compare(ours, theirs, "forward")
    if not grad:
        return
    outs_o, outs_t = _leaves(ours), _leaves(theirs)
    if not outs_t:
        return
    loss_o = loss_t = 0
    for o, t in zip(outs_o, outs_t):
        w = RNG.uniform(0.5, 1.5, tuple(t.shape))
        loss_o = loss_o + (o * plugrad.tensor(w, dtype=o.dtype, device=device)).sum()
        loss_t = loss_t + (t * torch.tensor(w, dtype=t.dtype)).sum()
    loss_t.backward()
    loss_o.backward()
    for i, (o, t) in enumerate(zip(ours_in, theirs_in)):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            want = t.grad if t.grad is not None else torch.zeros_like(t)
            got = o.grad if o.grad is not None else plugrad.zeros_like(o)
            _compare(got, want, f"grad of input {i}")


# ---------------------------------------------------------------------- order statistics
TIES = np.array([[1., 2, 2, 1, 3, 2], [5, 5, 5, 5, 1, 1]])
NANS = np.array([[1., NAN, 2, NAN], [3, 1, 2, 0], [NAN, NAN, NAN, NAN]])
ORDER_CASES = {
    "median all": (lambda M, x: M.median(x), [_f(3, 4)]),
    "median all ties": (lambda M, x: M.median(x), [np.array([1., 2, 2, 3])]),
    "median dim ties": (lambda M, x: M.median(x, 1), [TIES]),
    "median dim keepdim": (lambda M, x: x.median(dim=0, keepdim=True), [_f(3, 4)]),
    "median NaN": (lambda M, x: M.median(x, 1), [NANS]),
    "median all NaN": (lambda M, x: M.median(x), [NANS]),
    "median int": (lambda M, x: M.median(x, 0), [_i(5, 3)]),
    "median 0-d": (lambda M, x: (M.median(x), M.median(x, 0)), [np.array(2.5)]),
    "median empty rows": (lambda M, x: M.median(x, 1), [np.zeros((0, 3))]),
    # (a row of NaN only: the value is NaN in both, PyTorch's index is an artefact of its
    # nth_element, so that row is checked apart, in test_nanmedian_all_nan_row)
    "nanmedian dim": (lambda M, x: M.nanmedian(x, 1), [NANS[:2]]),
    "nanmedian all": (lambda M, x: x.nanmedian(), [NANS]),
    "kthvalue": (lambda M, x: M.kthvalue(x, 3, 0), [_f(5, 2)]),
    "kthvalue keepdim": (lambda M, x: x.kthvalue(2, dim=-1, keepdim=True), [_f(2, 4)]),
    "kthvalue NaN largest": (lambda M, x: M.kthvalue(x, 3, 1), [NANS[:2]]),
    "kthvalue ties": (lambda M, x: (M.kthvalue(x, 2, 1), x.kthvalue(3), x.kthvalue(5)),
                      [TIES]),
    "kthvalue int ties": (lambda M, x: tuple(M.kthvalue(x, k) for k in range(1, 8)),
                          [np.array([3, 1, 3, 1, 2, 2, 7])]),
    "kthvalue NaN ties": (lambda M, x: tuple(M.kthvalue(x, k, 0) for k in (1, 3, 4, 5)),
                          [np.array([[NAN, 1.0], [2, NAN], [NAN, 1], [1, NAN], [2, 1]])]),
    "mode": (lambda M, x: M.mode(x, 1), [TIES]),
    "mode int ties": (lambda M, x: M.mode(x), [np.array([3, 1, 3, 1, 2, 2, 7])]),
    "mode dim 0": (lambda M, x: x.mode(0, True), [_i(6, 3, high=3)]),
    "mode 0-d": (lambda M, x: M.mode(x), [np.array(1.5)]),
    "topk 0-d": (lambda M, x: M.topk(x, 1), [np.array(1.5)]),
}
for _interp in ("linear", "lower", "higher", "midpoint", "nearest"):
    ORDER_CASES[f"quantile {_interp}"] = (
        lambda M, x, q, _m=_interp: M.quantile(x, q, dim=1, interpolation=_m),
        [_f(3, 5), np.array([0.1, 0.5, 0.75])])
    ORDER_CASES[f"nanquantile {_interp}"] = (
        lambda M, x, _m=_interp: M.nanquantile(x, 0.4, dim=1, keepdim=True, interpolation=_m),
        [NANS])
ORDER_CASES["quantile all, NaN"] = (lambda M, x: M.quantile(x, 0.3), [NANS])
ORDER_CASES["quantile keepdim, no dim"] = (
    lambda M, x, q: x.quantile(q, keepdim=True), [_f(2, 3), np.array([0.2, 1.0])])
ORDER_CASES["quantile 0-d q"] = (lambda M, x, q: M.quantile(x, q, 0), [_f(4, 2), np.array(0.6)])


def test_mode_long_rows(device):
    """Beyond 16 elements PyTorch's index is wherever its unstable sort leaves the value:
    the values agree, and the index is an occurrence of it."""
    x = RNG.integers(0, 3, (4, 40))
    want = torch.mode(torch.tensor(x), 1)
    got = plugrad.mode(plugrad.tensor(x, device=device), 1)
    assert got.values.tolist() == want.values.tolist()
    assert all(x[r, i] == v for r, (i, v) in enumerate(zip(got.indices.tolist(),
                                                         got.values.tolist())))


def test_kthvalue_ties_as_torch_quickselect(device):
    x = RNG.integers(0, 4, (3, 37)).astype(float)
    x[RNG.random(x.shape) < 0.1] = NAN
    for k in (1, 9, 18, 30, 37):
        want = torch.kthvalue(torch.tensor(x), k, 1)
        got = plugrad.kthvalue(plugrad.tensor(x, device=device), k, 1)
        assert got.indices.tolist() == want.indices.tolist(), k
        np.testing.assert_array_equal(np.array(got.values.tolist()), want.values.numpy())


def test_nanmedian_all_nan_row(device):
    r = plugrad.nanmedian(plugrad.tensor(NANS, device=device), 1)
    assert np.isnan(r.values.tolist()[2]) and 0 <= r.indices.tolist()[2] < 4


def test_nanmean_all_nan(device):
    check(lambda M, x: (M.nanmean(x), x.nanmean(1)), NANS, device=device, grad=False)


@pytest.mark.parametrize("name", sorted(ORDER_CASES))
def test_order_statistics(name, device):
    fn, arrays = ORDER_CASES[name]
    check(fn, *arrays, device=device)


# ---------------------------------------------------------------------- scans, unique
SCAN_CASES = {
    "cummax": (lambda M, x: M.cummax(x, 1), [_f(2, 9)]),
    "cummax ties NaN": (lambda M, x: M.cummax(x, 0),
                        [np.array([1., 3, 3, 2, NAN, 5, NAN, 1])]),
    "cummin ties": (lambda M, x: x.cummin(0), [np.array([1., 3, 1, 0, 0, 5])]),
    "cummin int dim 0": (lambda M, x: M.cummin(x, 0), [_i(7, 2)]),
    "cummax bool": (lambda M, x: M.cummax(x, 0), [np.array([False, True, False, True])]),
    "logcumsumexp": (lambda M, x: M.logcumsumexp(x, 1), [_f(3, 7) * 30]),
    "logcumsumexp -inf": (lambda M, x: x.logcumsumexp(0),
                          [np.array([-np.inf, -np.inf, 0.5, 1000.0, -np.inf])]),
    "aminmax": (lambda M, x: M.aminmax(x), [np.array([[1., 2, 2], [0, 0, 1]])]),
    "aminmax dim": (lambda M, x: x.aminmax(dim=0, keepdim=True), [_f(3, 4)]),
    # (rows of NaN only: forward in test_nanmean_all_nan; PyTorch's gradient there is NaN)
    "nanmean": (lambda M, x: (M.nanmean(x), x.nanmean(1)), [NANS[:2]]),
    "nanmean keepdim": (lambda M, x: M.nanmean(x, 0, True), [_f(3, 2)]),
}


@pytest.mark.parametrize("name", sorted(SCAN_CASES))
def test_scans(name, device):
    fn, arrays = SCAN_CASES[name]
    check(fn, *arrays, device=device)


UNIQUE_CASES = {
    "values": lambda M, x: M.unique(x),
    "inverse counts": lambda M, x: M.unique(x, return_inverse=True, return_counts=True),
    "counts only": lambda M, x: x.unique(return_counts=True),
    "unsorted": lambda M, x: M.unique(x, sorted=False, return_inverse=True),
    "dim 0": lambda M, x: M.unique(x, dim=0, return_inverse=True, return_counts=True),
    "dim 1": lambda M, x: M.unique(x, dim=1, return_counts=True),
    "consecutive": lambda M, x: M.unique_consecutive(x, return_inverse=True,
                                                     return_counts=True),
    "consecutive dim 0": lambda M, x: x.unique_consecutive(dim=0, return_counts=True),
}
UNIQUE_INPUTS = {
    "int": np.array([[1, 2], [0, 1], [1, 2], [1, 2], [3, 3]]),
    "float NaN": np.array([[2., NAN], [1, NAN], [2, 2]]),
    "bool": np.array([[True, False], [True, False], [False, False]]),
}


# Slices holding NaN along ``dim`` are left out: PyTorch's lexicographic sort compares NaN
# as neither smaller nor larger than anything (so its order there is its sort's accident);
# plugrad sorts NaN last, as in every other sort.
@pytest.mark.parametrize("name, inp", [(n, i) for n in sorted(UNIQUE_CASES)
                                       for i in sorted(UNIQUE_INPUTS)
                                       if not (i == "float NaN" and "dim" in n)])
def test_unique(name, inp, device):
    check(UNIQUE_CASES[name], UNIQUE_INPUTS[inp], device=device, grad=False)


def test_unique_empty(device):
    check(lambda M, x: M.unique(x, return_inverse=True, return_counts=True),
          np.zeros(0), device=device, grad=False)


# ---------------------------------------------------------------------- arrangement
ARRANGE_CASES = {
    "tile": (lambda M, x: (M.tile(x, (2,)), x.tile(2, 1, 2)), [_f(2, 3)]),
    "diagonal": (lambda M, x: [x.diagonal(o) for o in (-3, -1, 0, 2, 5)], [_f(3, 4)]),
    "diagonal dims": (lambda M, x: M.diagonal(x, 1, 2, 0), [_f(2, 3, 4)]),
    "diag vector": (lambda M, x: [M.diag(x, o) for o in (-2, 0, 1)], [_f(3)]),
    "diag matrix": (lambda M, x: (M.diag(x), x.diag(-1)), [_f(3, 4)]),
    "diag_embed": (lambda M, x: (M.diag_embed(x), M.diag_embed(x, 1, 0, 2),
                                 x.diag_embed(-2, 2, 0)), [_f(2, 3)]),
    "diagflat": (lambda M, x: (M.diagflat(x), M.diagflat(x, -1)), [_f(2, 2)]),
    "trace": (lambda M, x: M.trace(x), [_f(3, 4)]),
    "trace int": (lambda M, x: x.trace(), [_i(3, 3)]),
    "take": (lambda M, x, i: M.take(x, i), [_f(3, 4), np.array([[0, -1], [5, 5]])]),
    "diff": (lambda M, x: (M.diff(x), M.diff(x, 2, 0)), [_f(4, 3)]),
    "diff prepend append": (lambda M, x, p, a: M.diff(x, 1, 1, p, a),
                            [_f(2, 3), _f(2, 1), _f(2, 2)]),
    "diff bool": (lambda M, x: M.diff(x), [np.array([True, False, False, True])]),
    "rot90": (lambda M, x: [M.rot90(x, k, (1, 0)) for k in range(-1, 5)], [_f(2, 3)]),
    "rot90 3-d": (lambda M, x: x.rot90(1, [0, 2]), [_f(2, 3, 4)]),
    "unfold": (lambda M, x: (x.unfold(1, 2, 1), x.unfold(0, 2, 2), x.unfold(-1, 3, 2)),
               [_f(5, 4)]),
    "unfold 0-d": (lambda M, x: x.unfold(0, 1, 1), [np.array(2.0)]),
    "block_diag": (lambda M, a, b, c: M.block_diag(a, b, c), [_f(2, 3), _f(2), np.array(1.)]),
    "meshgrid ij": (lambda M, a, b: M.meshgrid(a, b, indexing="ij"), [_f(3), _f(2)]),
    "meshgrid xy": (lambda M, a, b, c: M.meshgrid([a, b, c], indexing="xy"),
                    [_f(3), _f(2), _f(4)]),
    "meshgrid default": (lambda M, a, b: M.meshgrid(a, b), [_f(3), _f(2)]),
    "cartesian_prod": (lambda M, a, b: M.cartesian_prod(a, b), [_f(3), _f(2)]),
    "cartesian_prod one": (lambda M, a: M.cartesian_prod(a), [_f(3)]),
    "triu/tril_indices": (lambda M: (M.triu_indices(3, 4, 1), M.tril_indices(4, 3, -1),
                                     M.triu_indices(3, 3, dtype=M.int32)), []),
}


@pytest.mark.parametrize("name", sorted(ARRANGE_CASES))
def test_arrangement(name, device):
    fn, arrays = ARRANGE_CASES[name]
    def as_tuple(M, *a):
        out = fn(M, *a)
        return tuple(out) if isinstance(out, list) else out
    check(as_tuple, *arrays, device=device)


def test_block_diag_empty_and_promotion(device):
    check(lambda M: M.block_diag(), device=device)
    check(lambda M, a, b: M.block_diag(a, b), _i(2, 2), _f(1, 2), device=device)


# ---------------------------------------------------------------------- products, binning
PRODUCT_CASES = {
    "tensordot int dims": (lambda M, a, b: M.tensordot(a, b, 2), [_f(2, 3, 4), _f(3, 4, 2)]),
    "tensordot lists": (lambda M, a, b: M.tensordot(a, b, ([0, 1], [1, 0])),
                        [_f(2, 3), _f(3, 2)]),
    "tensordot 0": (lambda M, a, b: M.tensordot(a, b, 0), [_f(2), _f(3)]),
    "kron": (lambda M, a, b: (M.kron(a, b), b.kron(a)), [_f(2, 3), _f(2, 2)]),
    "kron mixed ndim": (lambda M, a, b: M.kron(a, b), [_f(3), _f(2, 2)]),
    "inner": (lambda M, a, b: M.inner(a, b), [_f(2, 3), _f(4, 3)]),
    "inner 0-d": (lambda M, a, b: a.inner(b), [_f(3), np.array(2.0)]),
    "vdot": (lambda M, a, b: M.vdot(a, b), [_f(4), _f(4)]),
    "outer": (lambda M, a, b: (M.outer(a, b), M.ger(a, b)), [_f(3), _f(2)]),
    "cross default dim": (lambda M, a, b: M.cross(a, b), [_f(2, 3, 3), _f(2, 3, 3)]),
    "cross dim": (lambda M, a, b: a.cross(b, dim=-1), [_f(4, 3), _f(4, 3)]),
    "cross broadcast": (lambda M, a, b: M.cross(a, b, dim=1), [_f(2, 3), _f(1, 3)]),
}


@pytest.mark.parametrize("name", sorted(PRODUCT_CASES))
def test_products(name, device):
    fn, arrays = PRODUCT_CASES[name]
    check(fn, *arrays, device=device)


def test_cross_default_dim_warns_as_torch():
    a = plugrad.zeros(3, 3)
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        plugrad.cross(a, a)
    with pytest.raises(RuntimeError, match="no dimension of size 3"), pytest.warns(UserWarning):
        plugrad.cross(plugrad.zeros(2, 2), plugrad.zeros(2, 2))


SEQ = np.array([1., 2, 2, 3, 5])
VALS = np.array([[0., 2, 2.5], [6, 1, 3]])
BINNING_CASES = {
    "searchsorted": lambda M, s, v: (M.searchsorted(s, v), M.searchsorted(s, v, right=True),
                                     M.searchsorted(s, v, side="right", out_int32=True)),
    "searchsorted scalar": lambda M, s, v: M.searchsorted(s, 2.0),
    "searchsorted batched": lambda M, s, v: M.searchsorted(s.reshape(1, 5).expand(2, 5), v),
    "searchsorted sorter": lambda M, s, v: M.searchsorted(s.flip(0), v,
                                                          sorter=M.arange(4, -1, -1)),
    "bucketize": lambda M, s, v: (M.bucketize(v, s), M.bucketize(v, s, right=True)),
    "histc": lambda M, s, v: (M.histc(v, 4), v.histc(3, 0, 3), M.histc(s, 5, 1, 5)),
}


@pytest.mark.parametrize("name", sorted(BINNING_CASES))
def test_binning(name, device):
    check(BINNING_CASES[name], SEQ, VALS, device=device, grad=False, dtype="float32")


def test_bincount(device):
    check(lambda M, x, w: (M.bincount(x), M.bincount(x, minlength=7), x.bincount(w),
                           M.bincount(x, x)), np.array([0, 3, 3, 1]),
          np.array([0.5, 1, 2, 3]), device=device, grad=False, dtype="float32")
    check(lambda M, x, w: M.bincount(x, w), np.array([0, 3, 3, 1]), np.array([0.5, 1, 2, 3]),
          device=device, grad=False)


# ---------------------------------------------------------------------- index writes
I3 = np.array([0, 0, 2, 2, 2])
WRITE_CASES = {
    "index_copy": (lambda M, x, s: (x.index_copy(1, M.tensor([2, 0]), s),
                                    M.index_copy(x, 1, M.tensor([0, 1]), s)),
                   [_f(2, 3), _f(2, 2)]),
    "index_fill": (lambda M, x: (x.index_fill(1, M.tensor([0, 2, 2]), -1.5),
                                 M.index_fill(x, 0, M.tensor([1]), 7)), [_f(2, 3)]),
    "index_fill tensor value": (lambda M, x, v: x.index_fill(0, M.tensor([0, 2]), v),
                                [_f(3, 2), np.array(4.0)]),
    "index_put": (lambda M, x, v: x.index_put((M.tensor([2, 0]),), v), [_f(3, 2), _f(2, 2)]),
    "index_put accumulate": (lambda M, x, v: M.index_put(
        x, (M.tensor([0, 0, 2]), M.tensor([1, 1, 0])), v, accumulate=True),
        [_f(3, 2), _f(3)]),
    "index_put mask": (lambda M, x, v: x.index_put((M.tensor([True, False, True]),), v),
                       [_f(3, 2), np.array(5.0)]),
    "masked_scatter": (lambda M, x, s: (x.masked_scatter(
        M.tensor([[True, False, True], [False, True, False]]), s),
        M.masked_scatter(x, M.tensor([True, False, True]), s)), [_f(2, 3), _f(7)]),
    # (PyTorch has no derivative for scatter with reduce=: forward only)
    "scatter multiply": (lambda M, x, s: x.detach().scatter(0, M.tensor([0, 2]), s.detach(),
                                                            reduce="multiply"),
                         [np.ones(3), np.array([2.0, 5.0])]),
    "scatter multiply value": (lambda M, x: x.detach().scatter(0, M.tensor([0, 2, 2]), 2.0,
                                                               reduce="multiply"),
                               [np.ones(3)]),
    "scatter add value int": (lambda M, x: x.scatter(0, M.tensor([0, 2, 2]), 2, reduce="add"),
                              [np.ones(3, dtype=np.int64)]),
}
for _red in ("sum", "prod", "mean", "amax", "amin"):
    for _inc in (True, False):
        WRITE_CASES[f"scatter_reduce {_red} include_self={_inc}"] = (
            lambda M, x, s, _r=_red, _s=_inc: x.scatter_reduce(0, M.tensor(I3), s, _r,
                                                                include_self=_s),
            [np.array([1., 2, 3, 4]), np.array([3., 0, 3, 1, 3])])
        WRITE_CASES[f"scatter_reduce int {_red} include_self={_inc}"] = (
            lambda M, x, s, _r=_red, _s=_inc: M.scatter_reduce(x, 0, M.tensor(I3), s, _r,
                                                               include_self=_s),
            [np.array([1, 2, 3, 4]), np.array([4, -7, 1, 1, 2])])
WRITE_CASES["scatter_reduce 2-d"] = (
    lambda M, x, s, i: x.scatter_reduce(1, i, s, "amax"), [_f(2, 4), _f(2, 3),
                                                           np.array([[0, 0, 3], [1, 1, 1]])])


@pytest.mark.parametrize("name", sorted(WRITE_CASES))
def test_index_writes(name, device):
    fn, arrays = WRITE_CASES[name]
    check(fn, *arrays, device=device)


def test_in_place_forms(device):
    def fn(M, x, s):
        a = x.detach().clone()
        a.index_copy_(0, M.tensor([1]), s[:1])
        a.index_fill_(1, M.tensor([0]), 9.0)
        a.index_put_((M.tensor([0, 0]),), s[1], accumulate=True)
        a.masked_scatter_(a.gt(0.5), s.reshape(-1))
        a.scatter_reduce_(1, M.tensor([[0, 0], [1, 1]]), s, "prod")
        a.scatter_(0, M.tensor([[1, 0]]), s[:1], reduce="multiply")
        return a
    check(fn, _f(2, 2), _f(2, 2), device=device, grad=False)


def test_errors_name_the_op():
    x = plugrad.zeros(2, 3)
    with pytest.raises(IndexError, match="median"):
        plugrad.median(plugrad.zeros(2, 0), 1)
    with pytest.raises(IndexError, match="kthvalue"):
        x.kthvalue(4)
    with pytest.raises(TypeError, match="quantile"):
        plugrad.quantile(plugrad.tensor([1, 2]), 0.5)
    with pytest.raises(RuntimeError, match="range"):
        x.quantile(1.5)
    with pytest.raises(RuntimeError, match="scatter_reduce|reduce"):
        x.scatter_reduce(0, plugrad.tensor([[0]]), x, "max")
    with pytest.raises(RuntimeError, match="masked_scatter"):
        x.masked_scatter(x.gt(-1), plugrad.zeros(2))
    with pytest.raises(RuntimeError, match="unfold"):
        x.unfold(1, 4, 1)
    with pytest.raises(RuntimeError, match="diag"):
        plugrad.diag(plugrad.zeros(2, 2, 2))


def test_named_tuples_print_as_torch():
    r = plugrad.median(plugrad.tensor([[1.0, 2.0]]), 1)
    assert type(r).__name__ == "median" and r._fields == ("values", "indices")
    assert plugrad.aminmax(plugrad.tensor([1.0]))._fields == ("min", "max")
