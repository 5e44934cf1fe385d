"""Plugin failures stay contained and named (installed for real, run in subprocesses).

A plugin whose ``is_available()`` raises, or that raises ``SystemExit`` while it is
imported, never breaks ``import plugrad``, ``python -m plugrad info`` or the conformance
suite's collection for other backends; the errors users meet later name the plugin and
why it failed. Malformed registrations (a hook returning None, unknown dtype names, a
declared dtype that cannot reach the host) are refused with clear messages.
"""
from __future__ import annotations

import json
import re

import pytest

import plugrad
from plugrad.backends.hooks import hookimpl
from plugrad.backends.numpy import NumPyBackend
from plugrad.core.registry import BackendError, get_registry

FLAKY = '''
from plugrad.backends.hooks import hookimpl
from plugrad.backends.numpy import NumPyBackend


class Flaky(NumPyBackend):
    def __init__(self):
        super().__init__()
        self.name, self.device_type = "flaky-numpy", "flaky"

    def is_available(self):
        raise OSError("driver library libflaky.so not found")


@hookimpl
def plugrad_backends():
    return [Flaky()]
'''

EXITS = '''
import sys
sys.exit("plugrad-gone: this platform is not supported")
'''

RETURNS_NONE = '''
from plugrad.backends.hooks import hookimpl


@hookimpl
def plugrad_backends():
    pass  # forgot the return
'''

COMPLEX = '''
from plugrad.backends.hooks import hookimpl
from plugrad.backends.numpy import NumPyBackend


class Cplx(NumPyBackend):
    def __init__(self):
        super().__init__()
        self.name, self.device_type = "cplx-numpy", "cplx"
        self.dtypes = frozenset({"float32", "complex64"})


@hookimpl
def plugrad_backends():
    return [Cplx()]
'''

USE = '''
import json, plugrad
out = {}
for dev in ("flaky", "gone"):
    try:
        plugrad.ones(1, device=dev)
    except plugrad.BackendError as exc:
        out[dev] = [str(exc), type(exc.__cause__).__name__]
print(json.dumps(out))
'''


@pytest.fixture
def broken_site(site, good_plugin_source):
    site.add("plugrad-flaky", {"flaky": "flaky_backend"}, {"flaky_backend": FLAKY})
    site.add("plugrad-gone", {"gone": "gone_backend"}, {"gone_backend": EXITS})
    site.add("plugrad-good", {"good": "good_backend"},
             {"good_backend": good_plugin_source("good-numpy", "good")})
    return site


def test_import_and_first_use_name_the_cause(broken_site):
    got = json.loads(broken_site.python(USE).stdout.splitlines()[-1])
    flaky, cause = got["flaky"]
    assert "device type 'flaky' (backend 'flaky-numpy') is not available here: " \
           "is_available() raised OSError: driver library libflaky.so not found" in flaky
    assert cause == "OSError"
    gone, _ = got["gone"]
    assert "no backend serves device type 'gone'" in gone
    assert "plugins that failed to load: 'gone' from plugrad-gone: SystemExit: plugrad-gone: " \
           "this platform is not supported" in gone


def test_info_survives_both(broken_site):
    info = broken_site.run("-m", "plugrad", "info", "--verbose")
    assert info.returncode == 0, info.stderr
    assert re.search(r"flaky +flaky-numpy +unavailable \(is_available\(\) raised OSError: "
                     r"driver library libflaky.so not found\)", info.stdout), info.stdout
    assert re.search(r"good +good-numpy +available", info.stdout)
    assert "  gone (from plugrad-gone): SystemExit: plugrad-gone: this platform is not " \
           "supported" in info.stdout


def _suite(site, *args):
    return site.run("-m", "pytest", "--pyargs", "plugrad.testing.conformance.test_kernels",
                    "-q", "-p", "no:cacheprovider", "-o", "addopts=", *args, timeout=600)


def test_conformance_collection_for_other_backends(broken_site):
    out = _suite(broken_site, "--plugrad-backend", "good", "-k", "kernel_forward and abs")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "good" in out.stdout and " passed" in out.stdout
    out = _suite(broken_site, "-k", "kernel_forward and abs-")  # default: every usable one
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "abs (kernel)" in out.stdout and "flaky" not in out.stdout.split("per op")[-1]


def test_conformance_option_names_the_failure(broken_site):
    out = _suite(broken_site, "--plugrad-backend", "flaky")
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert "--plugrad-backend 'flaky': backend 'flaky-numpy' is not available here: " \
           "is_available() raised OSError" in text
    out = _suite(broken_site, "--plugrad-backend", "gone")
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "no registered backend has that device type or name" in text
    assert "'gone' from plugrad-gone: SystemExit" in text


def test_malformed_registrations_are_refused(site):
    site.add("plugrad-none", {"none": "none_backend"}, {"none_backend": RETURNS_NONE})
    site.add("plugrad-cplx", {"cplx": "cplx_backend"}, {"cplx_backend": COMPLEX})
    out = site.python("import json; from plugrad.core.registry import get_registry\n"
                      "r = get_registry(); r.load_entry_points(); print(json.dumps(r.failures))")
    failures = {name: msg for name, _, msg in json.loads(out.stdout.splitlines()[-1])}
    assert failures["none"] == ("BackendError: plugin 'none': its plugrad_backends() hook "
                                "returned None; it must return a list of "
                                "plugrad.backends.Backend instances")
    assert failures["cplx"].startswith("BackendError: backend 'cplx-numpy' declares unknown "
                                       "dtype names 'complex64'; dtypes must be a non-empty set "
                                       "of these names: bool, uint8,")


def test_info_aligns_long_names(site, good_plugin_source):
    site.add("plugrad-long", {"long": "long_backend"},
             {"long_backend": good_plugin_source("a-rather-long-backend-name",
                                                 "averylongdevicetype")})
    info = site.run("-m", "plugrad", "info")
    rows = [line for line in info.stdout.splitlines() if "; source:" in line]
    assert len(rows) >= 4
    starts = {line.index("available") - (2 if "unavailable" in line else 0) for line in rows}
    assert len(starts) == 1, rows
    assert len({re.match(r"  \S+ +", line).end() for line in rows}) == 1, rows


# ---------------------------------------------------------------- in process
class _Plugin:
    def __init__(self, backend):
        self.backend = backend

    @hookimpl
    def plugrad_backends(self):
        return [self.backend]


@pytest.fixture
def register():
    reg, added = get_registry(), []

    def add(backend):
        plugin = _Plugin(backend)
        reg.register_plugin(plugin, name=f"test-{backend.device_type}")
        added.append(plugin)
        return backend.device_type
    yield add
    for plugin in added:
        reg.unregister_plugin(plugin)


def test_device_index_beyond_device_count():
    assert plugrad.zeros(2, device="cpu:0").device.index == 0
    with pytest.raises(BackendError, match=r"device 'cpu:1': index 1 is out of range; backend "
                                           r"'numpy' has 1 cpu device \(indices 0..0\)"):
        plugrad.zeros(2, device="cpu:1")
    with pytest.raises(BackendError, match="device 'ref:3': index 3 is out of range"):
        plugrad.ones(2).to("ref:3")


def test_declared_dtype_that_cannot_reach_the_host(register):
    class Bf16(NumPyBackend):
        def __init__(self):
            super().__init__()
            self.name, self.device_type = "bf16-numpy", "bfsixteen"
            self.dtypes = frozenset({"float32", "bfloat16"})

        def from_numpy(self, a, dtype, device):
            if dtype == "bfloat16":
                raise TypeError("Got unsupported ScalarType BFloat16")
            return super().from_numpy(a, dtype, device)

    dev = register(Bf16())
    with pytest.raises(BackendError, match="backend 'bf16-numpy' declares dtype 'bfloat16' but "
                                           "cannot carry it to the host: .*TypeError: Got "
                                           "unsupported ScalarType BFloat16.*float32"):
        plugrad.ones(2, device=dev)


def _f32(dtype):
    return "float32" if dtype == "bfloat16" else dtype


def test_bfloat16_crossing_as_float32_is_accepted(register):
    class Bf16(NumPyBackend):
        """bfloat16 held as float32 values rounded to 8 significant bits (a toy)."""

        def __init__(self):
            super().__init__()
            self.name, self.device_type = "bf16-ok", "bfok"
            self.dtypes = frozenset({"float32", "bfloat16"})

        def from_numpy(self, a, dtype, device):
            return super().from_numpy(a, _f32(dtype), device)

        def full(self, shape, value, dtype, device):
            return super().full(shape, value, _f32(dtype), device)

    dev = register(Bf16())
    t = plugrad.ones(3, dtype=plugrad.bfloat16, device=dev)
    assert t.tolist() == [1.0, 1.0, 1.0] and "bfloat16" in str(t)
