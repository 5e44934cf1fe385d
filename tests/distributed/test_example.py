"""examples/ddp_digits.py trains under mpiexec -n 2 and reaches a useful accuracy."""
import re

import pytest

from .launch import ROOT, run

pytestmark = pytest.mark.timeout(240)


def test_ddp_digits_example_trains():
    job = run(str(ROOT / "examples" / "ddp_digits.py"), "--epochs", "4", n=2, timeout=180)
    assert not job.timed_out and job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    final = re.search(r"final test accuracy ([0-9.]+) .* replicas identical: (\w+)", job.stdout)
    assert final, job.stdout
    assert float(final.group(1)) > 0.8
    assert final.group(2) == "True"
    assert job.stdout.count("epoch ") == 4  # only rank 0 prints progress
