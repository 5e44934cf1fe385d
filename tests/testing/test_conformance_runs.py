"""The conformance suite passes on every built-in CPU backend (``cpu``, ``ref``).

It runs as a user would run it: ``pytest --pyargs plugrad.testing.conformance
--plugrad-backend NAME`` in a subprocess from an empty temporary folder, which also proves
that the pytest plugin (entry point ``pytest11``) and the suite work from an installed
plugrad anywhere. The backends run in parallel subprocesses, started together.
"""
import os
import subprocess
import sys

import pytest

from plugrad.core.registry import get_registry

_REG = get_registry()
#: Built-in backends that run on the host. Third-party plugins installed in the environment
#: (e.g. an example package) are not ours to gate on; run the suite on them by name.
CPU_BACKENDS = [t.device_type for t in _REG.available_tables()
                if not t.device_type.startswith("cuda")
                and _REG.origins.get(t.device_type) == "built-in"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One suite subprocess per CPU backend, all started before the first is awaited."""
    procs = {}
    for device in CPU_BACKENDS:
        cwd = tmp_path_factory.mktemp(f"conformance-{device}")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        env.pop("PLUGRAD_DEVICE", None)
        procs[device] = subprocess.Popen(
            [sys.executable, "-m", "pytest", "--pyargs", "plugrad.testing.conformance",
             "--plugrad-backend", device, "-q", "-p", "no:cacheprovider", "-o",
             "addopts=", "--rootdir", str(cwd)],
            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    yield procs
    for p in procs.values():
        if p.poll() is None:
            p.kill()


@pytest.mark.parametrize("device", CPU_BACKENDS)
def test_conformance_suite_passes(runs, device):
    out, _ = runs[device].communicate(timeout=900)
    tail = "\n".join(out.splitlines()[-60:])
    assert runs[device].returncode == 0, f"conformance suite failed on {device}:\n{tail}"
    assert "plugrad conformance: per op and backend" in out  # the plugin's per-op report
    assert f"exp                          {device}" in out or f"exp " in out
    assert "ops failing: 0" in out
    assert " passed" in out and " failed" not in out.splitlines()[-1]


def test_unknown_backend_is_a_usage_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "--pyargs",
                           "plugrad.testing.conformance", "--plugrad-backend", "nosuch", "-q",
                           "-p", "no:cacheprovider"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode != 0
    assert "nosuch" in proc.stderr + proc.stdout
    assert "no registered backend" in proc.stderr + proc.stdout
