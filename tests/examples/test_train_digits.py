"""examples/train_digits.py: short runs on cpu and ref, checkpoints, plots, the demo CLI.

The full run (>= 97% test accuracy) is measured by hand, not here: about 20 s on 2 cores.
"""
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import plugrad
import plugrad.nn as nn
import plugrad.optim as optim

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import train_digits as td  # noqa: E402

QUICK = ["--no-progress", "--subset", "600"]


def _child_env():
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


@pytest.fixture(scope="module")
def short_cpu_run(tmp_path_factory):
    ckpt = tmp_path_factory.mktemp("digits") / "digits.safetensors"
    metrics = td.main(QUICK + ["--epochs", "2", "--device", "cpu", "--save", str(ckpt)])
    return metrics, ckpt


def test_short_cpu_run_learns(short_cpu_run):
    metrics, _ = short_cpu_run
    assert metrics["device"] == "cpu"
    assert (metrics["train_size"], metrics["test_size"]) == (480, 120)
    losses = metrics["history"]["train_loss"]
    assert len(losses) == 2 and losses[1] < losses[0] < math.log(10) + 0.1
    assert metrics["test_accuracy"] > 0.7  # chance is 0.1


def test_runs_are_reproducible():
    args = QUICK + ["--epochs", "1", "--subset", "200", "--device", "cpu", "--seed", "3"]
    a, b = td.main(args), td.main(args)
    assert a["history"] == b["history"]


def test_tiny_run_on_ref():
    metrics = td.main(["--device", "ref", "--epochs", "1", "--subset", "48", "--width", "2",
                       "--hidden", "8", "--batch-size", "16", "--no-progress"])
    assert metrics["device"] == "ref"
    assert (metrics["train_size"], metrics["test_size"]) == (38, 10)
    assert math.isfinite(metrics["train_loss"]) and math.isfinite(metrics["test_loss"])
    assert 0.0 <= metrics["test_accuracy"] <= 1.0


def test_checkpoint_from_main_restores_the_model(short_cpu_run):
    metrics, ckpt = short_cpu_run
    ckpt_data = plugrad.load(ckpt)
    assert ckpt_data["epoch"] == 2 and ckpt_data["test_accuracy"] == metrics["test_accuracy"]
    plugrad.manual_seed(123)  # a different initialisation, replaced by the checkpoint
    model = td.DigitsCNN(ckpt_data["width"], ckpt_data["hidden"])
    td.load_checkpoint(ckpt, model)
    x, y = td.load_digits(subset=600)
    _, test_set = td.make_datasets(x, y, plugrad.device("cpu"), seed=0)
    _, acc = td.evaluate(model, plugrad.utils.data.DataLoader(test_set, batch_size=64))
    assert acc == metrics["test_accuracy"]


def test_checkpoint_round_trip_identical_predictions_and_steps(tmp_path):
    x, y = td.load_digits(subset=64)
    xb, yb = plugrad.tensor(x), plugrad.tensor(y)
    criterion = nn.CrossEntropyLoss()

    def step(model, opt):
        loss = criterion(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()

    plugrad.manual_seed(0)
    model = td.DigitsCNN(4, 16, dropout=0.0)
    opt = optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(3):
        step(model, opt)
    td.save_checkpoint(tmp_path / "c.safetensors", model, opt, epoch=3)

    plugrad.manual_seed(1)
    model2 = td.DigitsCNN(4, 16, dropout=0.0)
    opt2 = optim.Adam(model2.parameters(), lr=0.5)
    assert not plugrad.equal(model2(xb), model(xb))
    assert td.load_checkpoint(tmp_path / "c.safetensors", model2, opt2)["epoch"] == 3
    model.eval(), model2.eval()
    assert plugrad.equal(model2(xb), model(xb))
    model.train(), model2.train()
    step(model, opt), step(model2, opt2)  # the optimizer state (moments, step, lr) came back
    for (name, p), p2 in zip(model.named_parameters(), model2.parameters()):
        assert plugrad.equal(p, p2), name


def test_progress_without_tqdm(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    td.main(["--epochs", "1", "--subset", "100", "--width", "2", "--hidden", "8"])
    out = capsys.readouterr().out
    assert "epoch  1/1  train loss" in out and "final test accuracy" in out


def test_plot_without_matplotlib(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert not td.plot_curves(tmp_path / "c.png", {"train_loss": [1.0], "test_loss": [1.0],
                                                   "test_acc": [0.5]})
    assert "matplotlib is not installed" in capsys.readouterr().err
    assert not (tmp_path / "c.png").exists()


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    history = {"train_loss": [2.0, 1.0], "test_loss": [1.5, 0.9], "test_acc": [0.5, 0.8]}
    assert td.plot_curves(tmp_path / "c.png", history)
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_missing_data_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="digits data not found"):
        td.main(["--data", str(tmp_path / "nope.npz"), "--epochs", "1"])


def test_demo_command():
    proc = subprocess.run([sys.executable, "-m", "plugrad", "demo", "--epochs", "1",
                           "--subset", "200", "--width", "4", "--hidden", "16",
                           "--no-progress"], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=_child_env())
    assert proc.returncode == 0, proc.stderr
    assert "plugrad demo: final test accuracy" in proc.stdout


def test_demo_without_the_examples_folder(tmp_path):
    env = _child_env()
    env["PLUGRAD_EXAMPLES_DIR"] = str(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "plugrad", "demo"], capture_output=True,
                          text=True, timeout=60, env=env)
    assert proc.returncode == 1
    assert "cannot find" in proc.stderr and "pip install -e ." in proc.stderr


def test_plugrad_imports_without_example_extras():
    code = ("import sys, plugrad, plugrad.nn, plugrad.optim, plugrad.utils.data, "
            "plugrad.__main__; "
            "print(sorted(m for m in ('tqdm', 'matplotlib') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize("device,extra", [
    ("cpu", ["--epochs", "2"]),
    ("ref", ["--epochs", "1", "--subset", "48", "--width", "2", "--hidden", "8"])])
def test_compiled_run_equals_the_eager_run(device, extra):
    """--compile: the training step and the evaluation forward are replayed; the run's
    losses and accuracy are the eager run's (the same kernels in the same order)."""
    args = QUICK + extra + ["--device", device, "--seed", "1"]
    eager, compiled = td.main(args), td.main(args + ["--compile"])
    assert compiled["history"] == eager["history"]
    assert compiled["test_accuracy"] == eager["test_accuracy"]
