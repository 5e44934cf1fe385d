"""``torch.save(model, f)`` / ``torch.load(f)`` of whole objects, without pickle: tied
weights stay tied, plugrad's classes load as they are, a program's own classes need
PyTorch's allowlist (``serialization.safe_globals``) or ``weights_only=False``, and the
rebuilt model computes what the saved one did (compared with PyTorch doing the same)."""
import io

import numpy as np
import pytest
import torch

import plugrad
import plugrad.nn as nn
import plugrad.serialization as ser
from plugrad.core.serialization import SerializationError


class TiedLM(nn.Module):
    """A word language model's shape: embedding, LSTM, a decoder tied to the embedding."""

    def __init__(self, vocab=7, hidden=4):
        super().__init__()
        self.drop = nn.Dropout(0.0)
        self.encoder = nn.Embedding(vocab, hidden)
        self.rnn = nn.LSTM(hidden, hidden, 1)
        self.decoder = nn.Linear(hidden, vocab)
        self.decoder.weight = self.encoder.weight
        self.act = plugrad.tanh
        self.kind = "LSTM"

    def forward(self, x):
        out, _ = self.rnn(self.drop(self.encoder(x)))
        return self.decoder(self.act(out))


def _roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    plugrad.save(obj, buf)
    buf.seek(0)
    return plugrad.load(buf, **load_kw)


def test_whole_model_roundtrip_keeps_ties_types_and_outputs(device):
    plugrad.manual_seed(0)
    model = TiedLM().to(device)
    x = plugrad.tensor([[1, 2], [3, 4], [5, 6]], device=device)
    with ser.safe_globals([TiedLM]):
        back = _roundtrip(model)
    assert type(back) is TiedLM and back.kind == "LSTM" and back.act is plugrad.tanh
    assert back.decoder.weight is back.encoder.weight
    assert isinstance(back.encoder.weight, nn.Parameter) and back.encoder.weight.requires_grad
    assert back.encoder.weight.device == model.encoder.weight.device
    assert plugrad.equal(back(x), model(x))
    assert len(list(back.parameters())) == len(list(model.parameters()))
    back(x).sum().backward()  # trains: the rebuilt parameters are leaves of a new graph
    assert back.encoder.weight.grad is not None


def test_program_classes_need_the_allowlist_like_pytorch(tmp_path):
    model = TiedLM()
    plugrad.save(model, tmp_path / "m.pt")
    with pytest.raises(SerializationError, match=r"Unsupported global: .*TiedLM.*safe_globals"):
        plugrad.load(tmp_path / "m.pt")
    with pytest.raises(SerializationError, match=r"Unsupported global"):
        plugrad.load(tmp_path / "m.pt", weights_only=True)
    assert type(plugrad.load(tmp_path / "m.pt", weights_only=False)) is TiedLM
    ser.add_safe_globals([TiedLM])
    try:
        assert type(plugrad.load(tmp_path / "m.pt")) is TiedLM
    finally:
        ser.clear_safe_globals()
    # PyTorch does the same: its own whole-model load needs the allowlist too
    tm = torch.nn.Linear(2, 2)
    buf = io.BytesIO()
    torch.save(torch.nn.Sequential(tm), buf)
    buf.seek(0)
    with pytest.raises(Exception, match="Unsupported global"):
        torch.load(buf)


def test_plugrads_own_modules_and_optimizers_load_as_they_are(device):
    plugrad.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.TransformerEncoderLayer(4, 2, 8))
    model.to(device)
    opt = plugrad.optim.Adam(model.parameters(), lr=0.01)
    x = plugrad.randn(2, 5, 3, device=device)
    model.eval()
    model(x).sum().backward()
    opt.step()
    back = _roundtrip({"model": model, "opt": opt, "epoch": 3})
    m2, o2 = back["model"], back["opt"]
    assert back["epoch"] == 3 and plugrad.equal(m2(x), model(x))
    assert o2.param_groups[0]["params"][0] is m2[0].weight
    assert next(iter(o2.state)) is m2[0].weight  # state keyed by the rebuilt parameters
    for m, o in ((model, opt), (m2, o2)):
        o.zero_grad()
        m(x).pow(2).mean().backward()
        o.step()
    assert plugrad.allclose(m2[0].weight, model[0].weight)


def test_whole_model_save_agrees_with_pytorch_doing_the_same():
    """Train a little, save the whole model, load it, continue: the same losses in both."""
    def run(lib, save, load):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 1))
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(np.linspace(-0.5, 0.5, p.numel()).reshape(tuple(p.shape)) *
                                   (i + 1), dtype=lib.float32))
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=lib.float32)
        y = lib.tensor([[0.5], [-0.5], [1.0], [0.0]])
        losses = []
        for step in range(4):
            if step == 2:
                buf = io.BytesIO()
                save(model, buf)
                buf.seek(0)
                model = load(buf)
            opt = lib.optim.SGD(model.parameters(), lr=0.1)
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses
    ours = run(plugrad, plugrad.save, plugrad.load)
    theirs = run(torch, torch.save, lambda f: torch.load(f, weights_only=False))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)


def test_sets_functions_and_shared_objects():
    shared = nn.Linear(2, 2)
    obj = {"a": shared, "b": [shared], "s": {1, 2}, "fs": frozenset({"x"}), "f": plugrad.relu}
    back = _roundtrip(obj)
    assert back["a"] is back["b"][0] and back["s"] == {1, 2} and back["fs"] == frozenset({"x"})
    assert back["f"] is plugrad.relu


def test_a_state_dict_keeps_every_key_for_safetensors_readers(tmp_path):
    """Outside whole objects nothing is deduplicated: a tied state dict stays key for key."""
    model = TiedLM()
    plugrad.save(model.state_dict(), tmp_path / "sd.pt")
    from safetensors.numpy import load_file
    assert {"encoder.weight", "decoder.weight"} <= set(load_file(tmp_path / "sd.pt"))
