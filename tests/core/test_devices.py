"""Devices: ``device=`` everywhere, moves, the default device, and clear errors."""
import os
import subprocess
import sys

import numpy as np
import pytest

import plugrad
from plugrad.core.registry import BackendError


def _run(code, **env):
    """Run ``code`` in a fresh interpreter (import-time behaviour) and return its stdout."""
    full_env = {**os.environ, **env}
    for k, v in env.items():
        if v is None:
            del full_env[k]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=full_env, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


# ---------------------------------------------------------------- Device objects
def test_device_objects():
    d = plugrad.device("cuda:1")
    assert d.type == "cuda" and d.index == 1 and str(d) == "cuda:1"
    assert repr(d) == "device(type='cuda', index=1)"
    assert repr(plugrad.device("ref")) == "device(type='ref')"
    assert plugrad.device("cuda", 1) is d and plugrad.device(d) is d
    assert plugrad.device("cpu") == "cpu" and plugrad.device("cpu") != "cuda"
    assert plugrad.device("cpu") != plugrad.device("cpu", 0)
    assert hash(plugrad.device("ref")) == hash(plugrad.device("ref"))


@pytest.mark.parametrize("spec, error, message", [
    ("cuda:x", ValueError, "device: invalid device string 'cuda:x'"),
    ("", ValueError, "device: invalid device string ''"),
    (3.5, TypeError, "device: expected a string like 'cpu' or 'cuda:0', got 3.5"),
])
def test_bad_device_specs(spec, error, message):
    with pytest.raises(error, match=message):
        plugrad.device(spec)
    with pytest.raises(ValueError, match="device: index given twice"):
        plugrad.device("cuda:0", 1)


# ---------------------------------------------------------------- device= and moves
def test_device_argument_everywhere(device):
    made = [plugrad.tensor([1.], device=device), plugrad.zeros(1, device=device),
            plugrad.ones(1, device=device), plugrad.full((1,), 2., device=device),
            plugrad.empty(1, device=device), plugrad.arange(2, device=device),
            plugrad.linspace(0, 1, 2, device=device), plugrad.eye(2, device=device),
            plugrad.rand(1, device=device), plugrad.randn(1, device=device),
            plugrad.randint(0, 3, (2,), device=device), plugrad.randperm(3, device=device),
            plugrad.as_tensor([1, 2], device=device),
            plugrad.zeros_like(plugrad.ones(1), device=device),
            plugrad.tensor([1.], device=plugrad.device(device))]
    for t in made:
        assert t.device == plugrad.device(device) and t.device is plugrad.device(device)


def test_to_and_cpu_round_trip(device):
    t = plugrad.tensor([[1.5, 2.]], dtype=plugrad.float64)
    moved = t.to(device)
    assert moved.device == device and moved.dtype is plugrad.float64
    assert moved.tolist() == [[1.5, 2.]]
    assert moved.cpu().device == "cpu" and moved.cpu().tolist() == [[1.5, 2.]]
    assert t.to("cpu") is t and moved.to(device) is moved
    both = t.to(device, plugrad.float32)
    assert both.device == device and both.dtype is plugrad.float32
    assert t.to(plugrad.zeros(1, dtype=plugrad.int64, device=device)).dtype is plugrad.int64
    assert t.to(device=device, dtype=plugrad.float16).dtype is plugrad.float16
    assert t.to(device, copy=True) is not t


def test_to_is_differentiable_across_devices(device):
    x = plugrad.tensor([1., 2.], requires_grad=True)
    y = x.to(device)
    (y * y).sum().backward()
    assert x.grad.device == "cpu" and x.grad.tolist() == [2., 4.]


def test_mixing_devices_names_both():
    a = plugrad.ones(2)
    b = plugrad.ones(2, device="ref")
    for op in (lambda: a + b, lambda: b * a, lambda: a @ b, lambda: plugrad.where(a > 0, a, b)):
        with pytest.raises(plugrad.DeviceError, match="cpu and ref|ref and cpu"):
            op()


def test_mixing_devices_in_cat_names_both():
    with pytest.raises(plugrad.DeviceError, match="cpu and ref|ref and cpu"):
        plugrad.cat([plugrad.ones(2), plugrad.ones(2, device="ref")])


# ---------------------------------------------------------------- the default device
def test_default_device_is_cpu():
    assert plugrad.get_default_device() == "cpu"
    assert plugrad.zeros(1).device == "cpu"


def test_set_default_device_as_context_manager():
    with plugrad.set_default_device("ref"):
        assert plugrad.get_default_device() == "ref"
        assert plugrad.zeros(1).device == "ref" and plugrad.tensor(1.).device == "ref"
        assert plugrad.zeros(1, device="cpu").device == "cpu"
        with plugrad.device("cpu"):
            assert plugrad.ones(1).device == "cpu"
        assert plugrad.ones(1).device == "ref"
    assert plugrad.zeros(1).device == "cpu"


def test_set_default_device_plainly():
    plugrad.set_default_device("ref")
    try:
        assert plugrad.arange(3).device == "ref"
    finally:
        plugrad.set_default_device("cpu")
    assert plugrad.arange(3).device == "cpu"


def test_set_default_device_refuses_unknown_devices():
    with pytest.raises(BackendError, match="set_default_device: no backend serves device type "
                                           "'tpu'"):
        plugrad.set_default_device("tpu")
    assert plugrad.get_default_device() == "cpu"


def test_default_device_from_environment():
    out = _run("import plugrad; print(plugrad.get_default_device(), plugrad.zeros(1).device)",
               PLUGRAD_DEVICE="ref")
    assert out == "ref ref"


def test_unknown_device_in_environment_is_explained():
    code = ("import plugrad\ntry:\n    plugrad.zeros(1)\nexcept plugrad.BackendError as e:\n"
            "    print(e)")
    out = _run(code, PLUGRAD_DEVICE="tpu")
    assert "no backend serves device type 'tpu'" in out
    assert "PLUGRAD_DEVICE='tpu'" in out


# ---------------------------------------------------------------- cuda
@pytest.mark.skipif(plugrad.cuda.is_available(), reason="CUDA is available here")
def test_cuda_unavailable_is_explained():
    assert plugrad.cuda.is_available() is False and plugrad.cuda.device_count() == 0
    for make in (lambda: plugrad.zeros(1, device="cuda"), lambda: plugrad.ones(1).cuda(),
                 lambda: plugrad.ones(1).to("cuda:0")):
        with pytest.raises(BackendError, match="device type 'cuda' \\(backend 'cupy'\\) is not "
                                               "available here: CuPy is not installed"):
            make()
    with pytest.raises(RuntimeError, match="CUDA is not available: CuPy is not installed"):
        plugrad.cuda.current_device()


def test_import_does_not_import_cupy_or_plugins():
    code = ("import sys, plugrad\nplugrad.ones(2) * 2\n"
            "from plugrad.core.registry import get_registry\n"
            "print('cupy' in sys.modules, get_registry()._entry_points_loaded)")
    assert _run(code) == "False False"


# ---------------------------------------------------------------- host scalars
def test_a_host_0d_constant_joins_a_tensor_on_another_device():
    """As PyTorch's CPU scalars: ``x_dev * torch.tensor(2.0)`` runs on x's device, its result
    and gradient there; a host scalar that requires grad, or any larger host tensor, still
    raises the device error."""
    x = plugrad.tensor([1.0, -2.0, 4.0], device="ref", requires_grad=True)
    two = plugrad.tensor(2.0)
    y = (x * two + two) / two - two ** x
    assert y.device.type == "ref"
    y.sum().backward()
    expected = 1 - np.log(2.0) * 2.0 ** np.array([1.0, -2.0, 4.0])
    np.testing.assert_allclose(x.grad.tolist(), expected, rtol=1e-6)
    assert x.grad.device.type == "ref"
    assert plugrad.where(x > 0, x, two).tolist() == [1.0, 2.0, 4.0]
    with pytest.raises(plugrad.DeviceError, match="mul: Expected all tensors to be on the "
                                                  "same device"):
        x * plugrad.tensor(2.0, requires_grad=True)
    with pytest.raises(plugrad.DeviceError, match="add: Expected all tensors"):
        x + plugrad.ones(1)
