"""Special values in the pools, convolutions, grid sampling and CTC against PyTorch, on
every backend: a max pool's NaN is its maximum and the last NaN gives the index (and the
gradient), integer max pools, adaptive means that a NaN elsewhere does not reach, grid
coordinates that are NaN/inf/huge, CTC's gradient w.r.t. ``log_probs`` itself."""
import math
import warnings

import numpy as np
import pytest

import plugrad
import plugrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
NAN, INF = math.nan, math.inf


def _host(t):
    return np.asarray(t.tolist()) if isinstance(t, plugrad.Tensor) else t.detach().numpy()


def _both(fn_ours, fn_torch, x, device, grad=True):
    """Outputs and the input's gradient (of a weighted sum of the first output)."""
    p = plugrad.tensor(x, device=device).requires_grad_(grad)
    t = torch.tensor(x).requires_grad_(grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        po, to = fn_ours(p), fn_torch(t)
    po = po if isinstance(po, tuple) else (po,)
    to = to if isinstance(to, tuple) else (to,)
    for a, b in zip(po, to):
        _same(_host(a), _host(b))
    if not grad:
        return
    w = np.arange(1.0, 1.0 + po[0].numel()).reshape(tuple(po[0].shape))
    (po[0] * plugrad.tensor(w, device=device)).sum().backward()
    (to[0] * torch.tensor(w)).sum().backward()
    _same(_host(p.grad), _host(t.grad))


def _same(a, b):
    """Integers (indices) exactly; floats to rounding, NaN where NaN."""
    if a.dtype.kind in "iub":
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def _nan_volume():
    x = np.arange(2 * 4 * 4 * 4, dtype=np.float64).reshape(1, 2, 4, 4, 4) % 7 - 3.0
    x[0, 0, 0, 0, 1] = x[0, 0, 1, 1, 0] = NAN  # two NaN in one 2x2x2 window
    x[0, 1, 2, 3, 3] = NAN
    x[0, 1, 0, :2, :2] = -INF
    return x


@pytest.mark.parametrize("case", ["max_pool3d", "max_pool3d pad", "adaptive_max_pool3d",
                                  "max_pool2d", "adaptive_max_pool2d", "max_pool1d"])
def test_max_pools_take_the_last_nan(case, device):
    x = _nan_volume()
    fns = {
        "max_pool3d": lambda M, t: M.max_pool3d(t, 2, return_indices=True),
        "max_pool3d pad": lambda M, t: M.max_pool3d(t, 3, 2, 1, return_indices=True),
        "adaptive_max_pool3d": lambda M, t: M.adaptive_max_pool3d(t, (3, 2, 3), True),
        "max_pool2d": lambda M, t: M.max_pool2d(t[:, :, 0] if t.ndim == 5 else t, 2, 1,
                                                return_indices=True),
        "adaptive_max_pool2d": lambda M, t: M.adaptive_max_pool2d(t[:, :, 1], 3, True),
        "max_pool1d": lambda M, t: M.max_pool1d(t[:, :, 0, 0], 3, 1, 1,
                                                return_indices=True),
    }
    fn = fns[case]
    _both(lambda t: fn(F, t), lambda t: fn(TF, t), x, device)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_integer_max_pools(dtype, device):
    x = (np.arange(2 * 4 * 4 * 4).reshape(1, 2, 4, 4, 4) * 37 % 11).astype(dtype)
    _both(lambda t: F.max_pool3d(t, 2, 1, 1, return_indices=True),
          lambda t: TF.max_pool3d(t, 2, 1, 1, return_indices=True), x, device, grad=False)
    _both(lambda t: F.max_pool2d_with_indices(t[0], 3, 2, 1, ceil_mode=True),
          lambda t: TF.max_pool2d_with_indices(t[0], 3, 2, 1, ceil_mode=True), x, device,
          grad=False)
    _both(lambda t: F.max_pool1d(t[0, :, 0], 2, return_indices=True),
          lambda t: TF.max_pool1d(t[0, :, 0], 2, return_indices=True), x, device, grad=False)


def test_integer_max_pool1d_without_indices_is_refused_as_in_pytorch(device):
    x = np.arange(8).reshape(1, 2, 4)
    with pytest.raises(NotImplementedError):
        TF.max_pool1d(torch.tensor(x), 2)
    with pytest.raises(plugrad.DTypeError, match="max_pool1d"):
        F.max_pool1d(plugrad.tensor(x, device=device), 2)


def test_adaptive_avg_pool3d_keeps_nan_in_its_window(device):
    x = np.linspace(-1, 1, 2 * 3 * 4 * 3).reshape(1, 2, 3, 4, 3)
    x[0, 0, 0, 0, 0], x[0, 1, 2, 3, 2] = NAN, INF
    for size in ((2, 3, 2), 1, (3, 2, 3)):
        p = F.adaptive_avg_pool3d(plugrad.tensor(x, device=device), size)
        t = TF.adaptive_avg_pool3d(torch.tensor(x), size)
        np.testing.assert_allclose(_host(p), _host(t), rtol=1e-12)


def test_lp_pool3d_gradient_at_an_infinite_window(device):
    x = np.full((1, 1, 2, 4, 4), 0.75)
    x[0, 0, 0, 0, 0] = INF
    x[0, 0, 1, 2, 2] = 1e300  # its square overflows
    _both(lambda t: F.lp_pool3d(t, 2.0, 2), lambda t: TF.lp_pool3d(t, 2.0, 2), x, device)


def test_conv3d_bias_gradient_records_under_create_graph(device):
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal(s) for s in ((1, 2, 3, 3, 3), (2, 2, 2, 2, 2), (2,))]
    for conv in ("conv3d", "conv_transpose3d"):
        args = [xs[0], xs[1] if conv == "conv3d" else xs[1][:, :1], xs[2][:1]
                if conv == "conv_transpose3d" else xs[2]]
        got = []
        for lib, M in ((plugrad, F), (torch, TF)):
            ts = [lib.tensor(a).requires_grad_(True) for a in args]
            out = getattr(M, conv)(*ts)
            grads = lib.autograd.grad(out.sum(), ts, create_graph=True)
            got.append([g.requires_grad for g in grads])
        assert got[0] == got[1], conv


def test_half_transposed_conv3d_sums_in_float32(device):
    x = np.full((1, 2, 2, 2, 2), 180.0, dtype=np.float16)
    w = np.full((2, 1, 2, 2, 2), 180.0, dtype=np.float16)
    w[0, 0, 0] = -180.0  # partial sums past the float16 maximum, a total inside it
    p = F.conv_transpose3d(plugrad.tensor(x, device=device), plugrad.tensor(w, device=device))
    t = TF.conv_transpose3d(torch.tensor(x), torch.tensor(w))
    np.testing.assert_allclose(_host(p).astype(np.float64), _host(t).astype(np.float64),
                               rtol=1e-3)


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("nd", [2, 3])
def test_grid_sample_at_non_finite_and_huge_coordinates(padding, align, nd, device):
    coords = [NAN, INF, -INF, 1.7e308, -9e307, 1e30, 0.3, -0.7]
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 2) + (3,) * nd)
    pts = np.array([[a, b, c][:nd] for a in coords for b in coords[5:] for c in coords[6:]])
    grid = pts.reshape((1,) + (1,) * (nd - 1) + (len(pts), nd))
    for mode in ("bilinear", "nearest"):
        kw = dict(mode=mode, padding_mode=padding, align_corners=align)
        p = F.grid_sample(plugrad.tensor(x, device=device), plugrad.tensor(grid, device=device),
                          **kw)
        t = TF.grid_sample(torch.tensor(x), torch.tensor(grid), **kw)
        np.testing.assert_allclose(_host(p), _host(t), rtol=1e-12, err_msg=mode)


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_ctc_gradient_with_respect_to_log_probs(reduction, device):
    """The gradient PyTorch gives ``log_probs`` itself (a leaf), not only through log_softmax;
    a NaN log-prob makes its sample's loss and gradient NaN."""
    rng = np.random.default_rng(5)
    lp = np.log(rng.dirichlet(np.ones(4), (6, 3)))
    lp[2, 2, 1] = NAN
    targets, in_len, tg_len = np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]]), [6, 5, 4], [3, 2, 1]
    p = plugrad.tensor(lp, device=device).requires_grad_(True)
    t = torch.tensor(lp).requires_grad_(True)
    lo = F.ctc_loss(p, plugrad.tensor(targets, device=device), in_len, tg_len,
                    reduction=reduction)
    lt = TF.ctc_loss(t, torch.tensor(targets), in_len, tg_len, reduction=reduction)
    np.testing.assert_allclose(_host(lo), _host(lt), rtol=1e-10)
    lo.sum().backward()
    lt.sum().backward()
    np.testing.assert_allclose(_host(p.grad), _host(t.grad), rtol=1e-9, atol=1e-12)
