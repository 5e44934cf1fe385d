"""F.interpolate / nn.Upsample against PyTorch. Source positions and weights are PyTorch's
bit for bit (checked on one-hot inputs, where the sums are exact); values of random inputs
agree to an ulp or two (PyTorch's kernel fuses its multiply-adds), gradients likewise."""
import warnings

import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F

from .spatial_helpers import compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(11)

SPECS = [dict(size=4), dict(size=11), dict(scale_factor=1.7), dict(scale_factor=0.6),
         dict(scale_factor=2.0), dict(scale_factor=3.0), dict(size=1),
         dict(scale_factor=1.7, recompute_scale_factor=True)]
MODES = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1),
         ("nearest-exact", 2), ("linear", 1), ("bilinear", 2), ("bicubic", 2),
         ("trilinear", 3), ("area", 1), ("area", 2)]


def _corners(mode):
    return [None] if mode in ("nearest", "nearest-exact", "area") else [False, True]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode,nd", MODES)
def test_weights_bit_exact(mode, nd, dtype):
    """One-hot inputs: each output is the sum of its taps' weights, with no rounding."""
    for n in (3, 7, 13):
        eye = np.eye(n, dtype=dtype)
        shape = (n, 1) + (n,) + (3,) * (nd - 1)
        x = np.ascontiguousarray(eye.reshape((n, 1, n) + (1,) * (nd - 1)) *
                                 np.ones(shape, dtype=dtype))
        for spec in SPECS:
            for ac in _corners(mode):
                kw = dict(mode=mode, align_corners=ac)
                if "size" in spec:
                    kw["size"] = (spec["size"],) + (3,) * (nd - 1)
                else:
                    kw["scale_factor"] = (spec["scale_factor"],) + (1.0,) * (nd - 1)
                    kw["recompute_scale_factor"] = spec.get("recompute_scale_factor")
                t = TF.interpolate(torch.tensor(x), **kw).numpy()
                o = F.interpolate(plugrad.tensor(x), **kw).numpy()
                if mode == "bicubic" and dtype == "float64" and "scale_factor" in spec:
                    np.testing.assert_allclose(o, t, rtol=0, atol=4e-15, err_msg=str(kw))
                else:
                    np.testing.assert_array_equal(o, t, err_msg=f"{n} {kw}")


@pytest.mark.parametrize("mode,nd", MODES)
@pytest.mark.parametrize("spec", SPECS[:6])
def test_values_and_gradients(device, mode, nd, spec):
    shape = (2, 2) + (5,) * nd if device == "cpu" else (1, 2) + (4,) * nd
    for ac in _corners(mode):
        kw = dict(spec, mode=mode, align_corners=ac)
        compare(torch, lambda t: F.interpolate(t, **kw), lambda t: TF.interpolate(t, **kw),
                [RNG.standard_normal(shape)], device, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_float32(mode):
    x = RNG.standard_normal((2, 3, 6, 5)).astype(np.float32)
    kw = dict(scale_factor=(1.5, 2.3), mode=mode)
    compare(torch, lambda t: F.interpolate(t, **kw), lambda t: TF.interpolate(t, **kw), [x],
            "cpu", dtype="float32", atol=1e-6, rtol=1e-5)


def test_nearest_uint8_and_float16():
    a = RNG.integers(0, 255, (1, 2, 3, 4)).astype(np.uint8)
    np.testing.assert_array_equal(
        F.interpolate(plugrad.tensor(a), scale_factor=1.5).numpy(),
        TF.interpolate(torch.tensor(a), scale_factor=1.5).numpy())
    h = RNG.standard_normal((1, 2, 3, 4)).astype(np.float16)
    np.testing.assert_allclose(
        F.interpolate(plugrad.tensor(h), size=(5, 7), mode="bilinear").numpy(),
        TF.interpolate(torch.tensor(h), size=(5, 7), mode="bilinear").numpy(), atol=2e-3)
    with pytest.raises(NotImplementedError):
        F.interpolate(plugrad.zeros(1, 1, 3, dtype=plugrad.int64), size=5)


@pytest.mark.parametrize("shape,kw,err", [
    ((1, 1, 4), dict(size=2, scale_factor=2), ValueError),
    ((1, 1, 4), dict(), ValueError),
    ((1, 1, 4), dict(size=(2, 2)), ValueError),
    ((1, 1, 4), dict(scale_factor=(2, 2)), ValueError),
    ((1, 1, 4), dict(size=2, align_corners=True), ValueError),
    ((1, 1, 4), dict(size=2, recompute_scale_factor=True), ValueError),
    ((1, 1, 4), dict(size=2, mode="bilinear"), NotImplementedError),
    ((1, 1, 4, 4), dict(size=2, mode="linear"), NotImplementedError),
    ((1, 1, 4, 4, 4), dict(size=2, mode="bicubic"), NotImplementedError),
    ((4,), dict(size=2), NotImplementedError),
    ((1, 1, 4), dict(size=2, mode="bogus"), NotImplementedError),
    ((1, 1, 4), dict(size=2.5), TypeError),
    ((1, 1, 4, 4), dict(size=2, mode="nearest", antialias=True), ValueError),
])
def test_errors_like_torch(shape, kw, err):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(err):
            TF.interpolate(torch.zeros(shape), **kw)
    with pytest.raises(err):
        F.interpolate(plugrad.zeros(*shape), **kw)


@pytest.mark.parametrize("cls,kw,shape", [
    ("Upsample", dict(scale_factor=2), (1, 2, 3, 3)),
    ("Upsample", dict(size=(5, 4), mode="bilinear", align_corners=True), (1, 2, 3, 3)),
    ("Upsample", dict(scale_factor=1.5, mode="bicubic"), (1, 1, 4, 4)),
    ("Upsample", dict(size=7, mode="linear"), (2, 3, 4)),
    ("UpsamplingNearest2d", dict(scale_factor=3), (1, 2, 2, 3)),
    ("UpsamplingBilinear2d", dict(size=(4, 6)), (1, 2, 2, 3))])
def test_modules(cls, kw, shape):
    ours, theirs = getattr(nn, cls)(**kw), getattr(torch.nn, cls)(**kw)
    assert repr(ours) == repr(theirs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(torch, ours, theirs, [RNG.standard_normal(shape)], "cpu", atol=1e-12,
                rtol=1e-12)


def test_double_backward(device):
    x = plugrad.tensor(RNG.standard_normal((1, 1, 3, 3)), requires_grad=True, device=device)
    for mode in ("bilinear", "bicubic"):
        assert plugrad.autograd.gradgradcheck(
            lambda t: F.interpolate(t, scale_factor=1.5, mode=mode), (x,))
