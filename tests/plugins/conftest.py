"""Fake *installed* plugin distributions for the plugin tests.

``site`` builds a directory that looks like site-packages to ``importlib.metadata``: for
each distribution a ``NAME-VERSION.dist-info`` folder with ``METADATA`` and
``entry_points.txt`` (group ``plugrad.backends``), next to the plugin's module. A
subprocess started with that directory first on ``PYTHONPATH`` sees the plugins exactly as
it would see pip-installed ones, so the real entry-point machinery of the registry runs.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


class Site:
    """A temporary site directory holding fake installed plugin distributions."""

    def __init__(self, root):
        self.root = root

    def add(self, dist: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
        """Install distribution ``dist``: ``entry_points`` maps entry-point name to module,
        ``modules`` maps module name to its source."""
        for module, source in modules.items():
            (self.root / f"{module}.py").write_text(textwrap.dedent(source))
        info = self.root / f"{dist.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
        (info / "entry_points.txt").write_text(f"[plugrad.backends]\n{lines}")

    def env(self, **extra) -> dict:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PLUGRAD_DEVICE", "PLUGRAD_DISABLE_PLUGIN_AUTOLOAD",
                            "PLUGRAD_BLOCK_PLUGINS")}
        env["PYTHONPATH"] = os.pathsep.join([str(self.root), env.get("PYTHONPATH", "")])
        env.update(extra)
        return env

    def run(self, *args, cwd=None, timeout=300, **extra) -> subprocess.CompletedProcess:
        """``python ARGS`` with this site first on the path; ``extra`` sets env variables."""
        return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                              env=self.env(**extra), cwd=cwd or self.root, timeout=timeout)

    def python(self, code: str, **extra) -> subprocess.CompletedProcess:
        out = self.run("-c", textwrap.dedent(code), **extra)
        assert out.returncode == 0, f"subprocess failed:\n{out.stdout}\n{out.stderr}"
        return out


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    return Site(root)


#: Source of a good plugin module: NumPy arrays on device type ``{device}``.
GOOD_PLUGIN = '''
from plugrad.backends.hooks import hookimpl
from plugrad.backends.numpy import NumPyBackend


class Backend_(NumPyBackend):
    def __init__(self):
        super().__init__()
        self.name, self.device_type = "{name}", "{device}"


@hookimpl
def plugrad_backends():
    return [Backend_()]
'''


def good_plugin(name: str, device: str) -> str:
    return GOOD_PLUGIN.format(name=name, device=device)


@pytest.fixture
def good_plugin_source():
    return good_plugin
