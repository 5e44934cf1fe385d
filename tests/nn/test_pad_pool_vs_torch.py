"""F.pad's modes, the 1-D/Lp/adaptive pools, pixel shuffles and fold/unfold against
PyTorch (values, gradients, indices, errors), and their modules."""
import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F

from .helpers import host
from .spatial_helpers import compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(5)


# ---------------------------------------------------------------------- pad
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", [
    ((1, 2, 5), (2, 3)), ((2, 5), (1, 0)), ((1, 2, 4, 5), (1, 2, 3, 0)), ((2, 4, 5), (3, 1, 2, 2)),
    ((1, 1, 3, 4, 5), (1, 1, 2, 0, 0, 2)), ((2, 3, 4, 3), (1, 2, 0, 1, 2, 1)),
    ((1, 2, 6), (-1, 2)), ((1, 2, 4, 5), (2, -2, -1, 1))])
def test_pad_modes(device, mode, shape, pad):
    compare(torch, lambda x: F.pad(x, pad, mode=mode), lambda x: TF.pad(x, pad, mode=mode),
            [RNG.standard_normal(shape)], device)


def test_report_entry_22():
    x = plugrad.arange(4.0).reshape(1, 1, 4)
    assert F.pad(x, (1, 2), mode="reflect").tolist() == [[[1., 0., 1., 2., 3., 2., 1.]]]
    assert F.pad(x, (1, 2), mode="replicate").tolist() == [[[0., 0., 1., 2., 3., 3., 3.]]]
    assert F.pad(x, (1, 2), mode="circular").tolist() == [[[3., 0., 1., 2., 3., 0., 1.]]]
    r = F.pad(x.requires_grad_(), (1, 2), mode="reflect")
    assert type(r.grad_fn).__name__ == "ReflectionPad1DBackward0"


@pytest.mark.parametrize("dtype", ["int64", "int32", "float32"])
def test_pad_integer(dtype):
    a = RNG.integers(-5, 5, (2, 3, 4))
    for mode in ("reflect", "replicate", "circular"):
        out = F.pad(plugrad.tensor(a, dtype=getattr(plugrad, dtype)), (1, 2, 2, 1), mode=mode)
        ref = TF.pad(torch.tensor(a, dtype=getattr(torch, dtype)), (1, 2, 2, 1), mode=mode)
        np.testing.assert_array_equal(out.numpy(), ref.numpy())
        assert out.dtype == getattr(plugrad, dtype)


@pytest.mark.parametrize("shape,pad,mode,err", [
    ((1, 2, 3), (3, 0), "reflect", RuntimeError),  # padding >= size
    ((1, 2, 3), (4, 0), "circular", RuntimeError),  # wraps twice
    ((3,), (1, 1), "reflect", NotImplementedError),  # rank
    ((1, 1, 2, 3, 4, 5), (1, 1), "replicate", NotImplementedError),
    ((1, 2, 3), (1,), "reflect", RuntimeError),  # odd length
    ((1, 2, 3), (1, 1), "bogus", (RuntimeError, NotImplementedError)),
])
def test_pad_errors_like_torch(shape, pad, mode, err):
    with pytest.raises(err):
        TF.pad(torch.zeros(shape), pad, mode=mode)
    with pytest.raises(err, match="pad"):
        F.pad(plugrad.zeros(*shape), pad, mode=mode)


@pytest.mark.parametrize("cls,arg,shape", [
    ("ReflectionPad1d", 2, (2, 3, 5)), ("ReflectionPad2d", (1, 0, 2, 1), (1, 2, 4, 4)),
    ("ReflectionPad3d", 1, (1, 1, 3, 3, 3)), ("ReplicationPad1d", (3, 1), (3, 4)),
    ("ReplicationPad2d", 2, (2, 3, 3)), ("ReplicationPad3d", (1, 0, 0, 1, 2, 0), (1, 2, 2, 3)),
    ("CircularPad1d", 1, (1, 2, 3)), ("CircularPad2d", (1, 2, 0, 1), (1, 1, 3, 3)),
    ("CircularPad3d", 1, (1, 1, 2, 2, 2)), ("ZeroPad1d", (1, 2), (2, 3)),
    ("ZeroPad2d", (1, 2, 0, 3), (1, 2, 3, 3)), ("ZeroPad3d", 1, (1, 2, 2, 2))])
def test_pad_modules(cls, arg, shape):
    ours, theirs = getattr(nn, cls)(arg), getattr(torch.nn, cls)(arg)
    assert repr(ours) == repr(theirs)
    compare(torch, ours, theirs, [RNG.standard_normal(shape)], "cpu")


def test_constant_pad_modules():
    for n, shape in ((1, (2, 3)), (2, (1, 2, 3)), (3, (1, 2, 2, 2))):
        ours = getattr(nn, f"ConstantPad{n}d")(2, 1.5)
        theirs = getattr(torch.nn, f"ConstantPad{n}d")(2, 1.5)
        assert repr(ours) == repr(theirs)
        compare(torch, ours, theirs, [RNG.standard_normal(shape)], "cpu")
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.CircularPad1d(1)(plugrad.zeros(1, 2, 3, 4))


# ---------------------------------------------------------------------- pools
POOLS = [
    ("max_pool1d", dict(kernel_size=3)), ("max_pool1d", dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool1d", dict(kernel_size=2, dilation=2, ceil_mode=True)),
    ("max_pool1d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                        return_indices=True)),
    ("avg_pool1d", dict(kernel_size=3)),
    ("avg_pool1d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool1d", dict(kernel_size=4, stride=3, padding=2, ceil_mode=True,
                        count_include_pad=False)),
    ("adaptive_avg_pool1d", dict(output_size=3)), ("adaptive_avg_pool1d", dict(output_size=7)),
    ("adaptive_max_pool1d", dict(output_size=3, return_indices=True)),
    ("adaptive_max_pool1d", dict(output_size=4)),
    ("lp_pool1d", dict(norm_type=2, kernel_size=3)),
    ("lp_pool1d", dict(norm_type=3.0, kernel_size=2, stride=3, ceil_mode=True)),
]


@pytest.mark.parametrize("name,kw", POOLS)
@pytest.mark.parametrize("shape", [(2, 3, 8), (3, 7)])
def test_pool1d(device, name, kw, shape):
    x = RNG.standard_normal(shape)
    if name == "lp_pool1d":
        x = np.abs(x) + 0.1  # odd powers of negatives: NaN roots on both sides
    compare(torch, lambda t: getattr(F, name)(t, **kw),
            lambda t: getattr(TF, name)(t, **kw), [x], device)


POOLS_2D = [
    ("adaptive_max_pool2d", dict(output_size=(2, 3), return_indices=True)),
    ("adaptive_max_pool2d", dict(output_size=(3, None))),
    ("adaptive_max_pool2d", dict(output_size=2, return_indices=True)),  # divisible
    ("lp_pool2d", dict(norm_type=2, kernel_size=2)),
    ("lp_pool2d", dict(norm_type=1.5, kernel_size=(2, 3), stride=(1, 2), ceil_mode=True)),
]


@pytest.mark.parametrize("name,kw", POOLS_2D)
@pytest.mark.parametrize("shape", [(2, 2, 6, 5), (2, 4, 4)])
def test_pool2d(device, name, kw, shape):
    x = RNG.standard_normal(shape)
    if name == "lp_pool2d":
        x = np.abs(x) + 0.1
    compare(torch, lambda t: getattr(F, name)(t, **kw),
            lambda t: getattr(TF, name)(t, **kw), [x], device)


def test_adaptive_max_ties_pick_torchs_index():
    x = np.zeros((1, 1, 5, 7))
    x[0, 0, 1:3, 2:4] = 1.0
    o, i = F.adaptive_max_pool2d(plugrad.tensor(x), (3, 2), return_indices=True)
    to, ti = TF.adaptive_max_pool2d(torch.tensor(x), (3, 2), return_indices=True)
    np.testing.assert_array_equal(i.numpy(), ti.numpy())


def test_report_entry_27():
    x = plugrad.arange(6.0).reshape(1, 1, 2, 3)
    assert F.max_pool2d(x, 3, stride=2, padding=(0, 1), ceil_mode=True).tolist() == \
        [[[[4.0, 5.0]]]]
    tx = torch.arange(6.0).reshape(1, 1, 2, 3)
    for kw in (dict(padding=(0, 1)), dict(padding=(0, 1), count_include_pad=False)):
        np.testing.assert_allclose(
            F.avg_pool2d(x, 3, stride=2, ceil_mode=True, **kw).numpy(),
            TF.avg_pool2d(tx, 3, stride=2, ceil_mode=True, **kw).numpy(), rtol=1e-6)
    # a window that would start in the right padding is dropped, as in PyTorch
    y = RNG.standard_normal((1, 1, 5, 5))
    for kw in (dict(kernel_size=2, stride=2, padding=1), dict(kernel_size=3, stride=3, padding=1)):
        compare(torch, lambda t: F.max_pool2d(t, ceil_mode=True, **kw),
                lambda t: TF.max_pool2d(t, ceil_mode=True, **kw), [y], "cpu")
        compare(torch, lambda t: F.avg_pool2d(t, ceil_mode=True, **kw),
                lambda t: TF.avg_pool2d(t, ceil_mode=True, **kw), [y], "cpu")
    with pytest.raises(RuntimeError, match="too small"):
        F.max_pool2d(plugrad.zeros(1, 1, 1, 1), 4, stride=2, ceil_mode=True)
    with pytest.raises(RuntimeError):
        TF.max_pool2d(torch.zeros(1, 1, 1, 1), 4, stride=2, ceil_mode=True)


@pytest.mark.parametrize("cls,args,shape", [
    ("MaxPool1d", (3, 2, 1), (2, 3, 9)), ("AvgPool1d", (3,), (2, 3, 9)),
    ("LPPool1d", (2, 3), (2, 3, 9)), ("LPPool2d", (2, (2, 3)), (2, 3, 6, 6)),
    ("AdaptiveMaxPool1d", (4,), (2, 3, 9)), ("AdaptiveMaxPool2d", ((2, None),), (1, 2, 5, 5)),
    ("AdaptiveAvgPool1d", (4,), (3, 9))])
def test_pool_modules(cls, args, shape):
    ours, theirs = getattr(nn, cls)(*args), getattr(torch.nn, cls)(*args)
    assert repr(ours) == repr(theirs)
    compare(torch, ours, theirs, [np.abs(RNG.standard_normal(shape)) + 0.1], "cpu")


def test_pool_rank_errors():
    for name, args in (("max_pool1d", (2,)), ("avg_pool1d", (2,)),
                       ("adaptive_max_pool1d", (2,)), ("adaptive_avg_pool1d", (2,))):
        with pytest.raises(RuntimeError):
            getattr(TF, name)(torch.zeros(2, 3, 4, 5), *args)
        with pytest.raises(RuntimeError, match=name):
            getattr(F, name)(plugrad.zeros(2, 3, 4, 5), *args)
    with pytest.raises(RuntimeError, match="adaptive_max_pool2d"):
        F.adaptive_max_pool2d(plugrad.zeros(4, 5), 2)


# ---------------------------------------------------------------------- rearrangements
@pytest.mark.parametrize("shape,r", [((1, 8, 2, 3), 2), ((9, 2, 2), 3), ((2, 1, 4, 2, 3), 2)])
def test_pixel_shuffle(device, shape, r):
    compare(torch, lambda t: F.pixel_shuffle(t, r), lambda t: TF.pixel_shuffle(t, r),
            [RNG.standard_normal(shape)], device)
    up = tuple(shape[:-3]) + (shape[-3] // r ** 2, shape[-2] * r, shape[-1] * r)
    compare(torch, lambda t: F.pixel_unshuffle(t, r), lambda t: TF.pixel_unshuffle(t, r),
            [RNG.standard_normal(up)], device)


def test_pixel_shuffle_errors_and_modules():
    for fn, shape, r in (("pixel_shuffle", (1, 6, 2, 2), 2), ("pixel_shuffle", (4, 4), 2),
                         ("pixel_unshuffle", (1, 1, 3, 4), 2), ("pixel_shuffle", (4, 2, 2), 0)):
        with pytest.raises(RuntimeError):
            getattr(TF, fn)(torch.zeros(shape), r)
        with pytest.raises(RuntimeError, match=fn):
            getattr(F, fn)(plugrad.zeros(*shape), r)
    assert repr(nn.PixelShuffle(2)) == repr(torch.nn.PixelShuffle(2))
    x = RNG.standard_normal((1, 8, 2, 3))
    np.testing.assert_array_equal(host(nn.PixelUnshuffle(2)(nn.PixelShuffle(2)(
        plugrad.tensor(x)))), x)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=2,
                                                           padding=1, dilation=(1, 2))])
def test_unfold_fold(device, kw):
    x = RNG.standard_normal((2, 3, 5, 6))
    out, _ = compare(torch, lambda t: F.unfold(t, **kw), lambda t: TF.unfold(t, **kw), [x],
                     device)
    compare(torch, lambda t: F.fold(t, (5, 6), **kw), lambda t: TF.fold(t, (5, 6), **kw),
            [host(out)], device)
    # unbatched
    compare(torch, lambda t: F.unfold(t, **kw), lambda t: TF.unfold(t, **kw), [x[0]], device)
    compare(torch, lambda t: F.fold(t, (5, 6), **kw), lambda t: TF.fold(t, (5, 6), **kw),
            [host(out)[0]], device)
    ours, theirs = nn.Unfold(**kw), torch.nn.Unfold(**kw)
    assert repr(ours) == repr(theirs)
    ours, theirs = nn.Fold((5, 6), **kw), torch.nn.Fold((5, 6), **kw)
    assert repr(ours) == repr(theirs)
    compare(torch, ours, theirs, [host(out)], device)


def test_unfold_fold_rank_errors():
    with pytest.raises((RuntimeError, IndexError)):  # PyTorch: IndexError from im2col
        TF.unfold(torch.zeros(3, 4), 2)
    with pytest.raises(RuntimeError, match="unfold"):
        F.unfold(plugrad.zeros(3, 4), 2)
    with pytest.raises((RuntimeError, IndexError)):
        TF.fold(torch.zeros(4), (2, 2), 2)
    with pytest.raises(RuntimeError, match="fold"):
        F.fold(plugrad.zeros(4), (2, 2), 2)
