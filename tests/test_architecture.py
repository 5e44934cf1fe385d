"""The layer rules of DESIGN.md, checked by import-linter's contracts in pyproject.toml."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold():
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.fail("import-linter is part of the test extra; install with pip install -e '.[test]'")
    result = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_plugrad_does_not_import_cupy_or_plugins():
    code = ("import sys, plugrad; "
            "print('cupy' in sys.modules, 'plugrad.nn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
