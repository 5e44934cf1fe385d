"""Helpers for running programs through ``python -m plugrad run`` in a fresh interpreter."""
import os
import subprocess
import sys
import textwrap

import pytest


def run_plugrad(args, cwd, env=None, timeout=120):
    """``python -m plugrad ARGS`` in ``cwd``; returns the CompletedProcess (text)."""
    full_env = dict(os.environ)
    for var in ("PLUGRAD_TORCH_ALIAS", "PLUGRAD_DEVICE"):
        full_env.pop(var, None)
    full_env.setdefault("OPENBLAS_NUM_THREADS", "1")
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "plugrad", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def script(tmp_path):
    """Write a program into ``tmp_path``; returns its path."""
    def write(source, name="prog.py"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(source))
        return path
    return write
