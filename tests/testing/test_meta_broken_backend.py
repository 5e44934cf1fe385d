"""The conformance suite catches a broken backend.

A backend that is NumPy with two planted defects -- ``exp`` off by 1e-3 and a ``sum`` that
ignores ``keepdims`` -- is registered through the registry (as a third-party plugin would
be), the suite is run on it in-process, and the failing test ids must name both ops.
"""
import numpy as np
import pytest

from plugrad.backends.hooks import hookimpl
from plugrad.backends.numpy import NumPyBackend
from plugrad.core.registry import get_registry


class BrokenBackend(NumPyBackend):
    def __init__(self):
        super().__init__()
        self.name, self.device_type = "broken", "broken"

    def exp(self, x):
        return np.exp(x) + np.asarray(1e-3, dtype=x.dtype)

    def sum(self, x, axes, keepdims):
        return super().sum(x, axes, False)


class BrokenPlugin:
    @hookimpl
    def plugrad_backends(self):
        return [BrokenBackend()]


class Collector:
    def __init__(self):
        self.failed, self.passed = [], []

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            (self.failed if report.failed else self.passed).append(report.nodeid)


@pytest.fixture
def broken_backend():
    reg = get_registry()
    plugin = BrokenPlugin()
    reg.register_plugin(plugin, name="broken-backend-for-meta-test")
    try:
        yield "broken"
    finally:
        reg.unregister_plugin(plugin)
    assert "broken" not in reg.backends


def test_suite_catches_planted_defects(broken_backend, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    collector = Collector()
    code = pytest.main(["--pyargs", "plugrad.testing.conformance", "--plugrad-backend",
                        broken_backend, "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                        "--rootdir", str(tmp_path),
                        "-k", "exp or sum or softmax or abs or reshape"],
                       plugins=[collector])
    assert code == pytest.ExitCode.TESTS_FAILED
    failed = collector.failed
    # each defect is caught at the kernel level and through the public op
    assert any("test_kernel_forward[exp-broken-" in f for f in failed), failed
    assert any("test_forward[exp-broken-" in f for f in failed), failed
    assert any("test_kernel_forward[sum-broken-" in f for f in failed), failed
    assert any("test_forward[sum-broken-" in f for f in failed), failed
    # and the healthy kernels still pass: failures point at the defects, not everywhere
    # (public ops may fail through sum, which gradients use, so look at the kernels)
    healthy = ("test_kernel_forward[abs-broken-", "test_kernel_forward[reshape-broken-",
               "test_kernel_forward[softmax-broken-")
    assert all(any(h in p for p in collector.passed) for h in healthy)
    assert not any(h in f for f in failed for h in healthy), failed
