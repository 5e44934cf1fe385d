"""Movement ops against NumPy, their errors, and their gradients."""
import numpy as np
import pytest
from numpy.testing import assert_array_equal

import plugrad
from plugrad.autograd import gradcheck
from plugrad.core.ops.movement import pad

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 4))


def T(a, device, requires_grad=False, dtype=None):
    return plugrad.tensor(np.asarray(a), dtype=dtype, device=device,
                          requires_grad=requires_grad)


def check(got, want, dtype=None):
    want = np.asarray(want)
    assert tuple(got.shape) == want.shape, (tuple(got.shape), want.shape)
    if dtype is not None:
        assert got.dtype is dtype
    assert_array_equal(np.asarray(got), want)


def check_all(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        check(g, w)


# ---------------------------------------------------------------------- reshape family
def test_reshape_view_infer(device):
    x = T(X, device)
    check(x.reshape(-1, 4), X.reshape(-1, 4))
    check(x.reshape((4, -1)), X.reshape(4, -1))
    check(x.view(3, 8), X.reshape(3, 8))
    check(x.view(-1), X.reshape(-1))
    check(T(2.5, device).reshape(1, 1), [[2.5]])
    check(T([7.0], device).reshape(()), np.array(7.0))
    check(T(np.zeros((0, 3)), device).reshape(-1, 3), np.zeros((0, 3)))
    check(x.view_as(T(np.zeros((6, 4)), device)), X.reshape(6, 4))


@pytest.mark.parametrize("op", ["reshape", "view"])
def test_reshape_errors_name_both_shapes(device, op):
    x = T(X, device)
    with pytest.raises(ValueError, match=rf"{op}: shape '\[5, -1\]' is invalid for input of "
                                         r"size 24 \(input shape \[2, 3, 4\]\)"):
        getattr(x, op)(5, -1)
    with pytest.raises(ValueError, match=rf"{op}: shape '\[5, 5\]' is invalid.*\[2, 3, 4\]"):
        getattr(x, op)(5, 5)
    with pytest.raises(ValueError, match=f"{op}: only one dimension can be inferred"):
        getattr(x, op)(-1, -1)
    with pytest.raises(ValueError, match=rf"{op}: cannot reshape tensor of 0 elements into "
                                         r"shape \[0, -1\] because .* ambiguous"):
        getattr(T(np.zeros((0, 3)), device), op)(0, -1)


def test_flatten_unflatten_squeeze_unsqueeze(device):
    x = T(X, device)
    check(x.flatten(), X.reshape(-1))
    check(x.flatten(1), X.reshape(2, 12))
    check(plugrad.flatten(x, 0, 1), X.reshape(6, 4))
    check(T(2.5, device).flatten(), [2.5])
    check(x.unflatten(2, (2, -1)), X.reshape(2, 3, 2, 2))
    y = T(X.reshape(1, 2, 1, 3, 4), device)
    check(y.squeeze(), X)
    check(y.squeeze(2), X.reshape(1, 2, 3, 4))
    check(y.squeeze((0, 2)), X)
    check(x.squeeze(1), X)  # not of size 1: unchanged
    check(x.unsqueeze(-1), X[..., None])
    check(x.unsqueeze(0), X[None])
    check(T(2.5, device).unsqueeze(0), [2.5])
    with pytest.raises(IndexError, match="unsqueeze"):
        x.unsqueeze(4)
    with pytest.raises(ValueError, match="flatten.*start_dim cannot come after end_dim"):
        x.flatten(2, 1)
    with pytest.raises(ValueError, match=r"unflatten.*\[2, 3\].*size 4"):
        x.unflatten(2, (2, 3))


# ---------------------------------------------------------------------- permutations
def test_permute_transpose_movedim(device):
    x = T(X, device)
    check(x.permute(2, 0, 1), X.transpose(2, 0, 1))
    check(x.permute((-1, 0, 1)), X.transpose(2, 0, 1))
    check(x.transpose(0, -1), X.swapaxes(0, 2))
    check(x.mT, X.swapaxes(-1, -2))
    check(T(X[0], device).t(), X[0].T)
    check(T(X[0], device).T, X[0].T)
    check(T(X[0, 0], device).t(), X[0, 0])
    check(plugrad.movedim(x, 0, -1), np.moveaxis(X, 0, -1))
    check(plugrad.movedim(x, (0, 1), (2, 0)), np.moveaxis(X, (0, 1), (2, 0)))
    check(T(2.5, device).transpose(0, -1), 2.5)


def test_permutation_errors(device):
    x = T(X, device)
    with pytest.raises(ValueError, match=r"permute: .*input.dim\(\) = 3 is not equal to "
                                         r"len\(dims\) = 2 \(input shape \[2, 3, 4\]"):
        x.permute(0, 1)
    with pytest.raises(ValueError, match=r"permute: repeated dim in \[0, 0, 1\]"):
        x.permute(0, 0, 1)
    with pytest.raises(ValueError, match="t\\(\\) expects a tensor with <= 2 dimensions, "
                                         "but self is 3D"):
        x.t()
    with pytest.raises(ValueError, match="movedim: Invalid source or destination dims"):
        plugrad.movedim(x, (0, 1), (0,))
    with pytest.raises(ValueError, match="movedim: repeated dim"):
        plugrad.movedim(x, (0, 0), (1, 2))


# ---------------------------------------------------------------------- expand, repeat
def test_expand_broadcast_repeat(device):
    v = T(X[0, :, 0], device)  # shape (3,)
    check(v.reshape(3, 1).expand(2, 3, 5), np.broadcast_to(X[0, :, :1], (2, 3, 5)))
    check(v.reshape(3, 1).expand(-1, 5), np.broadcast_to(X[0, :, :1], (3, 5)))
    check(v.expand_as(T(np.zeros((4, 3)), device)), np.broadcast_to(X[0, :, 0], (4, 3)))
    check(plugrad.broadcast_to(v, (2, 3)), np.broadcast_to(X[0, :, 0], (2, 3)))
    a, b = plugrad.broadcast_tensors(v, T(np.zeros((2, 1)), device))
    check(a, np.broadcast_to(X[0, :, 0], (2, 3)))
    check(b, np.zeros((2, 3)))
    m = T(X[0], device)
    check(m.repeat(2, 1, 3), np.tile(X[0], (2, 1, 3)))
    check(m.repeat(0, 2), np.tile(X[0], (0, 2)))
    check(m.repeat_interleave(2), np.repeat(X[0], 2))
    check(m.repeat_interleave(3, dim=1), np.repeat(X[0], 3, axis=1))
    check(m.repeat_interleave(T([1, 0, 2], device), dim=0), np.repeat(X[0], [1, 0, 2], 0))
    check(plugrad.repeat_interleave(m, [2, 1, 0, 1], dim=-1), np.repeat(X[0], [2, 1, 0, 1], 1))


def test_expand_repeat_errors(device):
    v = T(np.zeros(4), device)
    with pytest.raises(ValueError, match=r"expand: the expanded size of the tensor \(5\) must "
                                         r"match the existing size \(4\).*Target sizes: "
                                         r"\[2, 5\]. Tensor sizes: \[4\]"):
        v.expand(2, 5)
    with pytest.raises(ValueError, match=r"expand: the number of sizes provided \(0\)"):
        v.expand(())
    with pytest.raises(ValueError, match="broadcast_tensors: shapes \\[4\\] and \\[3\\]"):
        plugrad.broadcast_tensors(v, T(np.zeros(3), device))
    with pytest.raises(ValueError, match="repeat: Number of dimensions of repeat dims"):
        T(np.zeros((2, 2)), device).repeat(2)
    with pytest.raises(ValueError, match=r"repeat_interleave: repeats must have the same size "
                                         r"as input along dim 0 \(4\).*\[1, 2\]"):
        v.repeat_interleave([1, 2], dim=0)


# ---------------------------------------------------------------------- cat, stack
def test_cat_stack(device):
    a, b = X[0], X[1]
    ta, tb = T(a, device), T(b, device)
    check(plugrad.cat([ta, tb]), np.concatenate([a, b]))
    check(plugrad.cat((ta, tb), -1), np.concatenate([a, b], -1))
    check(plugrad.cat([ta, T(np.zeros(0), device)]), a)  # legacy 1-D empty joins anything
    check(plugrad.stack([ta, tb], 1), np.stack([a, b], 1))
    check(plugrad.stack([ta, tb], -1), np.stack([a, b], -1))
    check(plugrad.hstack([ta, tb]), np.hstack([a, b]))
    check(plugrad.vstack([T(a[0], device), T(b[0], device)]), np.vstack([a[0], b[0]]))


def test_cat_stack_promote_dtypes(device):
    f = T([[1.5, 2.5]], device, dtype=plugrad.float32)
    i = T([[1, 2]], device, dtype=plugrad.int64)
    check(plugrad.cat([i, f]), [[1.0, 2.0], [1.5, 2.5]], plugrad.float32)
    check(plugrad.stack([i, i.to(plugrad.int32)]), [[[1, 2]], [[1, 2]]], plugrad.int64)
    check(plugrad.cat([T([True], device), i[0]]), [1, 1, 2], plugrad.int64)


def test_cat_stack_errors_name_shapes(device):
    a = T(np.zeros((3, 4)), device)
    with pytest.raises(ValueError, match=r"cat: Sizes of tensors must match except in "
                                         r"dimension 0. Expected \[3, 4\] but got \[4, 3\] "
                                         r"for tensor number 1"):
        plugrad.cat([a, a.T])
    with pytest.raises(ValueError, match=r"Expected \[3, 4\] but got \[2, 3, 4\]"):
        plugrad.cat([a, T(X, device)])
    with pytest.raises(ValueError, match="cat\\(\\): expected a non-empty list"):
        plugrad.cat([])
    with pytest.raises(ValueError, match=r"stack expects each tensor to be equal size, but got "
                                         r"\[3, 4\] at entry 0 and \[4, 3\] at entry 1"):
        plugrad.stack([a, a.T])


# ---------------------------------------------------------------------- splitting
def test_split_chunk_tensor_split_unbind_narrow(device):
    x = T(X, device)
    check_all(x.split(2, 2), np.split(X, [2], 2))
    check_all(x.split([1, 3], 2), np.split(X, [1], 2))
    check_all(x.split(2, 1), [X[:, :2], X[:, 2:]])
    check_all(x.chunk(3, 2), [X[..., :2], X[..., 2:]])  # ceil(4 / 3) = 2 per chunk
    check_all(plugrad.arange(6.0).chunk(4), [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    check_all(x.tensor_split(3, 2), np.array_split(X, 3, 2))
    check_all(x.tensor_split([1, 3], 2), np.split(X, [1, 3], 2))
    check_all(x.tensor_split([3, 1, -1], 2), [X[..., :3], X[..., 3:1], X[..., 1:3], X[..., 3:]])
    check_all(x.unbind(1), [X[:, i] for i in range(3)])
    check(x.narrow(2, 1, 2), X[..., 1:3])
    check(x.narrow(-1, -2, 2), X[..., 2:])
    check_all(T(np.zeros((0, 2)), device).split(2, 0), [np.zeros((0, 2))])


def test_split_narrow_errors(device):
    x = T(X, device)
    with pytest.raises(ValueError, match=r"split_with_sizes expects split_sizes to sum exactly "
                                         r"to 4.*\[1, 2\]"):
        x.split([1, 2], 2)
    with pytest.raises(IndexError, match=r"narrow: start \(3\) \+ length \(2\) exceeds "
                                         r"dimension size \(4\)"):
        x.narrow(2, 3, 2)
    with pytest.raises(ValueError, match="tensor_split: number of sections must be larger"):
        x.tensor_split(0)


# ---------------------------------------------------------------------- flip, roll, pad
def test_flip_roll(device):
    x = T(X, device)
    check(x.flip(0, 2), np.flip(X, (0, 2)))
    check(x.flip((0, 2)), np.flip(X, (0, 2)))
    check(plugrad.flip(x, [-1]), np.flip(X, -1))
    check(plugrad.fliplr(T(X[0], device)), np.fliplr(X[0]))
    check(T(2.5, device).flip(0), 2.5)
    check(x.roll(1), np.roll(X, 1))
    check(x.roll(-1, 2), np.roll(X, -1, 2))
    check(x.roll((1, 2), (0, 2)), np.roll(X, (1, 2), (0, 2)))
    check(x.roll(7, 1), np.roll(X, 7, 1))


@pytest.mark.parametrize("widths", [(1, 2), (1, 1, 2, 0), (-1, 1), (0, 0, -1, -1),
                                    (1, -2, 1, 1, 0, 1)])
def test_pad_constant_and_crop(device, widths):
    pairs = [(0, 0)] * 3
    for i in range(len(widths) // 2):
        pairs[2 - i] = widths[2 * i:2 * i + 2]
    want = np.pad(X, [(max(b, 0), max(a, 0)) for b, a in pairs], constant_values=0.5)
    crop = tuple(slice(max(-b, 0), want.shape[d] - max(-a, 0)) for d, (b, a) in enumerate(pairs))
    check(pad(T(X, device), widths, value=0.5), want[crop])


def test_pad_errors(device):
    x = T(X, device)
    with pytest.raises(ValueError, match=r"pad: padding length 3 must be even"):
        pad(x, (1, 1, 1))
    with pytest.raises(NotImplementedError, match="pad: mode 'reflect' is not supported"):
        pad(x, (1, 1), mode="reflect")


def test_tril_triu(device):
    m, x = T(X[0], device), T(X, device)
    check(m.tril(), np.tril(X[0]))
    check(x.tril(1), np.tril(X, 1))
    check(x.triu(-1), np.triu(X, -1))
    check(plugrad.triu(m, 2), np.triu(X[0], 2))
    check(T([[1, 2], [3, 4]], device).tril(), [[1, 0], [3, 4]], plugrad.int64)
    with pytest.raises(ValueError, match=r"tril: input tensor must have at least 2 dimensions"
                                         r", got shape \[3\]"):
        T(X[0, 0, :3], device).tril()


def test_clone_contiguous(device):
    x = T(X, device)
    c = x.clone()
    check(c, X)
    c.add_(1.0)
    check(x, X)  # the clone does not share memory
    check(x.contiguous(), X)


# ---------------------------------------------------------------------- gradients
SMALL = RNG.standard_normal((2, 3))

GRAD_CASES = {
    "reshape": lambda x: x.reshape(3, -1) * T(np.arange(6.0).reshape(3, 2), x.device),
    "view": lambda x: x.view(-1).cumsum(0),
    "permute": lambda x: x.unsqueeze(0).permute(2, 0, 1).cumsum(0),
    "transpose": lambda x: x.transpose(0, 1).cumsum(1),
    "mT": lambda x: x.mT.cumsum(0),
    "movedim": lambda x: plugrad.movedim(x.unsqueeze(2), (0, 1), (2, 0)).cumsum(0),
    "squeeze": lambda x: x.unsqueeze(1).squeeze(1).cumsum(1),
    "flatten_unflatten": lambda x: x.flatten().unflatten(0, (3, 2)).cumsum(0),
    "expand": lambda x: x[:, :1].expand(2, 4).cumsum(1),
    "broadcast_to": lambda x: plugrad.broadcast_to(x, (2, 2, 3)).cumsum(0),
    "repeat": lambda x: x.repeat(2, 2).cumsum(1),
    "repeat_interleave": lambda x: x.repeat_interleave(2, dim=1).cumsum(1),
    "repeat_interleave_counts": lambda x: x.repeat_interleave([2, 0, 1], dim=1).cumsum(1),
    "cat": lambda x: plugrad.cat([x, x * 2.0, x[:, :1]], 1).cumsum(1),
    "stack": lambda x: plugrad.stack([x, x.exp()], -1).cumsum(-1),
    "split": lambda x: x.split([1, 2], 1)[1] * 3.0,
    "chunk": lambda x: x.chunk(2, 1)[0].exp(),
    "tensor_split": lambda x: x.tensor_split([1], 1)[1].exp(),
    "unbind": lambda x: x.unbind(0)[1].exp(),
    "narrow": lambda x: x.narrow(1, 1, 2).exp(),
    "flip": lambda x: x.flip(1).cumsum(1),
    "roll": lambda x: x.roll(1, 1).cumsum(1),
    "pad": lambda x: pad(x, (1, 2, -1, 0), value=3.0).cumsum(1),
    "tril": lambda x: x.tril().cumsum(0),
    "triu": lambda x: x.triu(1).cumsum(0),
    "clone": lambda x: x.clone().exp(),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradcheck(device, name):
    x = T(SMALL, device, requires_grad=True)
    assert gradcheck(GRAD_CASES[name], (x,))


def test_cat_gradient_to_each_input(device):
    a = T(SMALL, device, requires_grad=True)
    b = T(SMALL[:, :2], device, requires_grad=True)
    assert gradcheck(lambda p, q: plugrad.cat([p, q * q], 1).cumsum(1), (a, b))
