"""``python -m plugrad info``: versions, backends with their origin, and failed plugins."""
import os
import platform
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import plugrad
from plugrad.__main__ import main

THIRD_PARTY = textwrap.dedent('''
    """A third-party backend package: NumPy arrays on the ``tpu9`` device."""
    from plugrad.backends.hooks import hookimpl
    from plugrad.backends.numpy import NumPyBackend


    class Tpu9(NumPyBackend):
        def __init__(self):
            super().__init__()
            self.name, self.device_type = "tpu9-numpy", "tpu9"


    @hookimpl
    def plugrad_backends():
        return [Tpu9()]


    @hookimpl
    def plugrad_kernels(backend):
        if backend.device_type == "tpu9":
            return {"exp": backend.exp}
''')


@pytest.fixture
def site(tmp_path):
    """A directory holding two installed distributions: one good plugin, one broken."""
    (tmp_path / "tpu9_backend.py").write_text(THIRD_PARTY)
    for dist, ep in [("tpu9_plugin", "tpu9 = tpu9_backend"),
                     ("broken_plugin", "broken = broken_backend_missing")]:
        info = tmp_path / f"{dist}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[plugrad.backends]\n{ep}\n")
    return tmp_path


def _info(*args, path=None):
    env = dict(os.environ)
    env.pop("PLUGRAD_DEVICE", None)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-m", "plugrad", *args], capture_output=True,
                         text=True, env=env, timeout=120)
    return out


def test_info_lists_versions_and_builtin_backends():
    out = _info("info")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"plugrad {plugrad.__version__}"
    assert f"Python {platform.python_version()}" in lines[1]
    assert lines[2] == f"NumPy {np.__version__}"
    text = out.stdout
    # columns as wide as the longest names installed (here maybe array-api-strict)
    assert re.search(r"\n  cpu +numpy +available; source: built-in\n", text), text
    assert re.search(r"\n  ref +reference +available; source: built-in\n", text), text
    cuda_state = "available" if plugrad.cuda.is_available() else "unavailable \\(CuPy is not"
    assert re.search(rf"\n  cuda +cupy +{cuda_state}", text), text
    rows = [line for line in text.splitlines() if "; source:" in line]
    assert len({line.index(line.split()[2]) for line in rows}) == 1, rows  # aligned
    assert text.rstrip().endswith("failed plugins: none")
    assert "native (" not in text


def test_info_reports_third_party_and_failed_plugins(site):
    out = _info("info", "--verbose", path=site)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert re.search(r"tpu9 +tpu9-numpy +available; source: tpu9_plugin \(entry point tpu9\)",
                     text), text
    assert "failed plugins:\n  broken (from broken_plugin): ModuleNotFoundError: No module " \
           "named 'broken_backend_missing'" in text
    assert "RuntimeWarning" not in out.stderr  # listed in the report instead
    tpu9 = re.split(r"tpu9 +tpu9-numpy", text)[1]
    assert "contributed (1): exp (from tpu9)" in tpu9
    ref = re.split(r"ref +reference", text)[1].split("tpu9")[0]
    assert "native (" in ref and "composite (" in ref and "contributed (0): -" in ref
    assert " sum," in ref.split("native")[1].split("composite")[0]


def test_third_party_backend_is_usable_and_failure_warns(site):
    code = ("import warnings, plugrad\nwith warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    t = plugrad.ones(2, device='tpu9')\n"
            "print(repr(t.exp() * 2))\nprint([str(x.message) for x in w])")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site),
                                                        os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()
    assert first == "tensor([5.4366, 5.4366], device='tpu9')"
    assert "backend plugin 'broken' from broken_plugin failed to load and was skipped" in second


def test_cli_without_command_prints_usage(capsys):
    assert main([]) == 2
    assert "usage: python -m plugrad" in capsys.readouterr().out


def test_cli_in_process(capsys):
    assert main(["info"]) == 0
    assert capsys.readouterr().out.startswith(f"plugrad {plugrad.__version__}\n")
