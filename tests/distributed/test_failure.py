"""A rank that fails mid-run ends the whole job with a non-zero status, quickly."""
import pytest

from .launch import run

TIMEOUT = 60


@pytest.mark.timeout(TIMEOUT + 30)
@pytest.mark.parametrize("mode,message", [
    ("raise", "rank 1 raised an uncaught RuntimeError"),
    ("exit", "rank 1 called sys.exit(3)"),
    ("crash", None),  # os._exit: no Python handler runs; mpiexec notices the dead rank
])
def test_failing_rank_aborts_the_job(mode, message):
    job = run("fail.py", mode, n=2, timeout=TIMEOUT)
    assert not job.timed_out, f"job hung for {TIMEOUT}s\n{job.stdout[-2000:]}\n{job.stderr[-2000:]}"
    assert job.seconds < TIMEOUT / 2
    assert job.returncode != 0
    assert "rank 0 finished all steps" not in job.stdout
    if message is not None:
        assert message in job.stderr, job.stderr[-3000:]
        assert "injected failure" in job.stderr or mode != "raise"
