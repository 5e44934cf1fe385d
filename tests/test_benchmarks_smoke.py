"""Smoke tests of the benchmark tooling: it runs, prints, writes JSON, and asv accepts it.

Nothing here measures or asserts speed.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_compare_quick_prints_table_and_writes_json(tmp_path):
    out = tmp_path / "compare.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "compare.py"), "--quick", "--rounds", "1",
         "--celsius-steps", "50", "--check", "--only", "tiny_op,mlp_step,celsius,memory",
         "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for word in ("workload", "plugrad", "numpy", "plugrad/numpy", "tiny_op", "mlp_step",
                 "celsius_step", "peak_rss", "BLAS"):
        assert word in proc.stdout, proc.stdout
    data = json.loads(out.read_text())
    names = {r["name"]: r for r in data["results"]}
    assert set(names) == {"tiny_op", "mlp_step", "celsius_step", "peak_rss"}
    for name in ("tiny_op", "mlp_step", "celsius_step"):
        assert names[name]["values"]["plugrad"] > 0
        assert names[name]["values"]["numpy"] > 0
    assert names["peak_rss"]["unit"] == "MiB"
    assert data["environment"]["numpy_blas"]


def test_asv_check_discovers_the_suites(tmp_path):
    if shutil.which("asv") is None:
        pytest.fail("asv is not installed: it is a test dependency "
                    "(pip install -e '.[test]' installs it)")
    env = dict(os.environ, HOME=str(tmp_path))       # asv machine writes ~/.asv-machine.json
    machine = subprocess.run(["asv", "machine", "--yes", "--machine", "smoke-test"],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert machine.returncode == 0, machine.stdout + machine.stderr
    proc = subprocess.run(["asv", "check", "--python=same"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No problems found" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
