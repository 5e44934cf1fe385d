"""autograd.Function: what ctx saved for backward goes once backward has run (as PyTorch
frees saved tensors), unless the graph is retained."""
import gc
import weakref

import plugrad


class _Square(plugrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * x
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, _ = ctx.saved_tensors
        return 2 * x * g


def test_saved_tensors_are_released_after_backward():
    x = plugrad.ones(3, requires_grad=True)
    y = _Square.apply(x * 1)
    ctx = y.grad_fn.ctx
    saved = weakref.ref(y.grad_fn.saved[1])
    y.sum().backward()
    assert ctx.saved_tensors == () and x.grad.tolist() == [2.0, 2.0, 2.0]
    del y
    gc.collect()
    assert saved() is None


def test_retained_graph_backward_twice():
    x = plugrad.ones(2, requires_grad=True)
    y = _Square.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0]
