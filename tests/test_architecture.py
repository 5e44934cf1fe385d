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
    """Nor ml_dtypes (about a second to import: it took ``import plugrad`` from 0.2 s to 1 s
    once) nor the nn layer: they load on first use."""
    code = ("import sys, plugrad; "
            "print('cupy' in sys.modules, 'plugrad.nn' in sys.modules, "
            "'ml_dtypes' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "False"]


def _deferred_imports(root):
    """``(file, line, statement)`` of each import inside a function under ``root``."""
    import ast
    found = []
    for path in sorted(root.rglob("*.py")):
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found += [(path.name, s.lineno, ast.unparse(s)) for s in ast.walk(fn)
                          if isinstance(s, (ast.Import, ast.ImportFrom))]
    return found


def test_the_core_defers_imports_only_for_optional_or_costly_dependencies():
    """A deferred import hides a layer circle as easily as it saves start-up time: the core
    keeps five, each for a real reason (pluggy and the plugin hooks pull in
    importlib.metadata, ~20 ms, so the registry loads them on first use; safetensors only
    for save/load; ml_dtypes only for bfloat16 on the host)."""
    import pathlib

    import plugrad
    core = pathlib.Path(plugrad.__file__).parent / "core"
    found = _deferred_imports(core)
    assert len(found) <= 5, found
    assert {stmt.split()[1] for _, _, stmt in found} <= {
        "pluggy", "plugrad.backends", "importlib.metadata", "safetensors.numpy", "ml_dtypes"}, found
