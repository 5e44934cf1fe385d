"""``torch.utils.tensorboard.SummaryWriter``: real event files (read back record by record)."""
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

import plugrad

tbx = pytest.importorskip("tensorboardX", reason="tensorboardX (the 'tensorboard' extra) is "
                                                  "not installed")
from plugrad.utils.tensorboard import SummaryWriter  # noqa: E402
from tensorboardX.proto import event_pb2  # noqa: E402


def _events(log_dir):
    """Every Event in the TFRecord files under ``log_dir`` (length, crc, data, crc)."""
    out = []
    for path in sorted(Path(log_dir).rglob("events.out.tfevents.*")):
        data = path.read_bytes()
        pos = 0
        while pos < len(data):
            (n,) = struct.unpack("<Q", data[pos:pos + 8])
            event = event_pb2.Event()
            event.ParseFromString(data[pos + 12:pos + 12 + n])
            out.append(event)
            pos += 12 + n + 4
    return out


def _values(events):
    return {(v.tag, e.step): v for e in events if e.HasField("summary") for v in e.summary.value}


def test_scalars_histograms_images_text(tmp_path, device):
    with SummaryWriter(log_dir=str(tmp_path)) as writer:
        assert writer.get_logdir() == str(tmp_path)
        for step in range(3):
            writer.add_scalar("loss/train", plugrad.tensor(1.5 / (step + 1), device=device), step)
            writer.add_scalar("lr", 0.1 * step, step)
        writer.add_histogram("weights", plugrad.arange(100, dtype=plugrad.float32,
                                                       device=device), 2)
        writer.add_image("digit", plugrad.ones(1, 8, 8, device=device) * 0.5, 2)
        writer.add_images("batch", plugrad.zeros(2, 3, 4, 4, device=device), 2)
        writer.add_text("note", "trained on plugrad", 2)
        writer.add_scalars("pair", {"a": plugrad.tensor(1.0, device=device), "b": 2.0}, 2)
    values = _values(_events(tmp_path))
    assert [round(values[("loss/train", s)].simple_value, 6) for s in range(3)] == \
        [1.5, 0.75, 0.5]
    assert values[("lr", 2)].simple_value == pytest.approx(0.2)
    histo = values[("weights", 2)].histo
    assert histo.num == 100 and histo.min == 0 and histo.max == 99 and histo.sum == 4950
    image = values[("digit", 2)].image
    assert (image.height, image.width, image.colorspace) == (8, 8, 3)  # grey as RGB, as PyTorch
    assert image.encoded_image_string[:8] == b"\x89PNG\r\n\x1a\n"
    assert values[("batch", 2)].image.width == 8  # two 4x4 images side by side
    assert b"trained on plugrad" in values[("note/text_summary", 2)].tensor.string_val[0]
    pair = _values(_events(tmp_path / "pair" / "b"))
    assert pair[("pair", 2)].simple_value == 2.0  # add_scalars: one run folder per key


def test_add_graph_warns_and_hparams_pass_through(tmp_path):
    writer = SummaryWriter(log_dir=str(tmp_path))
    with pytest.warns(UserWarning, match="no graph was written"):
        writer.add_graph(plugrad.nn.Linear(2, 2), plugrad.zeros(1, 2))
    writer.add_hparams({"lr": 0.1}, {"hparam/loss": plugrad.tensor(0.5)})
    writer.close()
    assert _events(tmp_path)


def test_missing_extra_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'plugrad\[tensorboard\]'"):
        SummaryWriter()


def test_tensorboardx_never_pulls_in_the_real_torch(tmp_path):
    import subprocess
    code = ("import sys; from plugrad.utils.tensorboard import SummaryWriter; import plugrad; "
            f"w = SummaryWriter({str(tmp_path)!r}); w.add_scalar('x', plugrad.tensor(1.0), 0); "
            "w.close(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
    assert np.isclose(_values(_events(tmp_path))[("x", 0)].simple_value, 1.0)


def test_demo_logs_to_tensorboard(tmp_path):
    import subprocess
    proc = subprocess.run([sys.executable, "-m", "plugrad", "demo", "--epochs", "2",
                           "--subset", "200", "--width", "4", "--hidden", "16",
                           "--no-progress", "--tensorboard", str(tmp_path / "runs")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    values = _values(_events(tmp_path / "runs"))
    assert {("loss/train", 1), ("loss/train", 2), ("accuracy/test", 2), ("lr", 1)} <= set(values)
    assert 0.0 <= values[("accuracy/test", 2)].simple_value <= 1.0
    assert any(v.HasField("histo") and v.histo.num > 0 for (_, step), v in values.items()
               if step == 2)  # the weight histograms
