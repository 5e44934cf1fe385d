"""Special values, kinks and fill-value checks of nn.functional ops against PyTorch: values,
first and second derivatives (float64) at nan / ±inf / ±0 / huge / subnormal inputs, and
the range checks of scalar arguments. Each case is one the differential suite found."""
import math

import numpy as np
import pytest

import plugrad
import plugrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

from tests.core.test_special_values_vs_torch import compare  # noqa: E402

NAN, INF, BIG, TINY = math.nan, math.inf, 1.7976931348623157e308, 2.2250738585072014e-308


def _outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - the error type is compared
        return exc


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int8", "float16", "bfloat16", "float32",
                                   "float64"])
@pytest.mark.parametrize("th, v", [(0.25, -1.0), (0.25, 2.7), (2147483646.5, 1), (300, 1),
                                   (-300, 1), (1e40, 1), (1, 1e40), (1, 65519.0),
                                   (1, INF), (NAN, 2)])
def test_threshold_scalars_as_torch(device, dtype, th, v):
    """Both numbers converted to the dtype (integers: truncated, range-checked; floats:
    ``threshold`` to the compute type), so int32 near its maximum never goes via float32."""
    if dtype == "bfloat16" and device == "ref":
        pytest.skip("the ref backend has no bfloat16")
    x = [2147483646, 5, -3, 0, 2147483647, -2147483648, 1]
    tx = torch.tensor(x, dtype=torch.int64).to(getattr(torch, dtype))
    want = _outcome(TF.threshold, tx, th, v)
    got = _outcome(F.threshold, plugrad.tensor(np.asarray(tx.to(torch.float64) if dtype ==
                   "bfloat16" else tx), device=device).to(getattr(plugrad, dtype)), th, v)
    if isinstance(want, Exception):
        assert isinstance(got, RuntimeError), got
        assert "without overflow" in str(got)
        return
    assert not isinstance(got, Exception), got
    np.testing.assert_array_equal(np.asarray(got.to(plugrad.float64)),
                                  want.to(torch.float64).numpy())


ACTIVATION_POINTS = [0.97, -1.32, 1.0, NAN, INF, -INF, 0.0, -0.0, BIG, -BIG, 4.49e307,
                     1000.0, 25.0, -25.0, TINY, 5e-324, -0.25]


@pytest.mark.parametrize("name", ["nn.functional.celu", "nn.functional.selu",
                                  "nn.functional.mish", "nn.functional.softsign"])
def test_activation_gradients_at_special_values(device, name):
    """NaN takes the branch PyTorch's ``x <= 0`` test gives it (celu/selu: the linear one,
    gradient ``g``); mish is PyTorch's rule unthresholded (``x * 0`` is 0 at huge ``|x|``,
    NaN double backward where ``exp`` overflows). In chunks of 6: PyTorch's vectorised
    elu backward (16+ float64 elements) gives NaN at NaN, its scalar loop ``g``."""
    for i in range(0, len(ACTIVATION_POINTS), 6):
        compare(name, (ACTIVATION_POINTS[i:i + 6],), device, rtol=1e-6, atol=1e-9)


def test_rms_norm_gradient_where_the_square_overflows(device):
    """``pow(x, 2)``'s gradient ``g * (2 * x)`` is NaN where ``2 * x`` overflows."""
    x = [[[BIG, 0.55, -1.36], [-4.49e307, 0.5, -0.29]], [[NAN, 1.49, -0.32],
                                                          [-0.22, -1.49, INF]]]
    compare("nn.functional.rms_norm", (x,), device, kwargs={"normalized_shape": (2, 3),
                                                           "eps": 1e-3})
    compare("square", ([BIG, -BIG, 1e200, NAN, 0.5],), device)


def test_lp_pool_gradient_of_windows_of_zeros(device):
    """``sign``'s gradient is ``zeros_like(g)`` (PyTorch's), not ``g * 0``: NaN where the
    outer power's gradient is inf at a window of zeros."""
    x = [[[1.81, 5e-324, 5e-324, 0.0, 1.26, -5e-324, 1.96], [-0.0, 1.79, 5e-324, 0.23,
                                                            0.70, 0.67, TINY]]]
    compare("nn.functional.lp_pool1d", (x,), device,
            kwargs={"norm_type": 2.0, "kernel_size": 2}, rtol=1e-6, atol=1e-9)
    compare("sign", ([0.0, -0.0, INF, NAN, -2.0],), device)


def test_adaptive_avg_pool1d_half_sums_in_float32(device):
    x = [[-0.39, 1.95, 16384.0, 65504.0, -1.87, -1.66, 0.77],
         [-65504.0, 1.33, -1.88, 1.62, 1.18, 0.20, -0.89]]
    want = TF.adaptive_avg_pool1d(torch.tensor(x, dtype=torch.float16), 4)
    got = F.adaptive_avg_pool1d(plugrad.tensor(x, dtype=plugrad.float16, device=device), 4)
    np.testing.assert_allclose(np.asarray(got.float()), want.float().numpy(), rtol=1e-3)


@pytest.mark.parametrize("rows", [
    [[0.46, 1.18e-38], [NAN, -INF], [NAN, -1.92], [0.54, 3.4e38]],
    [[-1.07, 1.57], [-0.95, 0.23], [2.5, 1.74], [1.94, NAN]],
    [[0.37, 1.73], [NAN, INF], [0.056, -1.65], [-0.27, 0.87]],
])
def test_embedding_bag_max_skips_a_later_nan(device, rows):
    """PyTorch's running maximum: a later row replaces the first only where it is greater,
    so a NaN after the first row is skipped and a NaN first row stays."""
    idx = [[0, 1], [3, 1], [0, 1], [2, 1], [1, 3], [1, 2]]
    want = TF.embedding_bag(torch.tensor(idx), torch.tensor(rows, dtype=torch.float64),
                            mode="max")
    got = F.embedding_bag(plugrad.tensor(idx, device=device),
                          plugrad.tensor(rows, dtype=plugrad.float64, device=device),
                          mode="max")
    np.testing.assert_array_equal(np.asarray(got), want.numpy())


def test_bilinear_half_weighted_in_float32(device):
    """Half inputs are weighted in float32 and rounded once (PyTorch's opmath): rounding
    each pass in half was 16 off here."""
    x = np.array([[[[-16376.0, -0.9238], [1.3164, -1.8262]], [[32752.0, -65504.0],
                                                              [-16376.0, -0.3269]]]])
    for kw in ({"size": (3, 4)}, {"scale_factor": 2}):
        want = TF.upsample_bilinear(torch.tensor(x, dtype=torch.float16), **kw)
        got = F.upsample_bilinear(plugrad.tensor(x, dtype=plugrad.float16, device=device), **kw)
        np.testing.assert_allclose(np.asarray(got.float()), want.float().numpy(), rtol=2e-4,
                                   atol=2e-3)


_CLAMPS = {
    "relu": (TF.relu, F.relu),
    "relu6": (TF.relu6, F.relu6),
    "hardtanh": (TF.hardtanh, F.hardtanh),
    "clamp_min(0)": (lambda x: x.clamp_min(0), lambda x: x.clamp_min(0)),
    "clamp_max(-0.0)": (lambda x: x.clamp_max(-0.0), lambda x: x.clamp_max(-0.0)),
    "clamp(1, -1)": (lambda x: x.clamp(1, -1), lambda x: x.clamp(1, -1)),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("n", [12, 3000])  # torch's scalar and vector loops agree here
@pytest.mark.parametrize("name", sorted(_CLAMPS))
def test_clamping_keeps_x_unless_beyond_a_bound_as_torch(device, dtype, n, name):
    """relu, relu6, hardtanh and clamp with number bounds keep an element unless it lies
    strictly beyond a bound: relu(-0.0) is -0.0 and NaN stays NaN, at every size (the
    backend's maximum has no such tie rule: NumPy's keeps +0 in float32)."""
    if dtype == "bfloat16" and device == "ref":
        pytest.skip("the ref backend has no bfloat16")
    vals = [NAN, -0.0, 0.0, -1.0, 2.0, INF, -INF, 6.0, 7.0, -1e-45, 1.0, -1.0]
    values = (vals * (n // len(vals) + 1))[:n]
    ft, fp = _CLAMPS[name]
    want = ft(torch.tensor(values, dtype=getattr(torch, dtype))).double().numpy()
    got = fp(plugrad.tensor(values, dtype=getattr(plugrad, dtype), device=device))
    got = got.double().cpu().numpy()
    np.testing.assert_array_equal(got, want)
    numbers = ~np.isnan(want)  # a NaN's sign bit is no convention
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))
