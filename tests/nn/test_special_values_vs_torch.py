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
