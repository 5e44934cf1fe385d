"""The pluggy registry: built-ins and plugins register alike; pluggy stays off the hot path."""
import pluggy
import pytest

import plugrad
from plugrad.backends.contract import Backend, optional_kernels, required_primitives
from plugrad.backends.hooks import hookimpl
from plugrad.backends.numpy import NumPyBackend
from plugrad.core import registry as registry_module
from plugrad.core.registry import BackendError, KernelTable, Registry, get_registry


class FakeBackend(NumPyBackend):
    """A third-party backend in three lines: NumPy arrays on a new device type."""

    def __init__(self, device_type="fake"):
        super().__init__()
        self.name, self.device_type = f"{device_type}-numpy", device_type


class FakePlugin:
    """A plugin object, as a third-party package would expose through its entry point."""

    def __init__(self, *backends):
        self.backends = backends or (FakeBackend(),)

    @hookimpl
    def plugrad_backends(self):
        return list(self.backends)


class KernelPlugin:
    """Contributes an ``exp`` kernel to the ``fake`` backend, counting calls."""

    def __init__(self):
        self.hook_calls = 0
        self.kernel_calls = 0

    @hookimpl
    def plugrad_kernels(self, backend):
        self.hook_calls += 1
        if backend.device_type != "fake":
            return None

        def exp(x):
            self.kernel_calls += 1
            return backend.exp(x)
        return {"exp": exp}


@pytest.fixture
def fake():
    """The ``fake`` device, registered for one test."""
    reg = get_registry()
    plugin = FakePlugin()
    name = reg.register_plugin(plugin)
    yield plugin
    if reg.pm.has_plugin(name):
        reg.unregister_plugin(plugin)


# ---------------------------------------------------------------- built-ins
def test_builtins_register_through_the_hooks():
    reg = get_registry()
    for module, device_type in [("plugrad.backends.numpy", "cpu"),
                                ("plugrad.backends.reference", "ref"),
                                ("plugrad.backends.cupy", "cuda")]:
        plugin = reg.pm.get_plugin(module)
        assert plugin is not None, module
        impls = [i for i in reg.pm.hook.plugrad_backends.get_hookimpls() if i.plugin is plugin]
        assert len(impls) == 1
        assert reg.provided[module] == (device_type,)
        assert reg.origins[device_type] == "built-in"


def test_kernel_table_resolves_native_and_composite():
    table = get_registry().table("ref")
    assert isinstance(table, KernelTable) and repr(table) == "<KernelTable reference (ref)>"
    assert set(table.sources) == set(required_primitives()) | set(optional_kernels())
    assert all(table.sources[op] == "reference" for op in required_primitives())
    composite = [op for op, src in table.sources.items() if src == "composite"]
    assert composite, "the reference backend relies on some composite kernels"
    for op in composite:
        assert getattr(table, op).__func__ is getattr(Backend, op)


@pytest.mark.parametrize("device_type", ["cpu", "ref"])
def test_tables_are_resolved_once_and_cached(device_type):
    reg = get_registry()
    table = reg.table(device_type)
    assert reg.table(device_type) is table
    t = plugrad.ones(2, device=device_type)
    assert t._k is table and (t * 2)._k is table
    assert table.mul == table.backend.mul  # a plain attribute: no dispatch left per op


# ---------------------------------------------------------------- a third-party plugin
def test_fake_third_party_backend(fake):
    reg = get_registry()
    assert reg.backends["fake"] is fake.backends[0] and reg.origins["fake"] == "plugin"
    x = plugrad.tensor([1., 2.], device="fake", requires_grad=True)
    assert repr(x) == "tensor([1., 2.], device='fake', requires_grad=True)"
    (x * x).sum().backward()
    assert x.grad.device == "fake" and x.grad.tolist() == [2., 4.]
    assert x.detach().to("cpu").device == "cpu"
    with pytest.raises(plugrad.DeviceError, match="found at least two devices, fake and cpu"):
        x + plugrad.ones(2)


def test_unregister_removes_the_device(fake):
    reg = get_registry()
    t = plugrad.ones(2, device="fake")
    reg.unregister_plugin(fake)
    assert "fake" not in reg.backends and "fake" not in reg.origins
    with pytest.raises(BackendError, match="no backend serves device type 'fake' \\(registered "
                                           "device types: cpu, cuda, (.*, )?ref") as info:
        plugrad.ones(2, device="fake")
    assert "fake," not in str(info.value) and "fake)" not in str(info.value)
    assert (t + 1).tolist() == [2., 2.]  # tensors made before keep working
    with pytest.raises(BackendError, match="is not registered"):
        reg.unregister_plugin(fake)


def test_registering_rebuilds_tables(fake):
    reg = get_registry()
    before = reg.table("cpu")
    kernels = KernelPlugin()
    reg.register_plugin(kernels, name="exp-kernels")
    try:
        table = reg.table("fake")
        assert reg.table("cpu") is not before
        assert table.sources["exp"] == "exp-kernels" and table.sources["log"] == "fake-numpy"
        assert plugrad.ones(3, device="fake").exp().tolist() == pytest.approx([2.718281828] * 3)
        assert kernels.kernel_calls == 1
    finally:
        reg.unregister_plugin("exp-kernels")
    assert reg.table("fake").sources["exp"] == "fake-numpy"


class _Broken(FakeBackend):
    contract_version = 0


class _Lacking(FakeBackend):
    """Made concrete, then marked as lacking primitives (as a half-written subclass would be)."""


@pytest.mark.parametrize("backend, message", [
    (object(), "is not a plugrad.backends.Backend"),
    (_Broken("old"), "backend 'old-numpy' was written for contract version 0, this plugrad "
                     "implements version 1"),
    (FakeBackend("cpu"), "device type 'cpu' is already served by backend 'numpy' \\(built-in\\)"),
])
def test_bad_backends_are_refused_and_rolled_back(backend, message):
    reg = get_registry()
    plugin = FakePlugin(FakeBackend("fine"), backend)
    with pytest.raises(BackendError, match=message):
        reg.register_plugin(plugin)
    assert not reg.pm.is_registered(plugin) and "fine" not in reg.backends
    assert reg.backends["cpu"].name == "numpy"


def test_missing_primitives_are_named(monkeypatch):
    backend = _Lacking("lacking")
    monkeypatch.setattr(_Lacking, "__abstractmethods__", frozenset({"exp", "log"}))
    with pytest.raises(BackendError, match="backend 'lacking-numpy' lacks required primitives: "
                                           "exp, log"):
        get_registry().add_backend(backend)
    assert "lacking" not in get_registry().backends


# ---------------------------------------------------------------- no pluggy on the hot path
def test_no_hook_call_per_op(device, monkeypatch, fake):
    """Ops and backward never go through pluggy: count every way a hook could run."""
    reg = get_registry()
    kernels = KernelPlugin()
    reg.register_plugin(kernels, name="counting-kernels")
    try:
        calls = []
        original_call = pluggy.HookCaller.__call__

        def counting_call(self, *args, **kwargs):
            calls.append(self.name)
            return original_call(self, *args, **kwargs)
        monkeypatch.setattr(pluggy.HookCaller, "__call__", counting_call)
        original_exec = reg.pm._inner_hookexec
        monkeypatch.setattr(reg.pm, "_inner_hookexec",
                            lambda *a, **k: calls.append("exec") or original_exec(*a, **k))
        for dev in (device, "fake"):
            reg.table(dev)  # built now: the contributed-kernel hook runs here, once
        built = kernels.hook_calls
        assert built >= 1
        for dev in (device, "fake"):
            x = plugrad.tensor([[1., 2.], [3., 4.]], device=dev, requires_grad=True)
            y = ((x @ x).exp() * 2 - x.sum(0)).relu().mean()
            y.backward()
            z = plugrad.zeros(2, device=dev) + plugrad.arange(2., device=dev)
            assert x.grad is not None and z.tolist() == [0., 1.]
        assert calls == [] and kernels.hook_calls == built
        assert kernels.kernel_calls >= 1  # the contributed kernel ran, without the hook
    finally:
        reg.unregister_plugin("counting-kernels")


# ---------------------------------------------------------------- entry points
class _Dist:
    def __init__(self, name):
        self.name = name


class _EntryPoint:
    def __init__(self, name, dist, load):
        self.name, self.dist, self._load = name, _Dist(dist), load

    def load(self):
        return self._load()


def _missing():
    raise ImportError("No module named 'broken_backend'")


@pytest.fixture
def entry_points(monkeypatch):
    """Fake the ``plugrad.backends`` entry points the registry module sees."""
    found = []
    asked = []

    def fake_entry_points(group=None):
        asked.append(group)
        return list(found)
    monkeypatch.setattr(registry_module.importlib.metadata, "entry_points", fake_entry_points)
    monkeypatch.delenv("PLUGRAD_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.delenv("PLUGRAD_BLOCK_PLUGINS", raising=False)
    return found, asked


def test_failing_entry_point_warns_and_is_reported(entry_points):
    found, asked = entry_points
    found.append(_EntryPoint("broken", "broken-dist", _missing))
    found.append(_EntryPoint("good", "good-dist",
                             lambda: FakePlugin(FakeBackend("third"))))
    reg = Registry()
    assert asked == []  # lazily: not at construction
    assert reg.table("cpu").name == "numpy" and asked == []
    with pytest.warns(RuntimeWarning, match="plugrad: backend plugin 'broken' from broken-dist "
                                            "failed to load and was skipped: ImportError: No "
                                            "module named 'broken_backend'"):
        table = reg.table("third")
    assert asked == ["plugrad.backends"]
    assert table.name == "third-numpy"
    assert reg.origins["third"] == "good-dist (entry point good)"
    assert reg.failures == [("broken", "broken-dist",
                             "ImportError: No module named 'broken_backend'")]
    reg.load_entry_points()  # once only
    assert asked == ["plugrad.backends"] and len(reg.failures) == 1


def test_entry_point_whose_backend_is_refused_is_reported(entry_points):
    found, _ = entry_points
    found.append(_EntryPoint("thief", "thief-dist", lambda: FakePlugin(FakeBackend("cpu"))))
    reg = Registry()
    with pytest.warns(RuntimeWarning, match="'thief' from thief-dist failed to load"):
        reg.load_entry_points()
    assert reg.failures[0][2].startswith("BackendError: device type 'cpu' is already served")
    assert not reg.pm.has_plugin("thief") and reg.backends["cpu"].name == "numpy"


def test_autoload_can_be_disabled_and_plugins_blocked(entry_points, monkeypatch):
    found, asked = entry_points
    found.append(_EntryPoint("good", "good-dist", lambda: FakePlugin(FakeBackend("third"))))
    monkeypatch.setenv("PLUGRAD_DISABLE_PLUGIN_AUTOLOAD", "1")
    reg = Registry()
    with pytest.raises(BackendError, match="no backend serves device type 'third'"):
        reg.table("third")
    assert asked == []
    monkeypatch.delenv("PLUGRAD_DISABLE_PLUGIN_AUTOLOAD")
    monkeypatch.setenv("PLUGRAD_BLOCK_PLUGINS", "other, good")
    reg = Registry()
    with pytest.raises(BackendError, match="no backend serves device type 'third'"):
        reg.table("third")
    assert asked == ["plugrad.backends"] and reg.failures == []


@pytest.mark.skipif(plugrad.cuda.is_available(), reason="CUDA is available here")
def test_unavailable_backend_says_why():
    with pytest.raises(BackendError, match="device type 'cuda' \\(backend 'cupy'\\) is not "
                                           "available here: CuPy is not installed"):
        get_registry().table("cuda")


def test_entry_point_for_an_already_registered_plugin_is_skipped(entry_points):
    import plugrad.backends.numpy as numpy_plugin
    found, _ = entry_points
    found.append(_EntryPoint("numpy", "plugrad", lambda: numpy_plugin))
    reg = Registry()
    reg.load_entry_points()
    assert reg.failures == [] and reg.origins["cpu"] == "built-in"
