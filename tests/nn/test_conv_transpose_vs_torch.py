"""Transposed convolutions against PyTorch: values, gradients, modules, errors."""
import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F

from .helpers import copy_params_to_torch, host
from .spatial_helpers import compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(3)

CASES_2D = [
    ((2, 4, 5, 4), (4, 3, 3, 3), {}),
    ((2, 4, 5, 4), (4, 3, 3, 2), dict(stride=2, padding=1, output_padding=1)),
    ((1, 4, 3, 3), (4, 2, 2, 3), dict(stride=(2, 3), padding=(0, 1), groups=2)),
    ((1, 2, 3, 4), (2, 2, 3, 3), dict(dilation=2, output_padding=1)),  # output padding >= stride
    ((4, 3, 3), (4, 2, 2, 2), dict(stride=3, output_padding=2)),  # unbatched
]


@pytest.mark.parametrize("xs,ws,kw", CASES_2D)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose2d(device, xs, ws, kw, bias):
    groups = kw.get("groups", 1)
    arrays = [RNG.standard_normal(xs), RNG.standard_normal(ws)]
    if bias:
        arrays.append(RNG.standard_normal(ws[1] * groups))
    out, _ = compare(torch, lambda *t: F.conv_transpose2d(*t, **kw),
                     lambda *t: TF.conv_transpose2d(*t, **kw), arrays, device)
    if len(xs) == 4:
        assert type(out.grad_fn).__name__ == "ConvolutionBackward0"


@pytest.mark.parametrize("xs,ws,kw", [
    ((2, 3, 7), (3, 2, 3), dict(stride=2, padding=1, output_padding=1)),
    ((1, 4, 5), (4, 1, 2), dict(groups=2, dilation=3)),
    ((3, 6), (3, 2, 4), {}),  # unbatched
])
def test_conv_transpose1d(device, xs, ws, kw):
    arrays = [RNG.standard_normal(xs), RNG.standard_normal(ws),
              RNG.standard_normal(ws[1] * kw.get("groups", 1))]
    compare(torch, lambda *t: F.conv_transpose1d(*t, **kw),
            lambda *t: TF.conv_transpose1d(*t, **kw), arrays, device)


def test_conv_transpose2d_float32_and_double_backward(device):
    x, w = RNG.standard_normal((1, 2, 3, 3)), RNG.standard_normal((2, 3, 2, 2))
    compare(torch, lambda a, b: F.conv_transpose2d(a, b, stride=2),
            lambda a, b: TF.conv_transpose2d(a, b, stride=2), [x, w], device, dtype="float32",
            atol=1e-5, rtol=1e-5)
    xs = plugrad.tensor(x, requires_grad=True, device=device)
    ws = plugrad.tensor(w, requires_grad=True, device=device)
    assert plugrad.autograd.gradgradcheck(
        lambda a, b: F.conv_transpose2d(a, b, None, 2, 1, 1), (xs, ws))


@pytest.mark.parametrize("kw", [dict(kernel_size=3), dict(kernel_size=(2, 3), stride=2,
                                                           padding=1, output_padding=1),
                                dict(kernel_size=3, groups=2, bias=False, dilation=2)])
def test_conv_transpose2d_module(kw):
    ours, theirs = nn.ConvTranspose2d(4, 6, **kw).double(), \
        torch.nn.ConvTranspose2d(4, 6, **kw).double()
    assert tuple(ours.weight.shape) == tuple(theirs.weight.shape)
    assert repr(ours) == repr(theirs)
    copy_params_to_torch(ours, theirs)
    x = RNG.standard_normal((2, 4, 5, 5))
    np.testing.assert_allclose(host(ours(plugrad.tensor(x))),
                               theirs(torch.tensor(x)).detach().numpy(), atol=1e-10)
    # PyTorch's state dict loads as it is
    ours2 = nn.ConvTranspose2d(4, 6, **kw).double()
    ours2.load_state_dict({k: plugrad.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(host(ours2(plugrad.tensor(x))),
                               theirs(torch.tensor(x)).detach().numpy(), atol=1e-10)


def test_conv_transpose_init_bounds():
    """Kaiming-uniform(a=sqrt(5)) over fan_in = weight.size(1) * kernel, as PyTorch."""
    m = nn.ConvTranspose2d(8, 4, 3)
    bound = 1 / np.sqrt(4 * 9)
    w, b = host(m.weight), host(m.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(b).max() <= bound


@pytest.mark.parametrize("size", [(9, 9), (10, 10), (2, 4, 10, 9), [9, 10]])
def test_output_size(size):
    ours = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1).double()
    theirs = torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1).double()
    copy_params_to_torch(ours, theirs)
    x = RNG.standard_normal((2, 4, 5, 5))
    out = ours(plugrad.tensor(x), output_size=size)
    tout = theirs(torch.tensor(x), output_size=size)
    np.testing.assert_allclose(host(out), tout.detach().numpy(), atol=1e-10)
    m1 = nn.ConvTranspose1d(2, 2, 3, stride=3)
    assert m1(plugrad.zeros(1, 2, 4), output_size=[12]).shape == (1, 2, 12)


def test_output_size_out_of_range():
    m = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    t = torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    for size in [(8, 9), (11, 9)]:
        with pytest.raises(ValueError, match="valid sizes range from"):
            t(torch.zeros(1, 4, 5, 5), output_size=size)
        with pytest.raises(ValueError, match=r"valid sizes range from \[9, 9\] to \[10, 10\]"):
            m(plugrad.zeros(1, 4, 5, 5), output_size=size)


@pytest.mark.parametrize("args,kw", [
    (((1, 3, 4, 4), (4, 2, 3, 3)), {}),  # channels
    (((1, 4, 4, 4), (4, 2, 3, 3)), dict(output_padding=1)),  # output padding >= stride
    (((1, 4, 4, 4), (4, 2, 3, 3)), dict(groups=3)),
    (((1, 4, 1, 1), (4, 2, 1, 1)), dict(padding=2)),  # output too small
    (((4, 4), (4, 2, 3, 3)), {}),  # rank
])
def test_errors_like_torch(args, kw):
    (xs, ws) = args
    with pytest.raises((RuntimeError, ValueError)):
        TF.conv_transpose2d(torch.zeros(xs), torch.zeros(ws), **kw)
    with pytest.raises((RuntimeError, ValueError), match="conv_transpose2d"):
        F.conv_transpose2d(plugrad.zeros(*xs), plugrad.zeros(*ws), **kw)
