"""plugrad.testing.assert_close: PyTorch's default tolerances and failure messages."""
import numpy as np
import pytest

import plugrad
from plugrad.testing import assert_close, default_tolerances


def test_default_tolerances_by_dtype():
    assert default_tolerances("float16") == (1e-3, 1e-5)
    assert default_tolerances("float32") == (1.3e-6, 1e-5)
    assert default_tolerances("float64") == (1e-7, 1e-7)
    assert default_tolerances("int64") == (0.0, 0.0)
    assert default_tolerances("bool") == (0.0, 0.0)
    assert default_tolerances("float16", "float64") == (1e-3, 1e-5)


def test_within_default_tolerance_passes(device):
    x = plugrad.tensor([1.0, 2.0, 3.0], device=device)
    assert_close(x, x + 1e-6)
    assert_close(x.double(), x.double() * (1 + 5e-8))
    assert_close(x, np.array([1.0, 2.0, 3.0], dtype=np.float32))


def test_float32_outside_tolerance_fails_with_details(device):
    x = plugrad.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    y = plugrad.tensor([[1.0, 2.0], [3.0, 4.5]], device=device)
    with pytest.raises(AssertionError) as info:
        assert_close(x, y)
    msg = str(info.value)
    assert "Mismatched elements: 1 / 4 (25.0%)" in msg
    assert "Greatest absolute difference: 0.5 at index (1, 1)" in msg
    assert "Greatest relative difference: 0.111111 at index (1, 1)" in msg
    assert "up to 1e-05 allowed" in msg and "up to 1.3e-06 allowed" in msg


def test_float64_is_stricter_than_float32():
    a = np.array([1.0])
    assert_close(a.astype(np.float32), (a * (1 + 1e-6)).astype(np.float32))
    with pytest.raises(AssertionError):
        assert_close(a, a * (1 + 1e-6))


def test_integers_and_bools_are_exact(device):
    i = plugrad.tensor([1, 2, 3], device=device)
    assert_close(i, [1, 2, 3], check_dtype=False)
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 3"):
        assert_close(i, plugrad.tensor([1, 2, 4], device=device))
    with pytest.raises(AssertionError, match="not equal"):
        assert_close(plugrad.tensor([True, False]), plugrad.tensor([True, True]))


def test_dtype_and_shape_are_checked():
    with pytest.raises(AssertionError, match="dtype"):
        assert_close(plugrad.tensor([1.0]), plugrad.tensor([1.0], dtype=plugrad.float64))
    assert_close(plugrad.tensor([1.0]), plugrad.tensor([1.0], dtype=plugrad.float64),
                 check_dtype=False)
    with pytest.raises(AssertionError, match="shape"):
        assert_close(plugrad.zeros(2, 3), plugrad.zeros(3, 2))


def test_nan_and_inf():
    nan = float("nan")
    with pytest.raises(AssertionError):
        assert_close(np.array([nan]), np.array([nan]))
    assert_close(np.array([nan, np.inf]), np.array([nan, np.inf]), equal_nan=True)
    with pytest.raises(AssertionError):
        assert_close(np.array([np.inf]), np.array([-np.inf]))


def test_numbers_nested_lists_and_sequences_of_tensors(device):
    assert_close(1.0, 1.0 + 1e-9)
    with pytest.raises(AssertionError, match="Scalars are not close"):
        assert_close(1.0, 1.1)
    assert_close([[1, 2], [3, 4]], [[1, 2], [3, 4]])
    a = plugrad.tensor([1.0], device=device)
    assert_close((a, a * 2), [a, a * 2])
    with pytest.raises(AssertionError, match=r"item \[1\]"):
        assert_close((a, a * 2), (a, a * 3))


def test_explicit_tolerances_must_come_in_pairs():
    assert_close(np.array([1.0]), np.array([1.1]), rtol=0.2, atol=0.0)
    with pytest.raises(ValueError):
        assert_close(np.array([1.0]), np.array([1.0]), rtol=0.1)


def test_tensors_on_different_devices_compare_by_value():
    assert_close(plugrad.tensor([1.5, 2.5], device="cpu"),
                 plugrad.tensor([1.5, 2.5], device="ref"))
