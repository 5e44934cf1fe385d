"""``autograd.gradcheck`` / ``gradgradcheck``: they pass on right rules and catch wrong ones."""
import numpy as np
import pytest

import plugrad
from plugrad.autograd import Function, gradcheck, gradgradcheck
from plugrad.core.autograd.gradcheck import GradcheckError


def leaf(device, *shape, dtype=plugrad.float64):
    return plugrad.randn(*shape, dtype=dtype, device=device).requires_grad_()


class WrongSquare(Function):
    """x**2 whose backward forgets the factor 2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


class FlatSecondOrder(Function):
    """x**3 with a right first derivative whose own derivative is wrong (x is detached)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3.0 * (x * x).detach()


class WrongSecondInput(Function):
    """a * b with the gradient of b off by one."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a + 1.0


def test_passes_on_correct_rules(device):
    x, y = leaf(device, 2, 3), leaf(device, 3)
    assert gradcheck(lambda a, b: ((a * b).exp().sum(1), a.tanh()), (x, y)) is True
    assert gradcheck(lambda a, b: (a * b).exp().sum(1), (x, y), fast_mode=True) is True


def test_single_tensor_input_and_non_tensor_inputs(device):
    x = leaf(device, 4)
    assert gradcheck(lambda a: a.sin(), x)
    assert gradcheck(lambda a, k: a * k, (x, 3.0))


def test_mismatch_names_output_input_element_and_values(device):
    x = plugrad.tensor([1.0, 2.0, 3.0], dtype=plugrad.float64, device=device,
                       requires_grad=True)
    with pytest.raises(GradcheckError, match=r"output 0 with respect to input 0 at element "
                                             r"\(output element \(0,\), input element \(0,\)\)"
                                             r"[\s\S]*numerical: 2\.0\d*[\s\S]*analytical: 1\.0"):
        gradcheck(WrongSquare.apply, (x,))
    assert issubclass(GradcheckError, RuntimeError)


def test_mismatch_in_second_input_is_located(device):
    a, b = leaf(device, 2), leaf(device, 2)
    with pytest.raises(GradcheckError, match="with respect to input 1"):
        gradcheck(WrongSecondInput.apply, (a, b))


def test_raise_exception_false_returns_false(device):
    x = leaf(device, 3)
    assert gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False


def test_fast_mode_catches_wrong_gradient(device):
    x = leaf(device, 5)
    with pytest.raises(GradcheckError, match=r"fast mode[\s\S]*output 0"):
        gradcheck(WrongSquare.apply, (x,), fast_mode=True)


@pytest.mark.parametrize("dtype", [plugrad.float32, plugrad.float16])
def test_refuses_non_double_inputs(device, dtype):
    x = leaf(device, 3, dtype=dtype)
    with pytest.raises(GradcheckError, match=rf"input 0 has dtype {dtype.name} and shape "
                                             r"\[3\].*float64"):
        gradcheck(lambda a: a * 2, (x,))


def test_needs_an_input_that_requires_grad(device):
    x = plugrad.randn(3, dtype=plugrad.float64, device=device)
    with pytest.raises(ValueError, match="requires_grad=True"):
        gradcheck(lambda a: a * 2, (x,))


def test_integer_outputs_are_ignored(device):
    x = leaf(device, 3, 4)
    assert gradcheck(lambda a: a.max(1), (x,))  # (values, indices)


def test_output_that_does_not_require_grad_must_have_zero_jacobian(device):
    x = leaf(device, 3)
    assert gradcheck(lambda a: (a * 2, a.detach() * 0 + 1.0), (x,))


def test_gradgradcheck_passes_and_catches_wrong_double_backward(device):
    x = leaf(device, 3)
    assert gradgradcheck(lambda a: (a * a * a).sum(), (x,))
    assert gradcheck(FlatSecondOrder.apply, (x,))  # first order is right ...
    with pytest.raises(GradcheckError, match="with respect to input 0"):
        gradgradcheck(FlatSecondOrder.apply, (x,))  # ... its derivative is not


def test_gradgradcheck_with_given_grad_outputs(device):
    x = leaf(device, 2, 3)
    v = plugrad.tensor(np.arange(6.0).reshape(2, 3), dtype=plugrad.float64, device=device,
                       requires_grad=True)
    assert gradgradcheck(lambda a: a.tanh(), (x,), (v,))
    assert gradgradcheck(lambda a: a.tanh(), (x,), fast_mode=True)


def test_gradgradcheck_of_linear_function(device):
    """A gradient that does not depend on the inputs has zero second derivative."""
    x = leaf(device, 3)
    assert gradgradcheck(lambda a: a * 3.0, (x,))
