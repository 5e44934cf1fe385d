"""plugrad.save / plugrad.load: exact round trips, PyTorch interop, refusing hostile files."""
import json
import pickle
import struct

import numpy as np
import pytest

import plugrad
from plugrad import SerializationError


def _state(device):
    return {"w": plugrad.randn(3, 2, device=device),
            "b": plugrad.arange(4, device=device).to(plugrad.float64),
            "mask": plugrad.tensor([True, False], device=device),
            "i32": plugrad.tensor([1, -2], dtype=plugrad.int32, device=device),
            "half": plugrad.tensor([0.5, 1e-3], dtype=plugrad.float16, device=device)}


def test_round_trip_is_bit_identical(tmp_path, device):
    sd = _state(device)
    path = tmp_path / "m.safetensors"
    plugrad.save(sd, path)
    back = plugrad.load(path, map_location=device)
    assert list(back) == list(sd)
    for k, t in sd.items():
        assert back[k].dtype is t.dtype and back[k].device == t.device
        assert back[k].cpu().numpy().tobytes() == t.cpu().numpy().tobytes()


def test_nested_structure_round_trip(tmp_path):
    obj = {"model": {"w": plugrad.ones(2)},
           "opt": {"state": {0: {"step": 3, "exp_avg": plugrad.zeros(2)}},
                   "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0]}]},
           "epoch": 7, "best": float("inf"), "name": "run", "none": None}
    plugrad.save(obj, tmp_path / "c.safetensors")
    back = plugrad.load(tmp_path / "c.safetensors")
    assert back["opt"]["state"][0]["step"] == 3
    assert back["opt"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert back["epoch"] == 7 and back["best"] == float("inf") and back["none"] is None
    assert plugrad.equal(back["model"]["w"], obj["model"]["w"])


def test_requires_grad_survives(tmp_path):
    p = plugrad.ones(2, requires_grad=True)
    plugrad.save({"p": p}, tmp_path / "p.safetensors")
    assert plugrad.load(tmp_path / "p.safetensors")["p"].requires_grad


def test_unsupported_objects_are_refused(tmp_path):
    with pytest.raises(SerializationError, match="cannot store an object of type object"):
        plugrad.save({"x": object()}, tmp_path / "x.safetensors")


def test_map_location_moves_to_ref(tmp_path):
    plugrad.save({"w": plugrad.ones(2)}, tmp_path / "w.safetensors")
    assert plugrad.load(tmp_path / "w.safetensors", map_location="ref")["w"].device.type == "ref"


def test_torch_reads_plugrad_and_plugrad_reads_torch(tmp_path):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    sd = {"layer.weight": plugrad.randn(2, 3), "layer.bias": plugrad.zeros(2)}
    plugrad.save(sd, tmp_path / "p.safetensors")
    loaded = st_torch.load_file(str(tmp_path / "p.safetensors"))
    assert set(loaded) == set(sd)
    assert torch.equal(loaded["layer.weight"], torch.from_numpy(sd["layer.weight"].numpy()))
    st_torch.save_file({"x": torch.arange(6, dtype=torch.float64).reshape(2, 3)},
                       str(tmp_path / "t.safetensors"))
    back = plugrad.load(tmp_path / "t.safetensors")
    assert back["x"].dtype is plugrad.float64 and back["x"].tolist() == [[0, 1, 2], [3, 4, 5]]


# ------------------------------------------------------------------ hostile files
def _raw(header: dict, body: bytes = b"") -> bytes:
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + body


def _write(tmp_path, data: bytes):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    return path


class Boom:
    def __reduce__(self):
        return (pytest.fail, ("pickle payload was executed",))


@pytest.mark.parametrize("data, match", [
    (pickle.dumps(Boom()), "pickle"),
    (b"PK\x03\x04 torch zip", "pickle or a PyTorch zip"),
    (b"\x01\x02", "too short"),
    (struct.pack("<Q", 200 * 1024 * 1024) + b"{}", "exceeds"),
    (struct.pack("<Q", 1000) + b"{}", "larger than the file"),
    (struct.pack("<Q", 5) + b"{not}", "malformed safetensors header"),
    (_raw({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 80]}}, b"\0" * 8),
     "out of range"),
    (_raw({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8),
     "needs 12 bytes"),
    (_raw({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
           "y": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, b"\0" * 12),
     "overlap"),
    (_raw({"x": {"dtype": "Q7", "shape": [1], "data_offsets": [0, 1]}}, b"\0"), "unknown"),
    (_raw({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
           "__metadata__": {"plugrad.structure": "{oops"}}, b"\0" * 4), "malformed structure"),
    (_raw({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
           "__metadata__": {"plugrad.structure": json.dumps({"a": {"__tensor__": "zz"}})}},
          b"\0" * 4), "does not contain"),
])
def test_hostile_files_are_refused(tmp_path, data, match):
    with pytest.raises(SerializationError, match=match):
        plugrad.load(_write(tmp_path, data))


def test_fuzzed_checkpoints_load_or_fail_cleanly(tmp_path):
    """Random byte mutations of a valid file: a clean error or a correct load, every time."""
    sd = {"w": plugrad.randn(4, 3), "step": 2, "nested": {"b": plugrad.ones(3)}}
    plugrad.save(sd, tmp_path / "ok.safetensors")
    good = (tmp_path / "ok.safetensors").read_bytes()
    rng = np.random.default_rng(1234)
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(300):
        data = bytearray(good)
        for _ in range(int(rng.integers(1, 4))):
            pos = int(rng.integers(0, len(data)))
            data[pos] = int(rng.integers(0, 256))
        if rng.random() < 0.2:
            data = data[: int(rng.integers(0, len(data)))]
        try:
            back = plugrad.load(_write(tmp_path, bytes(data)))
        except SerializationError:
            outcomes["refused"] += 1
            continue
        outcomes["loaded"] += 1
        assert isinstance(back, dict)
    assert outcomes["refused"] > 0 and outcomes["loaded"] > 0


def test_header_length_with_pickle_like_low_byte_loads(tmp_path):
    """A header whose length ends in byte 0x80 is still a safetensors file, not a pickle."""
    for pad in range(0, 200):
        sd = {"w": plugrad.ones(3, 2), "name" + "x" * pad: plugrad.arange(4)}
        plugrad.save(sd, tmp_path / "h.safetensors")
        data = (tmp_path / "h.safetensors").read_bytes()
        if data[0] == 0x80:
            back = plugrad.load(tmp_path / "h.safetensors")
            assert plugrad.equal(back["w"], sd["w"])
            return
    pytest.fail("no padding produced a header length with low byte 0x80")
