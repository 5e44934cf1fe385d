"""Autograd misuse is caught with PyTorch-grade messages, on every backend."""
import re
import warnings

import pytest

import plugrad as pg


def leaf(values, device):
    return pg.tensor(values, device=device, requires_grad=True)


# ---------------------------------------------------------------------- version counters
VERSION_MSG = (r"one of the variables needed for gradient computation has been modified by an "
               r"inplace operation: \[float32 tensor of shape \[{shape}\]\] is at version "
               r"{now}; expected version {then} instead\. It was saved by {node}\.")


def test_inplace_on_saved_input_raises_at_backward(device):
    a = leaf([1.0, 2.0, 3.0], device)
    b = a * 2
    c = b.sin()  # saves b
    b.add_(1)
    with pytest.raises(RuntimeError, match=VERSION_MSG.format(shape="3", now=1, then=0,
                                                              node="SinBackward0")):
        c.sum().backward()


def test_inplace_through_a_view_of_saved_tensor_raises(device):
    a = leaf([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device)
    b = a * 2
    c = b * b  # saves b twice
    b[0].mul_(2)  # b[0] is a view of b: same version counter
    with pytest.raises(RuntimeError, match=VERSION_MSG.format(shape="3, 2", now=1, then=0,
                                                              node="MulBackward0")):
        c.sum().backward()


def test_inplace_through_detach_alias_raises(device):
    a = leaf([1.0, 2.0, 3.0], device)
    b = a.cos()  # saves the leaf a
    a.detach().zero_()  # detach() shares a's version counter
    with pytest.raises(RuntimeError, match=VERSION_MSG.format(shape="3", now=1, then=0,
                                                              node="CosBackward0")):
        b.sum().backward()


def test_inplace_on_saved_output_raises(device):
    a = leaf([0.5, 1.0], device)
    y = a.exp()  # exp keeps its output
    y.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    msg = str(info.value)
    assert "output of ExpBackward0 is at version 1; expected version 0" in msg
    assert "[float32 tensor of shape [2]]" in msg
    assert "set_detect_anomaly" in msg  # the hint


def test_data_alias_does_not_bump_the_version(device):
    a = leaf([1.0, 2.0], device)
    b = a.cos()
    a.data.mul_(2)  # as in PyTorch: .data is outside autograd's bookkeeping
    b.sum().backward()
    assert a.grad is not None


def test_unmodified_saved_tensor_backward_works(device):
    a = leaf([1.0, 2.0], device)
    b = a * 2
    c = b.sin()
    d = b + 1  # out of place: no version bump
    (c.sum() + d.sum()).backward()
    assert a.grad is not None


# ---------------------------------------------------------------------- in-place on leaves
def test_inplace_on_leaf_requiring_grad_is_refused(device):
    a = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match=r"add_: a leaf Variable that requires grad is being "
                                           r"used in an in-place operation\."):
        a.add_(1)
    assert a.tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        a[0] = 5.0
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        a.zero_()


@pytest.mark.parametrize("make_view", [
    lambda a: a[0:1],
    lambda a: a[1],
    lambda a: a.view(4),
    lambda a: a.t(),
    lambda a: a.reshape(2, 2)[0],
    lambda a: a.narrow(1, 0, 1),
])
def test_inplace_on_view_of_leaf_is_refused(device, make_view):
    a = leaf([[1.0, 2.0], [3.0, 4.0]], device)
    v = make_view(a)
    with pytest.raises(RuntimeError, match=r"a view of a leaf Variable that requires grad is "
                                           r"being used in an in-place operation"):
        v.mul_(2)
    assert a.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_inplace_on_non_view_of_leaf_is_allowed(device):
    a = leaf([[1.0, 2.0], [3.0, 4.0]], device)
    b = (a * 1)[0]  # a view, but of a non-leaf
    b.mul_(3)
    b.sum().backward()
    assert a.grad.tolist() == [[3.0, 3.0], [0.0, 0.0]]


def test_inplace_on_leaf_allowed_under_no_grad(device):
    a = leaf([1.0, 2.0], device)
    with pg.no_grad():
        a.add_(1)
        a[0:1].mul_(10)
    assert a.requires_grad and a.is_leaf
    if device == "cpu":  # the cpu backend's slices are views; ref copies (by contract)
        assert a.tolist() == [20.0, 3.0]
    else:
        assert a.tolist()[1] == 3.0


# ---------------------------------------------------------------------- freed graph
def test_backward_twice_names_retain_graph(device):
    a = leaf([1.0, 2.0], device)
    y = (a * a).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"Trying to backward through the graph a second "
                                           r"time.*Specify retain_graph=True"):
        y.backward()


def test_retain_graph_allows_second_backward(device):
    a = leaf([1.0, 2.0], device)
    y = (a * a).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert a.grad.tolist() == [4.0, 8.0]


def test_autograd_grad_twice_names_retain_graph(device):
    a = leaf([1.0, 2.0], device)
    y = (a.exp() * a).sum()
    pg.autograd.grad(y, a)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        pg.autograd.grad(y, a)


# ---------------------------------------------------------------------- gradient= shape
def test_gradient_with_wrong_shape_names_both_shapes(device):
    a = leaf([1.0, 2.0, 3.0], device)
    y = a * 2
    with pytest.raises(RuntimeError, match=re.escape(
            "Mismatch in shape: grad_output[0] has a shape of [4] and output[0] has a shape "
            "of [3].")):
        y.backward(pg.ones(4, device=device))


def test_gradient_with_right_shape_works(device):
    a = leaf([1.0, 2.0, 3.0], device)
    (a * 2).backward(pg.tensor([1.0, 0.0, 2.0], device=device))
    assert a.grad.tolist() == [2.0, 0.0, 4.0]


# ---------------------------------------------------------------------- .grad of non-leaves
def test_grad_of_non_leaf_warns_and_is_none(device):
    a = leaf([1.0, 2.0], device)
    b = a * 2
    b.sum().backward()
    with pytest.warns(UserWarning, match=r"\.grad attribute of a Tensor that is not a leaf "
                                         r"Tensor is being accessed.*retain_grad\(\)"):
        assert b.grad is None


def test_retain_grad_keeps_non_leaf_grad_silently(device):
    a = leaf([1.0, 2.0], device)
    b = a * 2
    b.retain_grad()
    (b * b).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert b.grad.tolist() == [4.0, 8.0]
        assert a.grad.tolist() == [8.0, 16.0]  # leaves never warn


# ---------------------------------------------------------------------- overlapping writes
@pytest.mark.parametrize("case, expected", [
    ("shift_right", [0.0, 0.0, 1.0, 2.0, 3.0]),
    ("shift_left", [1.0, 2.0, 3.0, 4.0, 4.0]),
    ("reverse", [4.0, 3.0, 2.0, 1.0, 0.0]),
    ("iadd", [0.0, 1.0, 3.0, 5.0, 7.0]),
])
@pytest.mark.parametrize("graph", [False, True])
def test_overlapping_inplace_assignment_copies_first(device, case, expected, graph):
    base = pg.arange(5.0, device=device, requires_grad=graph)
    t = base * 1 if graph else base.clone()
    if case == "shift_right":
        t[1:] = t[:-1]
    elif case == "shift_left":
        t[:-1] = t[1:]
    elif case == "reverse":
        t[:] = t.flip(0)
    else:
        t[1:] += t[:-1]
    assert t.tolist() == expected
    if graph:
        t.sum().backward()
        assert base.grad is not None


def test_overlapping_assignment_2d(device):
    t = pg.arange(6.0, device=device).reshape(2, 3).clone()
    t[:, 1:] = t[:, :-1]
    assert t.tolist() == [[0.0, 0.0, 1.0], [3.0, 3.0, 4.0]]
    u = pg.arange(6.0, device=device).reshape(2, 3).clone()
    u[1:, :] = u[:1, :]
    u[:, 0] = u[:, 2]
    assert u.tolist() == [[2.0, 1.0, 2.0], [2.0, 1.0, 2.0]]
