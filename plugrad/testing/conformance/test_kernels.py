"""Backend kernels (required primitives and optional kernels) against the reference backend."""
from plugrad.testing import _checks
from plugrad.testing.conformance._params import pytest_generate_tests  # noqa: F401


def test_kernel_forward(kernel_case):
    """Values, shape and dtype name equal the reference backend's kernel."""
    _checks.check_kernel_forward(*kernel_case)


def test_kernel_inputs_unchanged(kernel_case):
    """The kernel does not write its input arrays (``assign`` writes its first)."""
    _checks.check_kernel_inputs_unchanged(*kernel_case)
