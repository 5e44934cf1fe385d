"""The language-model workloads of ``benchmarks/compare.py`` compute the same thing in all
three implementations: the hand-written NumPy floor's gradients equal PyTorch's autograd,
and plugrad's (on every device: the fused attention, layer norm and ``x @ W`` paths) equal
PyTorch's too.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import plugrad

torch = pytest.importorskip("torch")

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
import compare_lm  # noqa: E402
import numpy_reference_lm as nplm  # noqa: E402


def _grads(step):
    loss = step()
    return float(loss.detach()), {n: np.asarray(p.grad.detach().cpu())
                                  for n, p in step.params.items()}


def _close(ours, theirs, tol):
    assert set(ours) >= set(theirs)
    for name, g in theirs.items():
        np.testing.assert_allclose(ours[name], g, rtol=tol, atol=tol, err_msg=name)


GPT_SMALL = dict(batch=2, seq=5, d_model=8, heads=2, vocab=7)


@pytest.mark.parametrize("cfg", [GPT_SMALL, dict(batch=3, seq=16, d_model=32, heads=4,
                                                 vocab=65)])
def test_gpt_floor_matches_torch(cfg):
    np_step = nplm.make_gpt(**cfg)
    loss = float(np_step())
    tloss, tgrads = _grads(compare_lm.fw_gpt(torch, "cpu", np_step.state))
    assert abs(loss - tloss) < 1e-5
    _close(np_step.state["grads"], tgrads, 2e-5)


def test_gpt_plugrad_matches_torch(device):
    cfg = GPT_SMALL if device == "ref" else dict(batch=4, seq=16, d_model=32, heads=4,
                                                 vocab=65)
    st = nplm.make_gpt(**cfg).state
    loss, grads = _grads(compare_lm.fw_gpt(plugrad, device, st))
    tloss, tgrads = _grads(compare_lm.fw_gpt(torch, "cpu", st))
    assert abs(loss - tloss) < 1e-5
    _close(grads, tgrads, 2e-5)


LSTM_SMALL = dict(batch=3, seq=4, embed=5, hidden=6, vocab=7)


def test_lstm_floor_matches_torch():
    np_step = nplm.make_lstm(**LSTM_SMALL)
    loss = float(np_step())
    tloss, tgrads = _grads(compare_lm.fw_lstm(torch, "cpu", np_step.state))
    assert abs(loss - tloss) < 1e-5
    theirs = dict(tgrads)
    _close(np_step.state["grads"], theirs, 2e-5)


def test_lstm_plugrad_matches_torch(device):
    st = nplm.make_lstm(**LSTM_SMALL).state
    loss, grads = _grads(compare_lm.fw_lstm(plugrad, device, st))
    tloss, tgrads = _grads(compare_lm.fw_lstm(torch, "cpu", st))
    assert abs(loss - tloss) < 1e-5
    _close(grads, tgrads, 2e-5)


def test_loader_epoch_runs_an_epoch_in_each():
    np_step = nplm.make_loader_epoch(samples=96, features=12, hidden=8, classes=3, batch=32)
    st = np_step.state
    losses = [float(np_step())]
    for lib in (plugrad, torch):
        losses.append(compare_lm.fw_loader(lib, "cpu", st)())
    # shuffled orders differ between the three; the first epoch's mean losses are close
    assert max(losses) - min(losses) < 0.1, losses
