"""examples/pytorch_style_digits.py, a plain PyTorch program, through ``python -m plugrad run``
on cpu and ref (DataLoader workers, the CUDA-or-CPU device idiom, a checkpoint round trip)."""
import re
from pathlib import Path

import pytest

from tests.programs.conftest import run_plugrad

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "pytorch_style_digits.py"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("device, args, min_accuracy", [
    ("cpu", [], 0.9),
    ("ref", ["--epochs", "2", "--subset", "100", "--hidden", "8"], 0.0)])
def test_runs_unchanged(tmp_path, device, args, min_accuracy):
    ckpt = tmp_path / "digits.pt"
    r = run_plugrad(["run", "--device", device, str(SCRIPT), *args, "--save", str(ckpt)],
                    tmp_path, timeout=280)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert f"test digits on {device}, input torch.Size([32, 64])" in out
    losses = [float(v) for v in re.findall(r"Train Epoch: \d+\tLoss: ([0-9.]+)", out)]
    assert len(losses) == (5 if device == "cpu" else 2) and losses[-1] < losses[0]
    assert "restored exactly: True" in out and ckpt.is_file()
    accuracy = float(re.search(r"final accuracy ([0-9.]+)", out).group(1))
    assert accuracy >= min_accuracy


@pytest.mark.timeout(300)
def test_torch_compile_of_the_model_gives_the_same_run(tmp_path):
    """``torch.compile(model)`` under the runner: training forwards (their outputs need a
    graph) run eagerly, the no-grad evaluation forwards are replayed; the run is the same."""
    args = ["run", "--device", "cpu", str(SCRIPT), "--epochs", "2", "--subset", "300",
            "--workers", "0"]
    plain = run_plugrad(args, tmp_path, timeout=280)
    compiled = run_plugrad(args + ["--compile"], tmp_path, timeout=280)
    assert plain.returncode == 0 and compiled.returncode == 0, compiled.stderr
    assert compiled.stdout == plain.stdout
