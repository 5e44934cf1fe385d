"""Bad third-party plugins, installed for real (a dist-info with ``entry_points.txt`` on the
path of a subprocess): each is refused or reported with its name, its distribution and the
reason, and plugrad keeps working."""
from __future__ import annotations

import json
import re

from plugrad.core.registry import BUILTIN_PLUGINS

BROKEN_IMPORT = '''
import torch_xla_does_not_exist  # the plugin's own dependency is missing
'''

UNINSTANTIABLE = '''
"""A backend class that forgot two primitives: Python refuses to instantiate it."""
from plugrad.backends.contract import Backend
from plugrad.backends.hooks import hookimpl


class HalfBackend(Backend):
    name, device_type = "half", "half"


for _n in Backend.__abstractmethods__ - {"exp", "matmul"}:
    setattr(HalfBackend, _n, lambda self, *a, **k: None)
HalfBackend.__abstractmethods__ = frozenset({"exp", "matmul"})


@hookimpl
def plugrad_backends():
    return [HalfBackend()]
'''

FUTURE_CONTRACT = '''
from plugrad.backends.hooks import hookimpl
from plugrad.backends.numpy import NumPyBackend


class Future(NumPyBackend):
    contract_version = 99

    def __init__(self):
        super().__init__()
        self.name, self.device_type = "future-numpy", "future"


@hookimpl
def plugrad_backends():
    return [Future()]
'''

#: Runs in the subprocess: trigger loading with an unknown device, record warnings, and show
#: that plugrad still works.
PROBE = '''
import json, warnings
import plugrad
from plugrad.core.registry import get_registry
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        plugrad.ones(1, device="nosuchdevice")
    except plugrad.BackendError as exc:
        lookup_error = str(exc)
reg = get_registry()
x = plugrad.tensor([1., 2.], requires_grad=True)
(x * x).sum().backward()
print(json.dumps({
    "warnings": [(w.category.__name__, str(w.message)) for w in caught],
    "failures": reg.failures,
    "backends": {d: [b.name, reg.origins[d]] for d, b in reg.backends.items()},
    "grad": x.grad.tolist(),
    "lookup_error": lookup_error,
}))
'''


def _probe(site, **env):
    out = site.python(PROBE, **env)
    return json.loads(out.stdout.splitlines()[-1])


def test_import_error_is_warned_listed_and_harmless(site, good_plugin_source):
    site.add("plugrad-xla", {"xla": "xla_backend"}, {"xla_backend": BROKEN_IMPORT})
    site.add("plugrad-good", {"good": "good_backend"},
             {"good_backend": good_plugin_source("good-numpy", "good")})
    got = _probe(site)
    assert got["grad"] == [2.0, 4.0]  # plugrad keeps working
    messages = [m for c, m in got["warnings"] if c == "RuntimeWarning"]
    assert messages == ["plugrad: backend plugin 'xla' from plugrad-xla failed to load and was "
                        "skipped: ModuleNotFoundError: No module named "
                        "'torch_xla_does_not_exist'"]
    assert got["failures"] == [["xla", "plugrad-xla",
                                "ModuleNotFoundError: No module named "
                                "'torch_xla_does_not_exist'"]]
    # the good plugin next to it is loaded, and the lookup error lists what is there
    assert got["backends"]["good"] == ["good-numpy", "plugrad-good (entry point good)"]
    assert re.search(r"registered device types: cpu, cuda, good, (\w+, )*ref\b",
                     got["lookup_error"]), got["lookup_error"]
    assert "plugins that failed to load: 'xla' from plugrad-xla: ModuleNotFoundError" in \
        got["lookup_error"]
    assert "'nosuchdevice'" in got["lookup_error"]

    info = site.run("-m", "plugrad", "info")
    assert info.returncode == 0, info.stderr
    assert ("failed plugins:\n  xla (from plugrad-xla): ModuleNotFoundError: No module named "
            "'torch_xla_does_not_exist'") in info.stdout
    assert re.search(r"\n  good +good-numpy +available; source: plugrad-good \(entry point "
                     r"good\)\n", info.stdout), info.stdout
    assert "RuntimeWarning" not in info.stderr


def test_missing_primitives_are_refused_with_the_list(site):
    """A backend class that leaves required primitives abstract cannot even be made: the
    plugin is reported with the names of the missing primitives, and its device is absent.
    (The registry's own check, for an instance that slipped through, is in
    tests/core/test_registry.py::test_missing_primitives_are_named.)"""
    site.add("plugrad-half", {"half": "half_backend"}, {"half_backend": UNINSTANTIABLE})
    got = _probe(site)
    [(name, dist, msg)] = got["failures"]
    assert (name, dist) == ("half", "plugrad-half")
    assert msg.startswith("TypeError: Can't instantiate abstract class HalfBackend"), msg
    assert msg.endswith("exp, matmul") or msg.endswith("'exp', 'matmul'"), msg
    assert "half" not in got["backends"]
    assert any("'half' from plugrad-half failed to load" in m for _, m in got["warnings"])


def test_duplicate_device_type_names_both_providers(site, good_plugin_source):
    site.add("plugrad-alpha", {"alpha": "alpha_backend"},
             {"alpha_backend": good_plugin_source("alpha-numpy", "dup")})
    site.add("plugrad-beta", {"beta": "beta_backend"},
             {"beta_backend": good_plugin_source("beta-numpy", "dup")})
    site.add("plugrad-thief", {"thief": "thief_backend"},
             {"thief_backend": good_plugin_source("thief-numpy", "cpu")})
    got = _probe(site)
    winner, origin = got["backends"]["dup"]
    loser = "beta" if winner == "alpha-numpy" else "alpha"
    failures = {name: (dist, msg) for name, dist, msg in got["failures"]}
    assert set(failures) == {loser, "thief"}
    assert failures[loser] == (
        f"plugrad-{loser}",
        f"BackendError: device type 'dup' is already served by backend {winner!r} "
        f"({origin}); '{loser}-numpy' (plugrad-{loser} (entry point {loser})) cannot take it")
    assert failures["thief"][1] == (
        "BackendError: device type 'cpu' is already served by backend 'numpy' (built-in); "
        "'thief-numpy' (plugrad-thief (entry point thief)) cannot take it")
    assert got["backends"]["cpu"] == ["numpy", "built-in"]


def test_incompatible_contract_version_names_both_versions(site):
    site.add("plugrad-future", {"future": "future_backend"}, {"future_backend": FUTURE_CONTRACT})
    got = _probe(site)
    assert got["failures"] == [["future", "plugrad-future",
                                "BackendError: backend 'future-numpy' was written for contract "
                                "version 99, this plugrad implements version 1"]]
    assert "future" not in got["backends"]


# ---------------------------------------------------------------- switches
_LOADED = '''
import json, sys, plugrad
from plugrad.core.registry import get_registry
try:
    plugrad.ones(1, device="p3")
except plugrad.BackendError:
    pass
reg = get_registry()
print(json.dumps({"imported": sorted(m for m in sys.modules if m.startswith("plug_p")),
                  "devices": sorted(d for d in reg.backends if reg.origins[d] == "built-in"
                                    or reg.origins[d][:10] in ("plugrad-p1", "plugrad-p2",
                                                               "plugrad-p3"))}))
'''


def _three_plugins(site, good_plugin_source):
    for n in (1, 2, 3):
        site.add(f"plugrad-p{n}", {f"p{n}": f"plug_p{n}"},
                 {f"plug_p{n}": good_plugin_source(f"p{n}-numpy", f"p{n}")})


def test_disable_autoload(site, good_plugin_source):
    _three_plugins(site, good_plugin_source)
    got = json.loads(site.python(_LOADED).stdout)
    assert got == {"imported": ["plug_p1", "plug_p2", "plug_p3"],
                   "devices": ["cpu", "cuda", "p1", "p2", "p3", "ref"]}
    got = json.loads(site.python(_LOADED, PLUGRAD_DISABLE_PLUGIN_AUTOLOAD="1").stdout)
    assert got == {"imported": [], "devices": ["cpu", "cuda", "ref"]}
    got = json.loads(site.python(_LOADED, PLUGRAD_DISABLE_PLUGIN_AUTOLOAD="0").stdout)
    assert got["imported"] == ["plug_p1", "plug_p2", "plug_p3"]


def test_block_plugins(site, good_plugin_source):
    _three_plugins(site, good_plugin_source)
    got = json.loads(site.python(_LOADED, PLUGRAD_BLOCK_PLUGINS="p1, p3,unknown").stdout)
    assert got == {"imported": ["plug_p2"], "devices": ["cpu", "cuda", "p2", "ref"]}
    info = site.run("-m", "plugrad", "info", PLUGRAD_BLOCK_PLUGINS="p1,p3")
    assert re.search(r"p2 +p2-numpy", info.stdout) and "p1-numpy" not in info.stdout
    assert info.stdout.rstrip().endswith("failed plugins: none")


# ---------------------------------------------------------------- laziness
_IMPORT_ONLY = '''
import importlib.metadata, json, sys
scans = []
_orig = importlib.metadata.entry_points
importlib.metadata.entry_points = lambda *a, **k: scans.append(k.get("group")) or _orig(*a, **k)
import plugrad
x = plugrad.randn(3, 2) @ plugrad.ones(2, device="cpu")  # built-in devices: no plugin needed
y = plugrad.ones(2, device="ref").sum()
after_import = {"plugins": sorted(m for m in sys.modules if m.startswith("lazy_")),
                "scans": list(scans)}
z = plugrad.ones(2, device="lazy7")
print(json.dumps({"after_import": after_import,
                  "after_lookup": sorted(m for m in sys.modules if m.startswith("lazy_")),
                  "scans": scans, "z": z.tolist()}))
'''


def test_import_plugrad_imports_no_plugin(site, good_plugin_source):
    """20 installed plugins: ``import plugrad`` (and built-in devices) neither imports any of
    them nor even scans the entry points, so its cost does not grow with their number; the
    first lookup of an unknown device loads them all, once."""
    for n in range(20):
        site.add(f"plugrad-lazy{n}", {f"lazy{n}": f"lazy_{n}"},
                 {f"lazy_{n}": good_plugin_source(f"lazy{n}-numpy", f"lazy{n}")})
    got = json.loads(site.python(_IMPORT_ONLY).stdout.splitlines()[-1])
    assert got["after_import"] == {"plugins": [], "scans": []}
    assert got["after_lookup"] == sorted(f"lazy_{n}" for n in range(20))
    assert got["scans"] == ["plugrad.backends"] and got["z"] == [1.0, 1.0]


def test_builtins_are_not_entry_points_that_could_be_blocked(site):
    """Blocking or disabling third-party plugins never removes a built-in device."""
    got = json.loads(site.python(_LOADED, PLUGRAD_BLOCK_PLUGINS=",".join(BUILTIN_PLUGINS)
                                 + ",numpy,reference,cupy").stdout)
    assert got["devices"] == ["cpu", "cuda", "ref"]
    got = json.loads(site.python(_LOADED, PLUGRAD_DISABLE_PLUGIN_AUTOLOAD="1").stdout)
    assert got["devices"] == ["cpu", "cuda", "ref"]
