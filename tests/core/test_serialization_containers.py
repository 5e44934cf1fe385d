"""``save``/``load`` of what programs save besides state dicts (NumPy arrays and scalars,
argparse namespaces, dtypes, devices), refusals, PyTorch's options."""
import argparse
import io

import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
from plugrad.core.serialization import SerializationError


def _roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    plugrad.save(obj, buf)
    buf.seek(0)
    return plugrad.load(buf, **load_kwargs)


def test_numpy_arrays_and_scalars(device):
    data = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "ids": np.array([3, 1], np.int64),
            "mask": np.array([True, False]), "best": np.float64(0.25), "n": np.int32(7),
            "t": plugrad.ones(2, device=device)}
    back = _roundtrip(data)
    assert isinstance(back["x"], np.ndarray) and back["x"].dtype == np.float32
    assert np.array_equal(back["x"], data["x"]) and np.array_equal(back["ids"], data["ids"])
    assert back["mask"].dtype == np.bool_ and back["mask"].tolist() == [True, False]
    assert type(back["best"]) is np.float64 and back["best"] == 0.25
    assert type(back["n"]) is np.int32 and back["n"] == 7
    assert back["t"].device.type == device and back["t"].tolist() == [1.0, 1.0]
    assert np.array_equal(_roundtrip(np.arange(4)), np.arange(4))


def test_program_containers(tmp_path):
    args = argparse.Namespace(lr=0.1, name="run", layers=[2, 3], seed=None)
    obj = {"args": args, "epoch": 3, "dtype": plugrad.float16, "device": plugrad.device("cpu"),
           "history": [(1, 0.5), (2, 0.25)], 7: "int key", "nan": float("nan")}
    path = tmp_path / "ckpt.pt"
    plugrad.save(obj, path)
    back = plugrad.load(path, weights_only=False)
    assert back["args"] == args and back["epoch"] == 3 and back[7] == "int key"
    assert back["dtype"] is plugrad.float16 and back["device"] == plugrad.device("cpu")
    assert back["history"] == [(1, 0.5), (2, 0.25)] and back["nan"] != back["nan"]
    assert plugrad.load(path, map_location="cpu", weights_only=True)["epoch"] == 3
    assert plugrad.load(path, None, None, mmap=False)["epoch"] == 3


def test_what_has_no_saveable_state_is_refused_with_the_way_out(tmp_path):
    with pytest.raises(SerializationError, match=r"type object at top level.*no pickle"):
        plugrad.save(object(), tmp_path / "m.pt")
    with pytest.raises(SerializationError, match="local function or class"):
        plugrad.save({"f": lambda x: x}, tmp_path / "m.pt")
    with pytest.raises(SerializationError, match="NumPy array of dtype object"):
        plugrad.save(np.array([object()]), tmp_path / "m.pt")
    model, model_back = nn.Linear(2, 2), nn.Linear(2, 2)
    plugrad.save(model.state_dict(), tmp_path / "sd.pt", _use_new_zipfile_serialization=True)
    model_back.load_state_dict(plugrad.load(tmp_path / "sd.pt", weights_only=True))
    assert plugrad.equal(model_back.weight, model.weight)


def test_serialization_module_at_pytorchs_path():
    import plugrad.serialization as ser
    assert ser.save is plugrad.save and ser.load is plugrad.load
    ser.add_safe_globals([argparse.Namespace])
    assert argparse.Namespace in ser.get_safe_globals()
    with ser.safe_globals([int]):
        assert int in ser.get_safe_globals()
    assert int not in ser.get_safe_globals()
