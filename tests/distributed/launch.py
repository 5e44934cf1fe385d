"""Start a small MPI job on loopback with the ``mpiexec`` that the mpich wheel installs.

mpich is a test dependency (``pip install -e '.[test]'``): if ``mpiexec`` is missing or
cannot start two processes, the tests fail with a message saying so; they never skip.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKERS = Path(__file__).resolve().parent / "workers"

# one machine, loopback only: fork the ranks (no ssh), TCP over `lo` for libfabric/Hydra
MPI_ENV = {"HYDRA_LAUNCHER": "fork", "HYDRA_IFACE": "lo", "FI_PROVIDER": "tcp",
           "FI_TCP_IFACE": "lo"}


def mpiexec() -> str:
    """The mpiexec next to this Python (where the mpich wheel puts it), else on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec")
    if found is None:
        pytest.fail("mpiexec not found next to sys.executable nor on PATH; the distributed "
                    "tests need MPICH and mpi4py: pip install -e '.[test]'")
    return found


@dataclass
class Job:
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool


def run(worker: str, *args: str, n: int = 2, timeout: float = 120, env: dict | None = None,
        out_dir: Path | None = None) -> Job:
    """Run ``mpiexec -n N python workers/<worker> args...``; kill the whole process group
    if it outlives ``timeout`` seconds."""
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), str(WORKERS), os.environ.get("PYTHONPATH", "")])}
    for k, v in MPI_ENV.items():
        full_env.setdefault(k, v)
    if out_dir is not None:
        full_env["PLUGRAD_TEST_OUT"] = str(out_dir)
    full_env.update(env or {})
    cmd = [mpiexec(), "-n", str(n), sys.executable, str(WORKERS / worker), *args]
    with _one_job_at_a_time():
        return _run(cmd, full_env, timeout)


@contextlib.contextmanager
def _one_job_at_a_time():
    """Under pytest-xdist two test files may start MPI jobs at once; their ranks then share
    the cores and the loopback, and a crash test could wait on the other job's ranks. A
    lock file makes the jobs of every worker take turns (the timeout counts from the start
    of a job's own turn)."""
    with open(os.path.join(tempfile.gettempdir(), "plugrad-tests-mpi.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run(cmd, full_env, timeout) -> Job:
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return Job(proc.returncode, out, err, time.monotonic() - start, timed_out)


def results(job: Job, out_dir: Path, n: int = 2) -> list[dict]:
    """The JSON each rank saved; fails with the job's output if a rank did not finish."""
    import json
    files = [out_dir / f"rank{r}.json" for r in range(n)]
    if job.timed_out or job.returncode != 0 or not all(f.exists() for f in files):
        pytest.fail(f"MPI job failed (returncode={job.returncode}, timed_out={job.timed_out}, "
                    f"{job.seconds:.1f}s)\n--- stdout\n{job.stdout[-4000:]}\n--- stderr\n"
                    f"{job.stderr[-4000:]}")
    return [json.loads(f.read_text()) for f in files]
