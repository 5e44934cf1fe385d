"""Regression cases for divergences of ``nn.functional`` that the differential suite found
and that were fixed (issue 16): each compares plugrad with torch directly, on every
built-in device (integer inputs PyTorch's CPU kernels take, losses and norms at special
values, their double backward)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import plugrad
import plugrad.nn.functional as F

torch = pytest.importorskip("torch", reason="these cases compare with PyTorch, which is "
                            "not installed")
from .pairs import host  # noqa: E402

_BIG = 1.7976931348623157e308


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64"])
@pytest.mark.parametrize("reduction", ["none", "sum"])
def test_integer_hinge_embedding_loss_stays_integer(device, dtype, reduction):
    """PyTorch computes an integer input's hinge loss in its dtype (the margin cast to it,
    uint8 wrapping); the sum is int64. plugrad promoted to float32."""
    x, t = [[3, -2, 0], [1, 5, 2]], [[1, -1, 1], [-1, -1, 1]]
    if dtype == "uint8":
        x = [[3, 2, 0], [1, 5, 2]]
    got = F.hinge_embedding_loss(plugrad.tensor(x, dtype=getattr(plugrad, dtype), device=device),
                                 plugrad.tensor(t, device=device), margin=1.5,
                                 reduction=reduction)
    want = torch.nn.functional.hinge_embedding_loss(
        torch.tensor(x, dtype=getattr(torch, dtype)), torch.tensor(t), margin=1.5,
        reduction=reduction)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(host(got), want.numpy())


def _ints(shape, dtype, seed):
    """Small integers with the dtype's extremes at both ends (wraparound must agree)."""
    info = np.iinfo(dtype)
    v = np.random.default_rng(seed).integers(max(info.min, -5), 6, size=shape)
    v.flat[0], v.flat[-1] = info.max, info.min
    return v.astype(dtype)


_INTEGER_NN = {
    "conv1d": (lambda L, a: L.conv1d(a[0], a[1], a[2], stride=2, padding=1),
               [(1, 2, 7), (3, 2, 2), (3,)], ("uint8", "int8", "int32", "int64")),
    "conv2d": (lambda L, a: L.conv2d(a[0], a[1], None, padding=1, groups=2),
               [(1, 2, 5, 5), (4, 1, 3, 3)], ("uint8", "int16", "int32", "int64")),
    "conv3d": (lambda L, a: L.conv3d(a[0], a[1], a[2], stride=2, padding=1, groups=2),
               [(1, 2, 4, 4, 4), (2, 1, 2, 2, 2), (2,)], ("uint8", "int32", "int64")),
    "conv_transpose2d": (lambda L, a: L.conv_transpose2d(a[0], a[1], a[2], stride=2,
                                                         padding=1),
                         [(1, 2, 4, 4), (2, 3, 3, 3), (3,)], ("int64",)),
    "conv_transpose3d": (lambda L, a: L.conv_transpose3d(a[0], a[1], a[2], stride=2),
                         [(1, 2, 3, 3, 3), (2, 3, 2, 2, 2), (3,)], ("int64",)),
    "max_pool2d": (lambda L, a: L.max_pool2d(a[0], 3, 2, 1, return_indices=True),
                   [(1, 2, 5, 5)], ("uint8", "int8", "int32", "int64")),
    "avg_pool1d": (lambda L, a: L.avg_pool1d(a[0], 3, 2, 1), [(1, 2, 7)], ("int64",)),
    "avg_pool2d": (lambda L, a: L.avg_pool2d(a[0], 2, ceil_mode=True,
                                             count_include_pad=False), [(1, 2, 5, 5)],
                   ("int64",)),
    "avg_pool3d": (lambda L, a: L.avg_pool3d(a[0], 2, padding=1), [(1, 1, 3, 4, 4)],
                   ("int64",)),
    "l1_loss": (lambda L, a: L.l1_loss(a[0], a[1], reduction="sum"), [(2, 3), (2, 3)],
                ("uint8", "int32", "int64")),
}


@pytest.mark.parametrize("name", sorted(_INTEGER_NN))
def test_integer_convolutions_and_pools(device, name):
    """PyTorch's CPU kernels compute integer convolutions (GEMM in the dtype, wrapping),
    max pools (padding below the dtype's minimum), int64 average pools (C++ integer
    division) and integer l1 sums: the same values and dtypes (plugrad raised
    DTypeError)."""
    fn, shapes, dtypes = _INTEGER_NN[name]
    for dtype in dtypes:
        vals = [_ints(s, dtype, i) for i, s in enumerate(shapes)]
        want = fn(torch.nn.functional, [torch.from_numpy(v.copy()) for v in vals])
        got = fn(F, [plugrad.tensor(v, device=device) for v in vals])
        for w, g in zip(*((want, got) if isinstance(want, tuple) else ((want,), (got,)))):
            assert g.dtype.name == str(w.dtype).removeprefix("torch.")
            np.testing.assert_array_equal(host(g), w.numpy())


@pytest.mark.parametrize("dilation", [2, (1, 2)])
def test_dilated_integer_convolution_is_int64_only(device, dilation):
    """PyTorch's dilated convolution kernel (slow_conv_dilated) has no int32 kernel."""
    x, w = plugrad.ones(1, 2, 5, 5, dtype=plugrad.int32, device=device), \
        plugrad.ones(3, 2, 2, 2, dtype=plugrad.int32, device=device)
    with pytest.raises(plugrad.DTypeError, match="dilated"):
        F.conv2d(x, w, dilation=dilation)
    got = F.conv2d(x.long(), w.long(), dilation=dilation)
    want = torch.nn.functional.conv2d(torch.ones(1, 2, 5, 5, dtype=torch.int64),
                                      torch.ones(3, 2, 2, 2, dtype=torch.int64),
                                      dilation=dilation)
    np.testing.assert_array_equal(host(got), want.numpy())


def test_integer_trunc_division_is_exact(device):
    """div(rounding_mode='trunc') of int64 went through a float64 quotient (wrong past
    2**53, and a garbage value for a zero divisor instead of an error)."""
    a, b = [-9223372036854775805, 2 ** 62 + 1, -7, 7, -8, 0], [4, 3, 2, -2, -2, -3]
    got = plugrad.div(plugrad.tensor(a, device=device), plugrad.tensor(b, device=device),
                      rounding_mode="trunc")
    want = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode="trunc")
    np.testing.assert_array_equal(host(got), want.numpy())
    with pytest.raises(ZeroDivisionError):
        plugrad.div(plugrad.tensor([1, 2], device=device), 0, rounding_mode="trunc")


@pytest.mark.parametrize("x, t", [([0.5, math.nan], [0.0, 1.0]), ([0.5, 0.2], [math.nan, 1.0]),
                                  ([0.5, 0.2], [1.5, 1.0]), ([0.5, 0.2], [-0.5, 1.0])])
def test_binary_cross_entropy_checks_target_and_nan(device, x, t):
    """PyTorch's kernel checks 0 <= v <= 1 for the target as for the input, and NaN fails
    it; plugrad checked the input only, and NaN passed its min/max comparison."""
    with pytest.raises(RuntimeError, match="should be between 0 and 1"):
        torch.nn.functional.binary_cross_entropy(torch.tensor(x), torch.tensor(t))
    with pytest.raises(RuntimeError, match="should be between 0 and 1"):
        F.binary_cross_entropy(plugrad.tensor(x, device=device), plugrad.tensor(t, device=device))


@pytest.mark.parametrize("name, kw", [("smooth_l1_loss", {"beta": 0.5}),
                                      ("huber_loss", {"delta": 0.5})])
def test_smooth_l1_and_huber_gradients_at_overflow_and_kinks(device, name, kw):
    """PyTorch's piecewise gradient: +-slope where |x - t| > beta even when (x - t)**2
    overflows (the composed where sent 0 * inf = NaN there), s / beta for the second
    derivative at x == t (the |d| kink gave 0) and 0 at the joins and at NaN."""
    x = [1.0, 1.7e308, 2.0, math.inf, 0.25, math.nan, 1.5]
    t = [1.0, -1.0, 1.5, 0.0, -0.25, 0.0, 1.0]
    res = []
    for lib, fn in ((torch, getattr(torch.nn.functional, name)), (plugrad, getattr(F, name))):
        dev = {} if lib is torch else {"device": device}
        xs = lib.tensor(x, dtype=lib.float64, requires_grad=True, **dev)
        ts = lib.tensor(t, dtype=lib.float64, requires_grad=True, **dev)
        loss = fn(xs, ts, reduction="sum", **kw)
        gx, gt = lib.autograd.grad(loss, (xs, ts), create_graph=True)
        ggx, ggt = lib.autograd.grad((gx * lib.arange(7, dtype=lib.float64, **dev)).sum(),
                                     (xs, ts))
        res.append([np.asarray(v.detach().cpu().numpy()) for v in (loss, gx, gt, ggx, ggt)])
    for want, got in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_margin_losses_skip_nan_and_minus_inf_terms(device):
    """PyTorch's multi_margin / multilabel_margin kernels add a term only where
    ``z > 0``: a NaN or -inf ``z`` adds nothing (the composed ``where(z > 0, z, z * 0)``
    made it NaN), and an inf one gives inf, not ``inf * 0``."""
    x = [[0.2, math.nan, 0.03, 4e307], [4e307, 0.002, -0.18, math.nan],
         [0.1, -math.inf, math.inf, -0.1]]
    for name, target, kw in (("multi_margin_loss", [3, 3, 0], {"p": 2, "reduction": "none"}),
                             ("multi_margin_loss", [1, 0, 2], {}),
                             ("multilabel_margin_loss", [[3, -1, 0, 0], [1, 2, -1, 0],
                                                         [0, -1, 0, 0]],
                              {"reduction": "none"})):
        want = getattr(torch.nn.functional, name)(torch.tensor(x, dtype=torch.float64),
                                                  torch.tensor(target), **kw)
        xs = plugrad.tensor(x, dtype=plugrad.float64, device=device, requires_grad=True)
        got = getattr(F, name)(xs, plugrad.tensor(target, device=device), **kw)
        np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-12, equal_nan=True)


def test_poisson_nll_full_masks_the_stirling_term_as_pytorch(device):
    """PyTorch adds the Stirling term of the raw target masked_fill(target <= 1, 0): a -inf
    target adds 0 (the 0 * inf of plugrad's masking gave NaN), a NaN target keeps NaN, and
    the gradient at targets <= 0 is that term's own NaN."""
    x = [[0.5, 2.5, 1.0], [0.6, 1.2, 1.2]]
    t = [[2.5, -math.inf, math.nan], [-1e308, 4.9e-324, 3.0]]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        xs = lib.tensor(x, dtype=lib.float64, requires_grad=True, **dev)
        ts = lib.tensor(t, dtype=lib.float64, requires_grad=True, **dev)
        loss = lib.nn.functional.poisson_nll_loss(xs, ts, log_input=False, full=True,
                                                  reduction="none")
        gx, gt = lib.autograd.grad(loss.sum(), (xs, ts))
        res.append([np.asarray(v.detach().cpu().numpy()) for v in (loss, gx, gt)])
    for want, got in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", ["adaptive_avg_pool3d", "avg_pool3d"])
def test_avg_pools_3d_sum_as_pytorch_loop(device, dtype, name):
    """PyTorch's adaptive_avg_pool3d adds each window's taps one by one in the input's
    dtype (float16 too) and divides by kT, kH, kW in turn: a half window holding 65504 and
    16384 is inf there (plugrad's float32 sum gave 2048), and huge values cancel in its
    order."""
    big = {"float16": 65504.0, "float32": 3.4e38, "float64": 1.7e308}[dtype]
    v = np.random.default_rng(3).uniform(-2, 2, (1, 2, 3, 4, 3))
    v[0, 0, 1, 0, 0], v[0, 0, 2, 0, 0], v[0, 1, 0, 0, 0], v[0, 1, 0, 0, 1] = \
        big, big / 4, big, -big
    if name == "avg_pool3d":
        if dtype == "float16":
            pytest.skip("PyTorch has no float16 avg_pool3d on CPU")
        args, v[0, 1, 0, 1, 0] = ((2,), {"stride": 1, "padding": 1}), big / 2
    else:
        args = (((2, 3, 2),), {})
    want = getattr(torch.nn.functional, name)(torch.tensor(v, dtype=getattr(torch, dtype)),
                                              *args[0], **args[1])
    got = getattr(F, name)(plugrad.tensor(v, dtype=getattr(plugrad, dtype), device=device),
                           *args[0], **args[1])
    np.testing.assert_array_equal(host(got), want.numpy())


@pytest.mark.parametrize("name", ["batch_norm", "instance_norm", "group_norm"])
def test_half_norms_compute_statistics_in_float32(device, name):
    """PyTorch's CPU norms compute half tensors in float32: a variance of 1.8e8 (values
    16384 apart) overflowed plugrad's half statistics to inf, and every output was the bias."""
    v = [[[0.31, -1.06, 16384.0, 2.0], [-3.0, 0.5, -16376.0, 1.0]]] * 2
    w, b = [3.0, 0.73], [0.38, -1.5]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        x = lib.tensor(v, dtype=lib.float16, **dev)
        wt, bt = lib.tensor(w, dtype=lib.float16, **dev), lib.tensor(b, dtype=lib.float16, **dev)
        fn = getattr(lib.nn.functional, name)
        if name == "batch_norm":
            out = fn(x, None, None, wt, bt, training=True)
        elif name == "instance_norm":
            out = fn(x, weight=wt, bias=bt)
        else:
            out = fn(x, 1, wt, bt)
        res.append(np.asarray(out.detach().cpu().numpy(), dtype=np.float64))
    np.testing.assert_allclose(res[1], res[0], rtol=2e-3, atol=2e-3)


def test_batch_norm_is_x_times_alpha_plus_beta(device):
    """PyTorch's kernel computes x * alpha + beta (alpha = invstd * weight, beta = bias -
    mean * alpha): with an infinite weight beta is infinite too, so finite inputs give NaN
    (plugrad's (x - mean) * invstd * weight + bias gave -inf)."""
    v, w, b = [[-0.31, -0.41], [1.5, -0.5], [0.67, 0.98]], [0.5, -math.inf], [-1.0, 1.59]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        out = lib.nn.functional.batch_norm(lib.tensor(v, **dev), None, None,
                                           lib.tensor(w, **dev), lib.tensor(b, **dev),
                                           training=True)
        res.append(np.asarray(out.detach().cpu().numpy()))
    np.testing.assert_allclose(res[1], res[0], rtol=1e-5, equal_nan=True)


def test_prelu_second_derivatives_at_zero(device):
    """PyTorch's prelu double backward switches on x >= 0: at x == 0 the mixed second
    derivatives are 0 (the composed where gave the w * x branch's g)."""
    x, w = [[0.0, 1.0, -2.0], [0.0, -1.0, math.nan]], [0.25, -0.5, 1.5]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        xs = lib.tensor(x, dtype=lib.float64, requires_grad=True, **dev)
        ws = lib.tensor(w, dtype=lib.float64, requires_grad=True, **dev)
        y = lib.nn.functional.prelu(xs, ws)
        gx, gw = lib.autograd.grad((y * y).sum(), (xs, ws), create_graph=True)
        ggx, ggw = lib.autograd.grad((gx * 3).sum() + (gw * 2).sum(), (xs, ws))
        res.append([np.asarray(v.detach().cpu().numpy()) for v in (y, gx, gw, ggx, ggw)])
    for want, got in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_hardswish_gradient_at_infinities_and_nan(device):
    """PyTorch's hardswish gradient is 1 at inf and NaN and 0 at -inf; the composed where
    gave NaN (0 times the quadratic piece's gradient at inf).

    PyTorch's answer is its scalar kernel's: on an AVX2 CPU its vectorised float64 loop (8
    elements or more) gives NaN at NaN. So torch runs each value alone; plugrad all at once."""
    v = [-3.0, 3.0, math.inf, -math.inf, math.nan, 1.0, -4.0, 2.999]

    def run(lib, values, **dev):
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True, **dev)
        y = lib.nn.functional.hardswish(x)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return [np.asarray(t.detach().cpu().numpy()) for t in (y, g, gg)]
    want = [np.concatenate(parts) for parts in zip(*(run(torch, [a]) for a in v))]
    got = run(plugrad, v, device=device)
    for want, got in zip(want, got):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_kl_div_target_gradient_is_xlogys(device):
    """PyTorch's kl_div is xlogy(t, t) - t * x: the target's gradient at t == 0 is xlogy's
    NaN (0 / 0), where plugrad's masked log gave -x."""
    x, t = [[-1.6, -1.2, 0.3], [-2.3, -1.0, -0.5]], [[0.5, 0.0, 1.5], [0.0, -0.0, 0.33]]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        xs = lib.tensor(x, dtype=lib.float64, requires_grad=True, **dev)
        ts = lib.tensor(t, dtype=lib.float64, requires_grad=True, **dev)
        loss = lib.nn.functional.kl_div(xs, ts, reduction="batchmean")
        res.append([np.asarray(v.detach().cpu().numpy())
                    for v in (loss, *lib.autograd.grad(loss, (xs, ts)))])
    for want, got in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_logsigmoid_kernel_values_and_gradients(device):
    """PyTorch's logsigmoid is min(x, 0) - log1p(exp(-|x|)) with its own backward and
    double backward: NaN gradients at NaN (-softplus(-x) gave 0) and +0.0 at large x."""
    v = [math.nan, math.inf, -math.inf, 0.0, -800.0, 800.0, 1.0, -2.5]
    res = []
    for lib in (torch, plugrad):
        dev = {} if lib is torch else {"device": device}
        x = lib.tensor(v, dtype=lib.float64, requires_grad=True, **dev)
        y = lib.nn.functional.logsigmoid(x)
        g, = lib.autograd.grad((y * 2).sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * 3).sum(), x)
        res.append([np.asarray(t.detach().cpu().numpy()) for t in (y, g, gg)])
    for want, got in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
        zero = want == 0
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_double_backward_is_pytorch_formula(device, approximate):
    """The second derivative is PyTorch's ``gelu_double_backward``, ``gg * g * (2 pdf - x²
    pdf)`` (or the tanh form's product rule): NaN where ``x²`` overflows, where the
    derivative of plugrad's composite gave 0; the gradient of ``g`` through the first
    backward as well."""
    xs = [-1.19, 0.3, 2.5, 8.98e307, 40.0, -7.0, 0.0, -30.0, 1e154, 3.0]
    w = [0.7, -1.1, 0.9, 1.2, -0.6, 1.3, 0.4, 0.8, -0.9, 1.0]
    out = []
    for lib, fn in ((torch, torch.nn.functional), (plugrad, F)):
        dev = {"device": device} if lib is plugrad else {}
        x = lib.tensor(xs, dtype=lib.float64, requires_grad=True, **dev)
        wt = lib.tensor(w, dtype=lib.float64, requires_grad=True, **dev)
        y = fn.gelu(x, approximate=approximate)
        g, = lib.autograd.grad((y * wt).sum(), x, create_graph=True)
        gx, gw = lib.autograd.grad((g * wt.detach().flip(0)).sum(), [x, wt])
        out.append([host(g), host(gx), host(gw)])
    for want, got in zip(*out):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_of_inf_is_inf_in_every_dtype(device, dtype, approximate):
    """gelu(+inf) is inf and gelu(-inf) NaN (the erf form) or -0 times inf (tanh), in every
    dtype, as PyTorch's float64 kernel gives: its float32 kernel's +inf depends on the CPU
    (NaN with AVX-512, inf with AVX2), so float64 is the reference."""
    inf = math.inf
    want = torch.nn.functional.gelu(torch.tensor([inf, -inf, 3.0], dtype=torch.float64),
                                    approximate=approximate)
    got = F.gelu(plugrad.tensor([inf, -inf, 3.0], dtype=getattr(plugrad, dtype), device=device),
                 approximate=approximate)
    assert got[0].item() == inf
    np.testing.assert_allclose(host(got).astype(np.float64), host(want), rtol=1e-3,
                               equal_nan=True)


def test_pdist_gradient_multiplies_before_dividing(device):
    """``pdist``'s p=2 gradient is PyTorch's kernel's ``(g * diff) / d`` per pair (0 where
    ``d == 0``): NaN where ``g * diff`` overflows against an infinite distance, where
    plugrad's 2-norm rule (``g * (diff / d)``) gave 0."""
    values = [[8.99e307, -0.97, 0.05], [0.32, 0.81, 1.65], [-_BIG, math.inf, -0.36],
              [-1.09, 4.49e307, -1.27], [0.32, 0.81, 1.65]]
    out = []
    for lib in (torch, plugrad):
        dev = {"device": device} if lib is plugrad else {}
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True, **dev)
        d = (torch.nn.functional if lib is torch else F).pdist(x)
        w = lib.tensor([0.5 + 0.1 * i for i in range(d.shape[0])], dtype=lib.float64, **dev)
        g, = lib.autograd.grad((d * w).sum(), x)
        out.append([host(d), host(g)])
    for want, got in zip(*out):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_cdist_matrix_product_pads_with_ones(device):
    """The matrix-product form pads with ones beside the squared norms (plugrad made them
    ``norm * 0 + 1``: NaN beside an infinite norm) and clamps ``-inf`` to 0."""
    a = [[0.96, 4.49e307], [-_BIG, 0.81], [1.43, 0.5]]
    b = [[-1.49, _BIG], [-1.27, -0.32]]
    out = []
    for lib in (torch, plugrad):
        dev = {"device": device} if lib is plugrad else {}
        x1 = lib.tensor(a, dtype=lib.float64, **dev)
        x2 = lib.tensor(b, dtype=lib.float64, **dev)
        out.append(host(lib.cdist(x1, x2, compute_mode="use_mm_for_euclid_dist")))
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12, equal_nan=True)
