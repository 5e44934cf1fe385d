"""``backward``/``autograd.grad``: seeds, accumulation, graph freeing, hooks, higher order."""
import gc
import warnings
import weakref

import numpy as np
import pytest

import plugrad as torch


def leaf(values, device, dtype=None):
    return torch.tensor(values, device=device, dtype=dtype, requires_grad=True)


# ------------------------------------------------------------------ backward arguments
def test_backward_with_gradient_argument(device):
    x = leaf([1.0, 2.0], device)
    (x * x).backward(gradient=torch.tensor([1.0, 10.0], device=device))
    assert x.grad.tolist() == [2.0, 40.0]


def test_grad_accumulates_across_backward_calls(device):
    x = leaf([1.0, 2.0], device)
    y = x * x
    y.backward(torch.tensor([1.0, 10.0], device=device), retain_graph=True)
    y.backward(torch.tensor([1.0, 1.0], device=device))
    assert x.grad.tolist() == [4.0, 44.0]


def test_accumulated_grad_is_not_an_alias_of_the_seed(device):
    x = leaf([1.0, 2.0], device)
    seed = torch.ones(2, device=device)
    (x * 1).backward(seed)
    (x * 1).backward(seed)
    assert x.grad.tolist() == [2.0, 2.0] and seed.tolist() == [1.0, 1.0]


def test_second_backward_through_freed_graph_names_retain_graph(device):
    x = leaf([1.0, 2.0], device)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second "
                                           "time.*retain_graph=True"):
        y.backward()


def test_retain_graph_allows_a_second_backward(device):
    x = leaf([3.0], device)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [12.0]


def test_backward_on_non_scalar_without_gradient_explains(device):
    y = leaf([1.0, 2.0], device) * 2
    with pytest.raises(RuntimeError, match=r"grad can be implicitly created only for scalar "
                                           r"outputs.*shape \[2\]"):
        y.backward()


def test_wrong_shape_gradient_names_both_shapes(device):
    y = leaf([1.0, 2.0], device) * 2
    with pytest.raises(RuntimeError, match=r"grad_output\[0\] has a shape of \[3\] and "
                                           r"output\[0\] has a shape of \[2\]"):
        y.backward(torch.ones(3, device=device))


def test_backward_on_tensor_without_grad_raises(device):
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        torch.ones(2, device=device).sum().backward()


def test_backward_inputs_restricts_accumulation(device):
    x, w = leaf([1.0], device), leaf([2.0], device)
    (x * w).sum().backward(inputs=[x])
    assert x.grad.tolist() == [2.0] and w.grad is None


# ------------------------------------------------------------------ requires_grad
def test_requires_grad_(device):
    x = torch.ones(2, device=device)
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
    x.requires_grad_(False)
    assert not x.requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require "
                                           "gradients"):
        torch.ones(2, dtype=torch.int64, device=device).requires_grad_()
    y = leaf([1.0], device) * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        y.requires_grad_(False)


def test_ops_without_grad_inputs_record_nothing(device):
    y = torch.ones(2, device=device) * 3
    assert not y.requires_grad and y.grad_fn is None


# ------------------------------------------------------------------ hooks and retain_grad
def test_register_hook_replaces_grads_and_handle_removes(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    hy = y.register_hook(lambda g: g * 10)
    hx = x.register_hook(lambda g: g + 1)
    y.sum().backward(retain_graph=True)
    assert x.grad.tolist() == [21.0, 21.0]
    x.grad = None
    hy.remove()
    hx.remove()
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_hook_returning_none_observes(device):
    seen = []
    x = leaf([1.0, 2.0], device)
    x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [3.0, 3.0]


def test_register_hook_on_tensor_without_grad_raises(device):
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        torch.ones(1, device=device).register_hook(lambda g: g)


def test_retain_grad(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    assert y.retains_grad and y.grad.tolist() == [4.0, 8.0]


def test_grad_of_non_leaf_warns_and_is_none(device):
    y = leaf([1.0], device) * 2
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert y.grad is None


def test_grad_of_leaf_does_not_warn(device):
    x = leaf([1.0], device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is None


# ------------------------------------------------------------------ autograd.grad
def test_autograd_grad_returns_and_leaves_grad_alone(device):
    x = leaf([1.0, 2.0], device)
    (g,) = torch.autograd.grad((x ** 3).sum(), x)
    assert g.tolist() == [3.0, 12.0] and x.grad is None and not g.requires_grad


def test_autograd_grad_outputs(device):
    x = leaf([1.0, 2.0], device)
    (g,) = torch.autograd.grad(x * 3, x, grad_outputs=torch.tensor([1.0, 2.0], device=device))
    assert g.tolist() == [3.0, 6.0]


def test_autograd_grad_several_outputs_and_inputs(device):
    x, y = leaf([2.0], device), leaf([3.0], device)
    gx, gy = torch.autograd.grad([x * y, x + y], [x, y])
    assert (gx.tolist(), gy.tolist()) == ([4.0], [3.0])


def test_autograd_grad_allow_unused(device):
    x, unused = leaf([1.0, 2.0], device), leaf([1.0], device)
    gx, gu = torch.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0] and gu is None
    with pytest.raises(RuntimeError, match=r"input 1\) appears to not have been used in the "
                                           r"graph.*allow_unused=True"):
        torch.autograd.grad((x * 2).sum(), [x, unused])


def test_second_derivative_with_create_graph(device):
    x = leaf([1.0, 2.0], device)
    (g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad and g.tolist() == [3.0, 12.0]
    (g2,) = torch.autograd.grad(g.sum(), x)
    assert g2.tolist() == [6.0, 12.0]  # d2/dx2 x^3 = 6x


def test_backward_create_graph_then_backward_of_grad(device):
    x = leaf([2.0], device)
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.tolist() == [12.0]
    x.grad = None
    g.sum().backward()
    assert x.grad.tolist() == [12.0]


def test_third_derivative(device):
    x = leaf([2.0], device)
    (g1,) = torch.autograd.grad((x ** 4).sum(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = torch.autograd.grad(g2.sum(), x)
    assert g3.tolist() == [48.0]  # 24 x


# ------------------------------------------------------------------ graph structure
def test_deep_chain_does_not_recurse():
    x = leaf(1.0, "cpu")
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0


def test_broadcast_gradient_is_reduced_to_input_shape(device):
    x = torch.ones(3, 1, device=device, requires_grad=True)
    b = torch.ones(4, device=device, requires_grad=True)
    s = torch.ones(1, 1, 4, device=device, requires_grad=True)
    (x + b + s).sum().backward()
    assert x.grad.tolist() == [[4.0]] * 3
    assert b.grad.tolist() == [3.0] * 4
    assert s.grad.tolist() == [[[3.0] * 4]]


def test_tensor_used_twice_sums_gradients(device):
    x = leaf(3.0, device)
    (x * x + x).backward()
    assert x.grad.item() == 7.0


def test_diamond_graph(device):
    x = leaf([2.0], device)
    a = x * 3
    b = x * x
    (a * b).sum().backward()  # d/dx 3x^3 = 9x^2
    assert x.grad.tolist() == [36.0]


def test_saved_intermediate_is_freed_after_backward(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    z = y * y  # saves y
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is not None  # kept alive by the graph
    z.sum().backward()
    gc.collect()
    assert ref() is None


def test_saved_intermediate_is_kept_with_retain_graph(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    z = y * y
    ref = weakref.ref(y)
    del y
    z.sum().backward(retain_graph=True)
    gc.collect()
    assert ref() is not None


def test_float16_leaf_gradient(device):
    x = leaf([1.0, 2.0], device, dtype=torch.float16)
    (x * x).sum().backward()
    assert x.grad.dtype == torch.float16 and x.grad.tolist() == [2.0, 4.0]


def test_mixed_dtype_gradient_matches_each_leaf(device):
    h = leaf([1.0, 2.0], device, dtype=torch.float16)
    d = leaf([3.0, 4.0], device, dtype=torch.float64)
    (h * d).sum().backward()
    assert h.grad.dtype == torch.float16 and d.grad.dtype == torch.float64
    np.testing.assert_allclose(h.grad.tolist(), [3.0, 4.0])
    np.testing.assert_allclose(d.grad.tolist(), [1.0, 2.0])


def test_detach_cuts_the_graph(device):
    x = leaf([2.0], device)
    (x * x.detach()).sum().backward()
    assert x.grad.tolist() == [2.0]


def test_no_grad_result_does_not_require_grad(device):
    x = leaf([2.0], device)
    with torch.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None


def test_autograd_backward_several_roots(device):
    x = leaf([1.0, 2.0], device)
    torch.autograd.backward([(x * 2).sum(), x * 3], [None, torch.ones(2, device=device)])
    assert x.grad.tolist() == [5.0, 5.0]


def test_leaf_that_is_gone_used_twice():
    """A leaf only the graph refers to (made inline) and used by two ops: backward adds its
    two gradients with the table it was made on (the accumulator's weak reference is dead),
    as PyTorch runs such a graph without complaint."""
    def loss():
        x = torch.randn(3, requires_grad=True)
        return x.sum() + (x * 2).sum()
    loss().backward()
    loss().backward(create_graph=True)
