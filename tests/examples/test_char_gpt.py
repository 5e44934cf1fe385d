"""examples/char_gpt.py: a tiny run learns, its checkpoint reloads exactly, it samples text.

The full default run (~300 steps, ~2 min on 2 CPU cores) is not part of the suite; these are
short runs of a tiny model on ``cpu`` and a smoke run on ``ref``.
"""
import importlib.util
import math
from pathlib import Path

import pytest

import plugrad

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "char_gpt.py"


@pytest.fixture(scope="module")
def char_gpt():
    spec = importlib.util.spec_from_file_location("char_gpt_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TINY = ["--d-model", "32", "--n-layer", "1", "--n-head", "4", "--block-size", "32",
        "--batch-size", "16", "--eval-batches", "4", "--lr", "1e-2", "--warmup", "10",
        "--no-progress", "--quiet"]


@pytest.mark.timeout(120)
def test_short_cpu_run_learns_reloads_and_samples(char_gpt, tmp_path):
    ckpt = tmp_path / "gpt.safetensors"
    m = char_gpt.main(TINY + ["--device", "cpu", "--steps", "100", "--eval-interval", "25",
                              "--sample-len", "120", "--ckpt", str(ckpt)])
    vocab = m["vocab_size"]
    assert vocab == 65
    # an untrained model predicts about uniformly: val loss near ln(vocab)
    assert abs(m["initial_val_loss"] - math.log(vocab)) < 0.1
    # it learns: val loss falls well below the uniform guess (tiny model, 100 steps)
    assert m["final_val_loss"] < 0.8 * m["initial_val_loss"], m["history"]
    vals = [v for _, _, v in m["history"]]
    assert vals[-1] < vals[1] < vals[0]
    # the reloaded checkpoint gives exactly the same validation loss
    assert m["reloaded_val_loss"] == m["final_val_loss"]
    # a sample of the requested length, from the corpus's characters
    assert isinstance(m["sample"], str) and len(m["sample"]) == 120
    corpus = (EXAMPLE.parent / "data" / "corpus.txt").read_text()
    assert set(m["sample"]) <= set(corpus)
    # the checkpoint holds model, optimizer and scheduler state, and the config
    saved = plugrad.load(ckpt)
    assert set(saved) >= {"model", "optimizer", "scheduler", "config"}
    assert saved["config"]["d_model"] == 32 and saved["step"] == 100
    assert "tok_emb.weight" in saved["model"]


def test_same_seed_same_run(char_gpt, tmp_path):
    args = TINY + ["--device", "cpu", "--steps", "5", "--eval-interval", "5",
                   "--sample-len", "30", "--seed", "7"]
    a = char_gpt.main(args + ["--ckpt", str(tmp_path / "a.safetensors")])
    b = char_gpt.main(args + ["--ckpt", str(tmp_path / "b.safetensors")])
    assert a["history"] == b["history"] and a["sample"] == b["sample"]


def test_generate_top_k_and_context_crop(char_gpt):
    """Generation past ``block_size`` crops the context; top-k=1 is greedy (deterministic)."""
    model = char_gpt.CharGPT(vocab_size=11, block_size=4, d_model=8, n_layer=1, n_head=2)
    model.eval()
    prompt = plugrad.tensor([[1, 2, 3]])
    plugrad.manual_seed(1)
    a = model.generate(prompt, 9, temperature=1.0, top_k=1)
    plugrad.manual_seed(2)
    b = model.generate(prompt, 9, temperature=1.0, top_k=1)
    assert tuple(a.shape) == (1, 12)
    assert a.tolist() == b.tolist()
    assert a[0, :3].tolist() == [1, 2, 3]


def test_causal_model_ignores_the_future(char_gpt):
    """Changing a later character leaves the logits at earlier positions unchanged."""
    model = char_gpt.CharGPT(vocab_size=11, block_size=6, d_model=8, n_layer=2, n_head=2)
    model.eval()
    x = plugrad.tensor([[1, 2, 3, 4, 5, 6]])
    y = plugrad.tensor([[1, 2, 3, 4, 9, 0]])
    with plugrad.no_grad():
        lx, ly = model(x)[0], model(y)[0]
    assert plugrad.allclose(lx[:, :4], ly[:, :4], atol=1e-6)
    assert not plugrad.allclose(lx[:, 4:], ly[:, 4:])


@pytest.mark.timeout(120)
def test_ref_smoke(char_gpt, tmp_path):
    m = char_gpt.main(["--device", "ref", "--steps", "2", "--eval-interval", "1",
                       "--d-model", "8", "--n-layer", "1", "--n-head", "2",
                       "--block-size", "8", "--batch-size", "2", "--eval-batches", "1",
                       "--sample-len", "10", "--no-progress", "--quiet",
                       "--ckpt", str(tmp_path / "ref.safetensors")])
    assert m["device"] == "ref"
    assert math.isfinite(m["final_val_loss"])
    assert m["reloaded_val_loss"] == m["final_val_loss"]
    assert len(m["sample"]) == 10


@pytest.mark.parametrize("device,args", [
    ("cpu", TINY + ["--steps", "12", "--eval-interval", "6", "--dropout", "0.1"]),
    ("ref", ["--steps", "5", "--eval-interval", "5", "--d-model", "8", "--n-layer", "1",
             "--n-head", "2", "--block-size", "8", "--batch-size", "2", "--eval-batches", "1",
             "--no-progress", "--quiet"])])
def test_compiled_training_equals_eager(char_gpt, tmp_path, device, args):
    """--compile replays the step (AdamW with a per-step lr schedule, grad clipping,
    dropout): the same losses as eager, and the same sampled text afterwards."""
    args = args + ["--device", device, "--sample-len", "20", "--seed", "3"]
    eager = char_gpt.main(args + ["--ckpt", str(tmp_path / "e.safetensors")])
    compiled = char_gpt.main(args + ["--compile", "--ckpt", str(tmp_path / "c.safetensors")])
    assert compiled["history"] == eager["history"]
    assert compiled["sample"] == eager["sample"]
