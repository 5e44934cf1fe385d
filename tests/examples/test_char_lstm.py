"""examples/char_lstm.py: a short run learns, its checkpoint reloads exactly, it samples text.

The full default run (500 steps, ~30 s on 2 CPU cores) is not part of the suite; these are
short runs of a small model on ``cpu`` and a smoke run on ``ref``.
"""
import importlib.util
import math
from pathlib import Path

import pytest

import plugrad

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "char_lstm.py"


@pytest.fixture(scope="module")
def char_lstm():
    spec = importlib.util.spec_from_file_location("char_lstm_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SMALL = ["--embed", "16", "--hidden", "48", "--seq-len", "32", "--batch-size", "16",
         "--eval-batches", "4", "--no-progress", "--quiet"]


@pytest.mark.timeout(120)
def test_short_cpu_run_learns_reloads_and_samples(char_lstm, tmp_path):
    ckpt = tmp_path / "lstm.safetensors"
    m = char_lstm.main(SMALL + ["--device", "cpu", "--steps", "80", "--eval-interval", "40",
                                "--sample-len", "100", "--ckpt", str(ckpt)])
    assert m["vocab_size"] == 65
    # an untrained model predicts about uniformly: val loss near ln(vocab)
    assert abs(m["initial_val_loss"] - math.log(65)) < 0.1
    # it learns: well below the uniform guess after 80 steps of a small model
    assert m["final_val_loss"] < 0.75 * m["initial_val_loss"], m["history"]
    vals = [v for _, _, v in m["history"]]
    assert vals[-1] < vals[1] < vals[0]
    assert m["reloaded_val_loss"] == m["final_val_loss"]
    corpus = (EXAMPLE.parent / "data" / "corpus.txt").read_text()
    assert isinstance(m["sample"], str) and len(m["sample"]) == 100
    assert set(m["sample"]) <= set(corpus)
    saved = plugrad.load(ckpt)
    assert saved["config"]["hidden"] == 48 and saved["step"] == 80
    # PyTorch's LSTM parameter names: the checkpoint loads into torch's nn.LSTM too
    assert {"lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0",
            "lstm.bias_hh_l0"} <= set(saved["model"])


def test_same_seed_same_run(char_lstm, tmp_path):
    args = SMALL + ["--device", "cpu", "--steps", "4", "--eval-interval", "2",
                    "--sample-len", "20", "--seed", "5"]
    a = char_lstm.main(args + ["--ckpt", str(tmp_path / "a.safetensors")])
    b = char_lstm.main(args + ["--ckpt", str(tmp_path / "b.safetensors")])
    assert a["history"] == b["history"] and a["sample"] == b["sample"]


def test_carried_state_equals_one_pass(char_lstm):
    """Feeding a sequence in two chunks, carrying ``(h, c)``, gives the logits of one pass."""
    model = char_lstm.CharLSTM(vocab_size=11, embed=4, hidden=6, num_layers=2)
    model.eval()
    x = plugrad.tensor([[1, 2, 3, 4, 5, 6, 7], [7, 6, 5, 4, 3, 2, 1]])
    with plugrad.no_grad():
        whole = model(x)[0]
        first, _, state = model(x[:, :3])
        second = model(x[:, 3:], state=state)[0]
    assert plugrad.allclose(plugrad.cat([first, second], 1), whole, atol=1e-6)


@pytest.mark.timeout(120)
def test_ref_smoke(char_lstm, tmp_path):
    m = char_lstm.main(["--device", "ref", "--steps", "2", "--eval-interval", "1",
                        "--embed", "4", "--hidden", "6", "--seq-len", "5", "--batch-size", "2",
                        "--eval-batches", "1", "--sample-len", "8", "--no-progress", "--quiet",
                        "--ckpt", str(tmp_path / "ref.safetensors")])
    assert m["device"] == "ref"
    assert math.isfinite(m["final_val_loss"])
    assert m["reloaded_val_loss"] == m["final_val_loss"]
    assert len(m["sample"]) == 8
