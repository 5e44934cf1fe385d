"""``plugrad.autograd.Function``: user-written forward and backward."""
import pytest

import plugrad as torch
from plugrad.autograd import Function


class ScaledMul(Function):
    """a * b * k for a Python number k; records which inputs need a gradient."""

    @staticmethod
    def forward(ctx, a, b, k):
        ctx.save_for_backward(a, b)
        ctx.k = k
        ctx.seen_needs = ctx.needs_input_grad
        return a * b * k

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = g * b * ctx.k if ctx.needs_input_grad[0] else None
        gb = g * a * ctx.k if ctx.needs_input_grad[1] else None
        return ga, gb, None


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


class Split(Function):
    """Two differentiable outputs and one non-differentiable integer output."""

    @staticmethod
    def forward(ctx, x):
        idx = x.argmax()
        ctx.mark_non_differentiable(idx)
        return x * 2, x * 3, idx

    @staticmethod
    def backward(ctx, g1, g2, g_idx):
        return g1 * 2 + g2 * 3


def test_apply_forward_and_backward(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = torch.tensor([3.0, 4.0], device=device)
    y = ScaledMul.apply(a, b, 2.0)
    assert y.tolist() == [6.0, 16.0] and y.requires_grad
    assert y.grad_fn.name() == "ScaledMulBackward"
    y.sum().backward()
    assert a.grad.tolist() == [6.0, 8.0] and b.grad is None


def test_needs_input_grad(device):
    a = torch.tensor([1.0], device=device, requires_grad=True)
    b = torch.tensor([1.0], device=device)
    ctx = ScaledMul.apply(a, b, 1.0).grad_fn.ctx
    assert ctx.seen_needs == (True, False, False)


def test_forward_runs_without_grad_mode(device):
    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.grad_mode = torch.is_grad_enabled()
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = Probe.apply(torch.ones(1, device=device, requires_grad=True))
    assert y.grad_fn.ctx.grad_mode is False


def test_multiple_outputs_and_mark_non_differentiable(device):
    x = torch.tensor([1.0, 5.0], device=device, requires_grad=True)
    a, b, idx = Split.apply(x)
    assert not idx.requires_grad and idx.item() == 1
    (a.sum() + b.sum()).backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_unused_output_gets_materialized_zero_grad(device):
    x = torch.tensor([1.0, 5.0], device=device, requires_grad=True)
    a, _, _ = Split.apply(x)
    a.sum().backward()  # g2 arrives as zeros, not None
    assert x.grad.tolist() == [2.0, 2.0]


def test_output_that_is_an_input_is_a_new_tensor(device):
    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = torch.tensor([1.0], device=device, requires_grad=True)
    y = Ident.apply(x)
    assert y is not x and x.is_leaf and not y.is_leaf
    (y * 1).sum().backward()
    assert x.grad.tolist() == [5.0]


def test_second_order_through_function(device):
    x = torch.tensor([2.0], device=device, requires_grad=True)
    (g,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g.sum(), x)
    assert g.tolist() == [12.0] and g2.tolist() == [12.0]


def test_no_grad_apply_records_nothing(device):
    x = torch.tensor([2.0], device=device, requires_grad=True)
    with torch.no_grad():
        y = Cube.apply(x)
    assert not y.requires_grad and y.grad_fn is None


def test_saved_tensor_modified_in_place_raises(device):
    x = torch.tensor([2.0], device=device, requires_grad=True)
    xx = x * 1
    y = Cube.apply(xx)
    xx.add_(1)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead. It "
                                           "was saved by CubeBackward"):
        y.sum().backward()


def test_wrong_number_of_gradients_raises(device):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g

    x = torch.tensor([2.0], device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"function BadBackward returned an incorrect number "
                                           r"of gradients \(expected 2, got 1\)"):
        Bad.apply(x, x).sum().backward()


def test_gradient_of_wrong_shape_raises_and_broadcast_one_is_reduced(device):
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x, shape):
            ctx.shape = shape
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return torch.ones(ctx.shape, device=g.device), None

    x = torch.ones(2, device=device, requires_grad=True)
    Wrong.apply(x, (3, 2)).sum().backward()  # broadcastable: summed back to [2]
    assert x.grad.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match=r"WrongBackward returned an invalid gradient at "
                                           r"index 0 - got \[3\] but expected shape compatible "
                                           r"with \[2\]"):
        Wrong.apply(x, (3,)).sum().backward()


def test_gradient_for_non_tensor_input_raises(device):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = torch.ones(2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="gradient different than None at position 1"):
        Bad.apply(x, 2.0).sum().backward()


def test_save_for_backward_rejects_non_tensors(device):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 1

    with pytest.raises(TypeError, match="save_for_backward can only save tensors"):
        Bad.apply(torch.ones(1, device=device, requires_grad=True))


def test_setup_context_style(device):
    class Square(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = torch.tensor([3.0], device=device, requires_grad=True)
    y = Square.apply(x)
    y.sum().backward()
    assert y.tolist() == [9.0] and x.grad.tolist() == [6.0]


def test_gradient_dtype_follows_input(device):
    class Half(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g.to(torch.float64)

    x = torch.ones(2, dtype=torch.float16, device=device, requires_grad=True)
    Half.apply(x).sum().backward()
    assert x.grad.dtype == torch.float16
