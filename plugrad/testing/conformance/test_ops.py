"""Public ops (``plugrad.*`` functions and Tensor methods) on each backend and dtype."""
from plugrad.testing import _checks
from plugrad.testing.conformance._params import pytest_generate_tests  # noqa: F401


def test_forward(public_case):
    """Values, shape, dtype and device of every sample equal the reference's."""
    _checks.check_forward(*public_case)


def test_gradcheck(grad_case):
    """Analytical gradients equal finite differences (float64)."""
    _checks.check_gradcheck(*grad_case)


def test_gradcheck_noncontiguous(noncontig_grad_case):
    """gradcheck on samples whose inputs are transposed or strided views."""
    _checks.check_gradcheck(*noncontig_grad_case, noncontiguous=True)


def test_backward_paths(backward_case):
    """``loss.backward()`` (array rules) and ``autograd.grad`` (Tensor rules) agree exactly."""
    _checks.check_backward_paths(*backward_case)


def test_variants(variant_case):
    """Function, aliases, method, operator and in-place forms agree exactly."""
    _checks.check_variants(*variant_case)


def test_inputs_unchanged(public_case):
    """The op does not modify its inputs."""
    _checks.check_inputs_unchanged(*public_case)


def test_unsupported_dtype(unsupported_case):
    """A dtype the op does not support raises an error naming the problem."""
    _checks.check_unsupported_dtype(*unsupported_case)


def test_promotion(promotion_case):
    """Mixed-dtype operands give the dtype of PyTorch's promotion table."""
    from plugrad.core.registry import get_registry
    op, device, dtype = promotion_case
    have = get_registry().table(device).dtypes
    _checks.check_promotion(op, device, dtype, [d for d in op.dtypes if d in have])
