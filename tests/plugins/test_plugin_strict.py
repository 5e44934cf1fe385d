"""The example plugin ``examples/plugins/plugrad-strict`` (array-api-strict as device
``strict``), installed as a real distribution: it must be pip-installed, as the README's
test command does (``pip install ./examples/plugins/plugrad-strict``)."""
from __future__ import annotations

import importlib.metadata

import pytest

import plugrad
import plugrad.nn as nn
import plugrad.optim as optim
from plugrad.backends.array_api import ArrayAPIBackend
from plugrad.backends.hooks import hookimpl
from plugrad.core.registry import get_registry

INSTALL = "pip install ./examples/plugins/plugrad-strict"


@pytest.fixture(scope="module")
def strict():
    eps = {ep.name: ep for ep in importlib.metadata.entry_points(group="plugrad.backends")}
    if "strict" not in eps:
        pytest.fail(f"the example plugin plugrad-strict is not installed: run `{INSTALL}`")
    assert eps["strict"].value == "plugrad_strict"
    assert getattr(eps["strict"].dist, "name", None) == "plugrad-strict"
    reg = get_registry()
    reg.load_entry_points()
    if "strict" not in reg.backends:
        failed = [f for f in reg.failures if f[0] == "strict"]
        pytest.fail(f"plugrad-strict is installed but did not register: {failed}")
    assert reg.origins["strict"] == "plugrad-strict (entry point strict)"
    return reg.backends["strict"]


def test_tensor_on_strict(strict):
    t = plugrad.tensor([1., 2.], device="strict")
    assert repr(t) == "tensor([1., 2.], device='strict')"
    assert type(t._data).__module__.startswith("array_api_strict")
    assert isinstance(t._data, strict.array_type)
    assert (t * 2 + 1).tolist() == [3.0, 5.0] and t.device.type == "strict"
    s = plugrad.tensor(3.0, device="strict")
    assert s.shape == () and s.item() == 3.0


def _fit_line(device):
    """Seed 003 as written (nn.Linear(1, 1), MSELoss, SGD lr 0.01, 100 epochs on y = 2x + 1),
    data and model moved with ``.to(device)``."""
    plugrad.manual_seed(0)
    X_train = plugrad.randn(100, 1)
    y_train = 2 * X_train + 1 + plugrad.randn(100, 1) * 0.1
    X_train, y_train = X_train.to(device), y_train.to(device)
    model = nn.Linear(1, 1).to(device)
    criterion = nn.MSELoss()
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for _ in range(100):
        loss = criterion(model(X_train), y_train)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert model.weight.device.type == device and model.weight.grad.device.type == device
    return losses, model.weight.item(), model.bias.item()


def test_strict_trains_the_seed_linear_regression(strict):
    losses, w, b = _fit_line("strict")
    assert losses[-1] < losses[0] / 10
    assert all(b_ <= a_ for a_, b_ in zip(losses, losses[1:]))
    assert w == pytest.approx(2.0, abs=0.3) and b == pytest.approx(1.0, abs=0.2)
    cpu_losses, cpu_w, cpu_b = _fit_line("cpu")  # same seed, same data: the same fit
    assert losses == pytest.approx(cpu_losses, rel=1e-5)
    assert (w, b) == pytest.approx((cpu_w, cpu_b), rel=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "uint8", "int8", "int16"])
def test_what_strict_lacks_is_a_clear_error(strict, dtype):
    supported = "bool, float32, float64, int32, int64"
    with pytest.raises(plugrad.DTypeError, match=f"dtype plugrad.{dtype} is not supported by "
                                                 f"backend 'array-api-strict' \\(device type "
                                                 f"'strict'\\); it supports {supported}"):
        plugrad.zeros(2, dtype=getattr(plugrad, dtype), device="strict")
    if dtype not in get_registry().table("cpu").dtypes:
        return
    t = plugrad.ones(2, dtype=getattr(plugrad, dtype))
    with pytest.raises(plugrad.DTypeError, match="not supported by backend 'array-api-strict'"):
        t.to("strict")


def test_what_the_standard_lacks_falls_back(strict):
    """No scatter-add, random numbers or fused nn kernels in the standard: host fallbacks
    and composites run them."""
    x = plugrad.zeros(3, device="strict").index_add(0, plugrad.tensor([0, 0, 2],
                                                                      device="strict"),
                                                    plugrad.ones(3, device="strict"))
    assert x.tolist() == [2.0, 0.0, 1.0]
    plugrad.manual_seed(5)
    r = plugrad.rand(4, device="strict")
    assert r.device.type == "strict" and 0 <= r.min().item() and r.max().item() < 1
    sources = get_registry().kernel_sources("strict")
    assert sources["softmax"] == "composite" and sources["scatter_add"] == "array-api-strict"
    p = plugrad.tensor([[1.0, 2.0, 3.0]], device="strict").softmax(-1)
    assert p.sum().item() == pytest.approx(1.0)
    conv = nn.Conv2d(1, 2, 3).to("strict")
    assert conv(plugrad.randn(1, 1, 5, 5, device="strict")).shape == (1, 2, 3, 3)


# ---------------------------------------------------------------- the generic backend itself
class _GenericStrict:
    """array-api-strict through the bare ``ArrayAPIBackend``, without the plugin's overrides."""

    @hookimpl
    def plugrad_backends(self):
        import array_api_strict
        return [ArrayAPIBackend("generic-strict", "gstrict", array_api_strict,
                                dtypes={"bool", "int32", "int64", "float32", "float64"})]


@pytest.fixture
def generic():
    reg = get_registry()
    plugin = _GenericStrict()
    reg.register_plugin(plugin, name="generic-strict")
    yield
    reg.unregister_plugin("generic-strict")


def test_generic_array_api_backend_keeps_0d(generic):
    assert plugrad.tensor(3.0, device="gstrict").shape == ()


def test_generic_array_api_backend_in_place_update(generic):
    p = plugrad.ones(2, 1, device="gstrict")
    p.add_(plugrad.ones(2, 1, device="gstrict"), alpha=-0.5)
    assert p.tolist() == [[0.5], [0.5]]


def test_conformance_suite_passes_on_strict(tmp_path):
    """Issue 5's promise: an Array API library with no kernels of its own passes the same
    suite as the built-in backends (run as a user would, from another folder)."""
    import subprocess
    import sys
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "plugrad.testing.conformance",
         "--plugrad-backend", "strict", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "--rootdir", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    tail = result.stdout[-3000:]
    assert result.returncode == 0, tail
    assert "ops failing: 0" in result.stdout, tail
