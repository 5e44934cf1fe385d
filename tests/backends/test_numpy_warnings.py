"""The NumPy backend's IEEE policy: results without warnings, whatever the warning filters,
while the user's own NumPy code keeps NumPy's warnings."""
import warnings

import numpy as np
import pytest

import plugrad
from plugrad.backends.numpy import NumPyBackend

K = NumPyBackend()
F16 = np.float16


def _edge_cases():
    big = np.array([60000.0], F16)
    return [
        ("add overflows", lambda: K.add(big, big), [np.inf]),
        ("mul overflows", lambda: K.mul(big, big), [np.inf]),
        ("inf - inf", lambda: K.sub(np.array([np.inf]), np.array([np.inf])), [np.nan]),
        ("log(0)", lambda: K.log(np.array([0.0])), [-np.inf]),
        ("1 / 0", lambda: K.div(np.array([1.0]), np.array([0.0])), [np.inf]),
        ("sum overflows", lambda: K.sum(np.array([3e38, 3e38], np.float32), (0,), False),
         np.inf),
        ("full rounds to inf", lambda: K.full((2,), 1e6, "float16", None), [np.inf, np.inf]),
        ("cast rounds to inf", lambda: K.astype(np.array([1e6]), "float16"), [np.inf]),
        ("pow overflows", lambda: K.pow(np.array([10.0], np.float32), 100.0), [np.inf]),
        ("cumsum overflows", lambda: K.cumsum(np.array([6e4, 6e4], F16), 0), [6e4, np.inf]),
    ]


@pytest.mark.parametrize("name, fn, expected", _edge_cases(), ids=lambda v: v
                         if isinstance(v, str) else "")
@pytest.mark.parametrize("filters", ["default", "error", "always-appended"])
def test_ieee_results_without_warnings(name, fn, expected, filters):
    with warnings.catch_warnings(record=True) as caught:
        if filters == "error":  # as `-W error` or pytest's filterwarnings would
            warnings.simplefilter("error")
        elif filters == "always-appended":
            warnings.simplefilter("always", append=True)
        out = fn()
    np.testing.assert_array_equal(out, np.asarray(expected, dtype=out.dtype))
    assert not caught, f"{name}: {caught[0].message}"


def test_in_place_update_is_applied_once_under_warnings_as_errors():
    # NumPy reports the division by zero after writing all of `out`; rerunning would halve
    # the second element twice.
    dst = np.array([1.0, 6.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = K.update_("div", dst, np.array([0.0, 2.0]))
    assert out is dst
    assert dst.tolist() == [np.inf, 3.0]


def test_tensor_ops_under_warnings_as_errors_give_ieee_results():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = plugrad.tensor([60000.0, 1.0], dtype=plugrad.float16, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        assert y.item() == float("inf")
        assert x.grad.tolist() == [float("inf"), 2.0]


def test_the_users_own_numpy_code_still_warns():
    plugrad.ones(2) / 0  # plugrad is quiet ...
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.log(np.zeros(1))  # ... but NumPy's settings are the user's
    assert any("divide by zero" in str(w.message) for w in caught)
    assert np.geterr()["divide"] == "warn"


def test_the_pytest_plugin_installs_the_same_filter():
    from _pytest.warnings import parse_warning_filter

    from plugrad.backends.numpy import FP_WARNINGS
    from plugrad.testing.plugin import FP_WARNINGS_FILTER
    action, message, category, module, _ = parse_warning_filter(FP_WARNINGS_FILTER,
                                                                escape=False)
    assert (action, message, category, module) == ("ignore", FP_WARNINGS, RuntimeWarning,
                                                   r"plugrad(\.|$)")
