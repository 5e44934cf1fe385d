"""Kernels contributed to another backend (``plugrad_kernels``): pluggy's ordering decides
which plugin's kernel serves an op, ``info --verbose`` shows it, and the conformance suite
catches a contributed or native kernel that returns the wrong shape."""
from __future__ import annotations

import numpy as np
import pytest

import plugrad
from plugrad.__main__ import info
from plugrad.backends.hooks import hookimpl
from plugrad.core.registry import get_registry


def kernel_plugin(tag: str, calls: list, **order):
    """A plugin contributing ``exp`` to ``cpu`` with hookimpl options ``order``
    (``tryfirst=True`` / ``trylast=True`` / none), logging ``tag`` when its kernel runs."""

    class ExpKernels:
        @hookimpl(**order)
        def plugrad_kernels(self, backend):
            if backend.device_type != "cpu":
                return None

            def exp(x):
                calls.append(tag)
                return np.exp(x)
            return {"exp": exp}
    return ExpKernels()


def _cpu_section(report: str) -> str:
    return report.split("\n  cpu ")[1].split("\n  cuda ")[0]


@pytest.fixture
def register():
    """Register plugins by name for one test; they are removed afterwards."""
    reg = get_registry()
    names = []

    def add(name, plugin):
        names.append(reg.register_plugin(plugin, name=name))
    yield add
    for name in names:
        if reg.pm.has_plugin(name):
            reg.unregister_plugin(name)
    assert reg.table("cpu").sources["exp"] == "numpy"


# (registration order: (name, hookimpl options), ...), expected winner
ORDERS = [
    ([("first", {}), ("second", {})], "second"),  # plain: the later registered wins
    ([("eager", {"tryfirst": True}), ("plain", {})], "eager"),
    ([("plain", {}), ("eager", {"tryfirst": True})], "eager"),
    ([("plain", {}), ("lazy", {"trylast": True})], "plain"),
    ([("lazy", {"trylast": True}), ("plain", {})], "plain"),
    ([("lazy", {"trylast": True}), ("eager", {"tryfirst": True}), ("plain", {})], "eager"),
]


@pytest.mark.parametrize("plugins, winner", ORDERS,
                         ids=["-".join(n for n, _ in p) for p, _ in ORDERS])
def test_tryfirst_trylast_decide_the_cpu_kernel(register, plugins, winner):
    calls = []
    for name, order in plugins:
        register(name, kernel_plugin(name, calls, **order))
    table = get_registry().table("cpu")
    assert table.sources["exp"] == winner
    assert table.sources["log"] == "numpy"
    out = plugrad.tensor([0.0, 1.0]).exp()
    assert out.tolist() == pytest.approx([1.0, np.e]) and calls == [winner]

    cpu = _cpu_section(info(verbose=True))
    assert f"contributed (1): exp (from {winner})" in cpu
    native = cpu.split("native (")[1].split("\n")[0]
    assert " exp," not in native and " log," in native


def test_info_verbose_cli_shows_contributed_kernel(site):
    """The same, through ``python -m plugrad info --verbose`` with an installed plugin."""
    site.add("plugrad-fastexp", {"fastexp": "fastexp_plugin"}, {"fastexp_plugin": '''
        import numpy as np
        from plugrad.backends.hooks import hookimpl


        @hookimpl(tryfirst=True)
        def plugrad_kernels(backend):
            if backend.device_type == "cpu":
                return {"exp": np.exp, "sigmoid": lambda x: 1 / (1 + np.exp(-x))}
        '''})
    out = site.run("-m", "plugrad", "info", "--verbose")
    assert out.returncode == 0, out.stderr
    cpu = _cpu_section(out.stdout)
    assert "contributed (2): exp (from fastexp), sigmoid (from fastexp)" in cpu
    native = cpu.split("native (")[1].split("\n")[0].split(": ")[1].split(", ")
    assert "exp" not in native and "sigmoid" not in native and "log" in native


# ---------------------------------------------------------------- conformance catches it
WRONG_SHAPE = '''
"""Two cpu-derived backends: ``good`` is NumPy as is; ``bad``'s ``add`` returns a
wrongly shaped array (transposed for 2-D results, flattened otherwise)."""
import numpy as np
from plugrad.backends.hooks import hookimpl
from plugrad.backends.numpy import NumPyBackend


class Good(NumPyBackend):
    def __init__(self):
        super().__init__()
        self.name, self.device_type = "good-numpy", "good"


class Bad(Good):
    def __init__(self):
        super().__init__()
        self.name, self.device_type = "bad-numpy", "bad"

    def add(self, a, b):
        out = np.add(a, b)
        return out.T if out.ndim == 2 and out.shape[0] != out.shape[1] else out.reshape(-1)


@hookimpl
def plugrad_backends():
    return [Good(), Bad()]
'''


def test_conformance_suite_fails_a_wrongly_shaped_kernel(site):
    site.add("plugrad-shapes", {"shapes": "shapes_backend"}, {"shapes_backend": WRONG_SHAPE})
    out = site.run("-m", "pytest", "--pyargs", "plugrad.testing.conformance",
                   "--plugrad-backend", "good", "--plugrad-backend", "bad",
                   "-k", "test_kernel_forward and add", "-p", "no:cacheprovider", "-q")
    text = out.stdout
    assert out.returncode == 1, text + out.stderr
    lines = {tuple(line.split()[:4]) for line in text.splitlines()}
    assert ("add", "(kernel)", "bad", "FAIL") in lines, text
    assert ("add", "(kernel)", "good", "PASS") in lines, text
    assert ("scatter_add", "(kernel)", "bad", "PASS") in lines, text
    assert "ops failing: 1: add (kernel)[bad]" in text
    assert "result shape" in text
