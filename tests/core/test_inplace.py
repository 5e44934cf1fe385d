"""In-place ops: values, aliasing, version counters, dtype and shape rules, gradients."""
import numpy as np
import pytest

import plugrad as torch


def test_augmented_operators_and_methods(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device)
    x += 1
    x -= torch.tensor([1.0, 1.0, 1.0], device=device)
    x *= 2
    x /= 4
    assert x.tolist() == [0.5, 1.0, 1.5]
    x.add_(1, alpha=2).mul_(2).sub_(1).div_(2)
    assert x.tolist() == [2.0, 2.5, 3.0]
    assert x._version == 8


def test_inplace_returns_self(device):
    x = torch.ones(2, device=device)
    assert x.add_(1) is x and x.zero_() is x and x.fill_(3) is x
    assert x.copy_(torch.zeros(2, device=device)) is x and x.clamp_(0, 1) is x


def test_integer_floor_divide_and_remainder(device):
    x = torch.tensor([5, 7], device=device)
    x //= 2
    x %= 2
    assert x.tolist() == [0, 1] and x.dtype == torch.int64


@pytest.mark.parametrize("op", [lambda x: x.__iadd__(1.5), lambda x: x.__itruediv__(2),
                                lambda x: x.add_(torch.tensor([1.5, 1.0], device=x.device)),
                                lambda x: x.mul_(0.5)],
                         ids=["+=float", "/=", "add_(float tensor)", "mul_(float)"])
def test_int_inplace_with_float_result_raises(device, op):
    x = torch.tensor([1, 2], device=device)
    with pytest.raises(TypeError, match="result type float32 can't be cast to the desired "
                                        "output type int64"):
        op(x)
    assert x.tolist() == [1, 2] and x._version == 0


def test_float_inplace_with_int_operand_keeps_float(device):
    x = torch.tensor([1.0, 2.0], device=device)
    x += torch.tensor([1, 2], device=device)
    assert x.tolist() == [2.0, 4.0] and x.dtype == torch.float32


def test_inplace_broadcast_to_bigger_shape_raises(device):
    x = torch.zeros(3, device=device)
    with pytest.raises(ValueError, match=r"output with shape \[3\] doesn't match the broadcast "
                                         r"shape \[2, 3\]"):
        x += torch.ones(2, 3, device=device)
    x += torch.ones(1, device=device)  # broadcasting to x's own shape is fine
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_zero_fill(device):
    x = torch.ones(3, device=device)
    assert x.zero_().tolist() == [0.0, 0.0, 0.0]
    assert x.fill_(2.5).tolist() == [2.5, 2.5, 2.5]
    assert x.fill_(torch.tensor(4.0, device=device)).tolist() == [4.0] * 3
    i = torch.ones(2, dtype=torch.int64, device=device).fill_(7)
    assert i.tolist() == [7, 7] and i.dtype == torch.int64
    with pytest.raises(ValueError, match="fill_ only supports 0-dimension value tensor but "
                                         "got tensor with 1 dimensions"):
        x.fill_(torch.ones(1, device=device))


def test_copy_broadcasts_and_casts(device):
    x = torch.zeros(2, 3, device=device)
    x.copy_(torch.tensor([1, 2, 3], device=device))
    assert x.tolist() == [[1.0, 2.0, 3.0]] * 2 and x.dtype == torch.float32


def test_copy_from_another_device(device):
    other = "ref" if device == "cpu" else "cpu"
    x = torch.zeros(3, device=device)
    x.copy_(torch.tensor([1.0, 2.0, 3.0], device=other))
    assert x.tolist() == [1.0, 2.0, 3.0] and x.device.type == device


def test_copy_shape_mismatch_raises(device):
    with pytest.raises(ValueError, match=r"copy_: src of shape \[4\] cannot be broadcast to "
                                         r"the destination's shape \[3\]"):
        torch.zeros(3, device=device).copy_(torch.ones(4, device=device))


def test_clamp_inplace(device):
    assert torch.tensor([-1.0, 0.5, 3.0], device=device).clamp_(0, 1).tolist() == [0, 0.5, 1]
    assert torch.tensor([-1.0, 0.5, 3.0], device=device).clamp_(min=0).tolist() == [0, 0.5, 3]
    assert torch.tensor([-1.0, 0.5, 3.0], device=device).clamp_(max=0).tolist() == [-1, 0, 0]


def test_shape_changing_inplace_ops(device):
    x = torch.zeros(2, 3, device=device)
    alias = x.detach()
    x.t_()
    assert tuple(x.shape) == (3, 2) and tuple(alias.shape) == (2, 3)
    x.unsqueeze_(0)
    assert tuple(x.shape) == (1, 3, 2)
    x.squeeze_()
    x.transpose_(0, 1)
    assert tuple(x.shape) == (2, 3)


def test_shape_changing_inplace_gradient(device):
    a = torch.ones(2, 3, device=device, requires_grad=True)
    b = a * 2
    b.t_()
    (b * torch.tensor([0.0, 1.0], device=device)).sum().backward()
    assert a.grad.tolist() == [[0.0] * 3, [2.0] * 3]


@pytest.mark.parametrize("alias", ["data", "detach"])
def test_aliases_see_inplace_writes_outside_grad_mode(device, alias):
    x = torch.zeros(3, device=device)
    view = x.data if alias == "data" else x.detach()
    x.add_(1)
    x.mul_(3)
    x[0] = 5.0
    assert view.tolist() == [5.0, 3.0, 3.0]
    view.zero_()  # and the other way round
    assert x.tolist() == [0.0, 0.0, 0.0]


def test_numpy_view_sees_inplace_writes_on_cpu():
    x = torch.zeros(3)
    n = x.numpy()
    x.add_(1)
    x.copy_(torch.tensor([4.0, 5.0, 6.0]))
    assert n.tolist() == [4.0, 5.0, 6.0]


def test_leaf_parameter_update_under_no_grad(device):
    w = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    alias = w.detach()
    with torch.no_grad():
        w -= 1
        w.mul_(2)
        w.zero_()
        w.add_(3)
    assert w.tolist() == [3.0, 3.0] and alias.tolist() == [3.0, 3.0]
    assert w.is_leaf and w.requires_grad and w.grad_fn is None


@pytest.mark.parametrize("op", [lambda t: t.add_(1), lambda t: t.__iadd__(1),
                                lambda t: t.zero_(), lambda t: t.fill_(1.0),
                                lambda t: t.copy_(torch.ones(2, device=t.device)),
                                lambda t: t.clamp_(0, 1)],
                         ids=["add_", "+=", "zero_", "fill_", "copy_", "clamp_"])
def test_inplace_on_leaf_requiring_grad_raises(device, op):
    w = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation"):
        op(w)
    assert w.tolist() == [1.0, 2.0]


def test_modifying_a_saved_tensor_raises_naming_versions(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = a * 2
    c = b * b  # saves b at version 0
    b.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[float32 tensor "
                                           r"of shape \[2\]\] is at version 1; expected version "
                                           r"0 instead"):
        c.sum().backward()


def test_modifying_a_saved_tensor_under_no_grad_still_raises(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = a * 1
    c = b * b
    with torch.no_grad():
        b.mul_(2)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        c.sum().backward()


def test_modifying_an_unsaved_tensor_is_fine(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = a + 1  # add saves nothing
    c = b + 1
    b.mul_(3)
    (c.sum() + b.sum()).backward()
    assert a.grad.tolist() == [4.0, 4.0]


def test_inplace_in_graph_gradient(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = a * 1
    b *= a
    b += 1
    b.sum().backward()
    assert a.grad.tolist() == [2.0, 4.0]
    assert not b.is_leaf


def test_inplace_with_grad_operand_on_plain_tensor(device):
    # x does not require grad but is saved by mul for y's gradient: its old value is kept
    x = torch.full((2,), 3.0, device=device)
    y = torch.ones(2, device=device, requires_grad=True)
    x *= y
    assert x.requires_grad
    x.sum().backward()
    assert y.grad.tolist() == [3.0, 3.0]


def test_clamp_inplace_gradient(device):
    a = torch.tensor([-1.0, 0.5, 2.0], device=device, requires_grad=True)
    b = a * 1
    b.clamp_(0, 1)
    b.sum().backward()
    assert a.grad.tolist() == [0.0, 1.0, 0.0]


def test_copy_gradient_flows_to_source_with_cast_and_broadcast(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = torch.zeros(2, 2, dtype=torch.float16, device=device)
    b.copy_(a * 3)
    assert b.dtype == torch.float16 and b.requires_grad
    b.sum().backward()
    assert a.grad.tolist() == [6.0, 6.0] and a.grad.dtype == torch.float32


def test_overwriting_a_nonleaf_gives_zero_gradient_to_its_past(device):
    for overwrite in (lambda t: t.zero_(), lambda t: t.fill_(2.0),
                      lambda t: t.copy_(torch.zeros(2, device=device))):
        a = torch.ones(2, device=device, requires_grad=True)
        b = a * 5
        overwrite(b)
        assert b.requires_grad  # as PyTorch: ZeroBackward0 / FillBackward / CopyBackwards
        (b * a).sum().backward()
        assert a.grad.tolist() == b.detach().tolist()


def test_fill_with_tensor_requiring_grad(device):
    v = torch.tensor(2.0, device=device, requires_grad=True)
    z = torch.zeros(3, device=device)
    z.fill_(v)
    (z * torch.arange(3.0, device=device)).sum().backward()
    assert z.tolist() == [2.0] * 3 and v.grad.item() == 3.0


def test_bool_inplace_or(device):
    x = torch.tensor([True, False], device=device)
    x |= torch.tensor([False, True], device=device)
    assert x.tolist() == [True, True]


def test_bool_inplace_and_int_result_raises(device):
    x = torch.tensor([True, False], device=device)
    with pytest.raises(TypeError, match="can't be cast to the desired output type bool"):
        x += 1
    np.testing.assert_array_equal(x.tolist(), [True, False])


def test_data_inplace_does_not_bump_version(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = a * a
    a.data.add_(1)
    b.sum().backward()  # PyTorch: no error (uses the new values silently)
    assert a.grad.tolist() == [4.0, 6.0]


def test_inplace_op_keeping_its_output_gradient(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = a * 2
    b.exp_()  # exp's backward uses its own output, i.e. b
    b.sum().backward()
    np.testing.assert_allclose(a.grad.tolist(), (2 * np.exp([2.0, 4.0])).tolist(), rtol=1e-6)


@pytest.mark.parametrize("modify", ["no_grad add_", "tanh_"])
def test_modifying_a_kept_inplace_output_raises(device, modify):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = a * 2
    b.sigmoid_()  # version 1, kept by SigmoidBackward0
    if modify == "tanh_":
        b.tanh_()
    else:
        with torch.no_grad():
            b.add_(1)
    with pytest.raises(RuntimeError, match="output of SigmoidBackward0 is at version 2; "
                                           "expected version 1"):
        b.sum().backward()
