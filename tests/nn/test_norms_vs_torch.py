"""Group, instance, RMS and local-response norms against PyTorch: functional values and
gradients, running statistics, module defaults, state dicts and errors."""
import warnings

import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F

from .helpers import host
from .torch_compare import compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(11)


@pytest.mark.parametrize("shape,groups,affine", [((2, 4, 3), 2, True), ((2, 6, 2, 2), 3, False),
                                                 ((3, 4), 4, True), ((1, 4, 5), 1, True)])
def test_group_norm(device, shape, groups, affine):
    c = shape[1]
    args = (RNG.standard_normal(shape), groups)
    if affine:
        args += (RNG.standard_normal(c), RNG.standard_normal(c))
    compare(F.group_norm, TF.group_norm, args, device, kwargs={"eps": 1e-3})


def test_group_norm_errors():
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(plugrad.ones(2, 3, 4), 2)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.group_norm(plugrad.ones(3), 1)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.group_norm(plugrad.ones(1, 2), 2)
    with pytest.raises(ValueError, match="num_channels must be divisible"):
        nn.GroupNorm(2, 3)


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 2, 3), (1, 2, 2, 2, 2)])
def test_instance_norm_input_stats(device, shape):
    c = shape[1]
    compare(F.instance_norm, TF.instance_norm,
            (RNG.standard_normal(shape), None, None, RNG.standard_normal(c),
             RNG.standard_normal(c)), device)


def test_instance_norm_running_stats(device):
    x = RNG.standard_normal((3, 2, 5))
    ours_m = plugrad.zeros(2, dtype=plugrad.float64, device=device)
    ours_v = plugrad.ones(2, dtype=plugrad.float64, device=device)
    th_m, th_v = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
    for _ in range(2):
        y = F.instance_norm(plugrad.tensor(x, device=device), ours_m, ours_v, momentum=0.3)
        t = TF.instance_norm(torch.from_numpy(x), th_m, th_v, momentum=0.3)
    np.testing.assert_allclose(host(y), t.numpy(), atol=1e-12)
    np.testing.assert_allclose(host(ours_m), th_m.numpy(), atol=1e-12)
    np.testing.assert_allclose(host(ours_v), th_v.numpy(), atol=1e-12)
    compare(F.instance_norm, TF.instance_norm,
            (x, np.array([0.1, -0.2]), np.array([0.5, 2.0])), device, grads=[0],
            kwargs={"use_input_stats": False})


def test_instance_norm_errors():
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        F.instance_norm(plugrad.ones(2, 3, 1))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.InstanceNorm1d(3)(plugrad.ones(2, 3, 4, 5))
    with pytest.raises(ValueError, match="to match num_features"):
        nn.InstanceNorm1d(3, affine=True)(plugrad.ones(2, 4, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(plugrad.randn(2, 4, 5))


@pytest.mark.parametrize("cls,shape", [("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm1d", (3, 5)),
                                       ("InstanceNorm2d", (2, 3, 2, 3)),
                                       ("InstanceNorm2d", (3, 2, 3)),
                                       ("InstanceNorm3d", (1, 3, 2, 2, 2))])
@pytest.mark.parametrize("kw", [{}, {"affine": True, "track_running_stats": True,
                                     "momentum": 0.2}])
def test_instance_norm_modules(device, cls, shape, kw):
    ours, theirs = getattr(nn, cls)(3, **kw), getattr(torch.nn, cls)(3, **kw)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.to(device).double()
    theirs.double()
    x = RNG.standard_normal(shape)
    for train in (True, False):
        ours.train(train)
        theirs.train(train)
        compare(ours, theirs, (x,), device)
    for name, buf in theirs.state_dict().items():
        np.testing.assert_allclose(host(ours.state_dict()[name]), buf.numpy(), atol=1e-12,
                                   err_msg=name)


def test_group_norm_module(device):
    ours, theirs = nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4)
    assert repr(ours) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    with torch.no_grad():
        theirs.weight.copy_(torch.arange(4.0))
    ours.load_state_dict({k: plugrad.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    ours.to(device).double()
    compare(ours, theirs.double(), (RNG.standard_normal((2, 4, 3)),), device)


@pytest.mark.parametrize("shape,norm", [((2, 3, 4), (4,)), ((2, 3, 4), (3, 4)), ((5,), (5,))])
def test_rms_norm(device, shape, norm):
    nshape = norm
    x = RNG.standard_normal(shape)
    compare(F.rms_norm, TF.rms_norm, (x, norm, RNG.standard_normal(nshape)), device)
    compare(F.rms_norm, TF.rms_norm, (x * 1e-9, norm), device, atol=1e-6)  # eps matters
    compare(F.rms_norm, TF.rms_norm, (x, norm), device, kwargs={"eps": 0.5})


def test_rms_norm_default_eps_is_the_dtypes():
    x = np.full((2, 3), 1e-4, dtype=np.float32)
    ours = F.rms_norm(plugrad.tensor(x), (3,))
    theirs = TF.rms_norm(torch.from_numpy(x), (3,))
    np.testing.assert_allclose(host(ours), theirs.numpy(), rtol=1e-5)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.rms_norm(plugrad.ones(2, 3), (4,))
    with pytest.raises(TypeError, match="tuple of ints"):
        F.rms_norm(plugrad.ones(2, 3), 3)


def test_rms_norm_module(device):
    ours, theirs = nn.RMSNorm((2, 3)), torch.nn.RMSNorm((2, 3))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert nn.RMSNorm(3, elementwise_affine=False).weight is None
    ours.to(device).double()
    compare(ours, theirs.double(), (RNG.standard_normal((4, 2, 3)),), device)


@pytest.mark.parametrize("shape,size", [((2, 5, 3), 3), ((2, 4, 3), 2), ((1, 6, 2, 3), 5),
                                        ((1, 3, 2, 2, 2), 4), ((2, 2, 3), 7)])
def test_local_response_norm(device, shape, size):
    compare(F.local_response_norm, TF.local_response_norm, (RNG.standard_normal(shape), size),
            device, kwargs={"alpha": 0.5, "beta": 0.6, "k": 1.5})
    ours, theirs = nn.LocalResponseNorm(size), torch.nn.LocalResponseNorm(size)
    assert repr(ours) == repr(theirs)
    compare(ours, theirs, (RNG.standard_normal(shape),), device)
    with pytest.raises(ValueError, match="3D or higher"):
        F.local_response_norm(plugrad.ones(2, 3), 2)


def test_no_warnings_on_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.InstanceNorm2d(2)(plugrad.randn(1, 2, 3, 3))
        nn.GroupNorm(1, 2)(plugrad.randn(2, 2, 3))
