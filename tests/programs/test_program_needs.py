"""What real public PyTorch programs needed beyond the first round (docs/programs.md):
``torch.nn.modules.<file>.<Class>`` paths, whole-model save/load inside
``serialization.safe_globals``, ``torch.accelerator``, the process knobs, ``torch.range``,
``torch.dtype``, ``Module.bfloat16`` and the Tensor spellings ``select``, ``ravel``,
``type_as``, ``nan_to_num`` (compared with PyTorch)."""
import importlib
import inspect
import json
import pkgutil
import warnings

import numpy as np
import pytest
import torch

import plugrad
from tests.programs.conftest import run_plugrad

DEVICES = ["cpu", "ref"]

LAYOUT = '''
import json, torch
import torch.nn as nn
print(json.dumps({name: getattr(getattr(torch.nn.modules, mod, None), name, None) is
                  getattr(nn, name) for mod, name in %r}))
'''


def _pytorch_module_paths():
    """(file, class) for each class of torch.nn.modules.<file> that plugrad.nn has."""
    pairs = []
    for info in pkgutil.iter_modules(torch.nn.modules.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"torch.nn.modules.{info.name}")
        pairs += [(info.name, n) for n, v in vars(mod).items()
                  if inspect.isclass(v) and v.__module__ == mod.__name__
                  and not n.startswith("_") and hasattr(plugrad.nn, n)]
    return pairs


def test_nn_modules_file_paths_are_attributes_in_a_fresh_program(script):
    """``torch.nn.modules.dropout.Dropout`` works right after ``import torch.nn``, as in
    PyTorch (the word language model lists such paths in its ``safe_globals``)."""
    pairs = _pytorch_module_paths()
    assert len(pairs) > 100
    prog = script(LAYOUT % pairs)
    r = run_plugrad(["run", str(prog)], prog.parent)
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout.strip().splitlines()[-1])
    assert [name for name, ok in found.items() if not ok] == []


WHOLE_MODEL = '''
import os, sys, torch
import torch.nn as nn

class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp):
        super().__init__()
        self.drop = nn.Dropout(0.0)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, ninp, 1)
        self.decoder = nn.Linear(ninp, ntoken)
        self.decoder.weight = self.encoder.weight

    def forward(self, x, hidden=None):
        out, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
        return self.decoder(out), hidden

torch.manual_seed(0)
model = RNNModel(10, 4)
x = torch.randint(0, 10, (5, 2))
with open("model.pt", "wb") as f:
    torch.save(model, f)
try:
    torch.load("model.pt")
    print("loaded without the allowlist")
except Exception as exc:
    print("refused:", type(exc).__name__)
with open("model.pt", "rb") as f:
    with torch.serialization.safe_globals([RNNModel, torch.nn.modules.dropout.Dropout,
                                           torch.nn.modules.linear.Linear,
                                           torch.nn.modules.rnn.LSTM,
                                           torch.nn.modules.sparse.Embedding]):
        back = torch.load(f)
print(type(back).__name__, back.decoder.weight is back.encoder.weight,
      bool(torch.equal(back(x)[0], model(x)[0])), back.encoder.weight.device)
'''


@pytest.mark.parametrize("device", DEVICES)
def test_whole_model_saved_and_loaded_as_the_word_language_model_does(script, device):
    prog = script(WHOLE_MODEL)
    r = run_plugrad(["run", "--device", device, str(prog)], prog.parent)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[-2] == "refused: SerializationError"
    assert lines[-1] == f"RNNModel True True {device}"


def test_accelerator_answers_like_pytorch_without_a_gpu():
    if plugrad.cuda.is_available():
        assert plugrad.accelerator.current_accelerator() == plugrad.device("cuda")
        return
    assert plugrad.accelerator.is_available() is torch.accelerator.is_available() is False
    assert plugrad.accelerator.current_accelerator() is None
    assert torch.accelerator.current_accelerator() is None
    assert plugrad.accelerator.device_count() == 0
    with pytest.raises(RuntimeError, match="no accelerator"):
        plugrad.accelerator.current_device_index()
    plugrad.accelerator.synchronize()  # nothing to wait for


def test_process_knobs_answer_back_and_check_arguments():
    before = plugrad.get_num_threads()
    assert before >= 1
    plugrad.set_num_threads(1)
    assert plugrad.get_num_threads() == 1
    with pytest.raises(RuntimeError, match="positive number of threads"):
        plugrad.set_num_threads(0)
    plugrad.set_num_threads(before)
    plugrad.set_float32_matmul_precision("high")
    assert plugrad.get_float32_matmul_precision() == "high"
    with pytest.raises(RuntimeError, match="invalid precision"):
        plugrad.set_float32_matmul_precision("fast")
    plugrad.set_float32_matmul_precision("highest")
    plugrad.use_deterministic_algorithms(True, warn_only=True)
    assert plugrad.are_deterministic_algorithms_enabled()
    assert plugrad.is_deterministic_algorithms_warn_only_enabled()
    plugrad.use_deterministic_algorithms(False)
    assert not plugrad.are_deterministic_algorithms_enabled()


@pytest.mark.parametrize("args,kw", [((1, 4), {}), ((0, 1, 0.25), {}),
                                     ((1, 4), {"dtype": "int64"}), ((3, 0, -1), {})])
def test_range_includes_the_end_like_pytorch(device, args, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tkw = {k: getattr(torch, v) for k, v in kw.items()}
        want = torch.range(*args, **tkw)
        with pytest.warns(UserWarning, match="torch.range is deprecated"):
            got = plugrad.range(*args, device=device, **{k: getattr(plugrad, v)
                                                         for k, v in kw.items()})
    assert got.dtype.name == str(want.dtype).split(".")[1]
    np.testing.assert_allclose(got.numpy(force=True), want.numpy(force=True))
    with pytest.raises(TypeError):
        plugrad.range(5)  # as PyTorch: end is required


def test_dtype_is_the_class_of_dtypes_and_bfloat16_modules():
    assert isinstance(plugrad.float16, plugrad.dtype) and not isinstance("x", plugrad.dtype)
    m = plugrad.nn.Sequential(plugrad.nn.Linear(2, 2), plugrad.nn.Embedding(3, 2)).bfloat16()
    assert m[0].weight.dtype is plugrad.bfloat16 and m[1].weight.dtype is plugrad.bfloat16


# ---------------------------------------------------------------------- Tensor spellings
def _pair(values, device, dtype="float32"):
    a = np.array(values, dtype=dtype)
    return plugrad.tensor(a, device=device), torch.tensor(a)


def test_select_is_a_view_with_pytorchs_gradient(device):
    x, tx = _pair(np.arange(24).reshape(2, 3, 4), device)
    x.requires_grad_()
    tx.requires_grad_()
    for dim, index in ((0, 1), (1, -1), (-1, 2)):
        np.testing.assert_array_equal(x.select(dim, index).detach().numpy(force=True),
                                      tx.select(dim, index).detach().numpy(force=True))
    y, ty = x.select(1, -1), tx.select(1, -1)
    assert y.grad_fn.name() == ty.grad_fn.name() == "SelectBackward0"
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(force=True), tx.grad.numpy())
    base = plugrad.zeros(2, 3, device=device)
    base.select(0, 1).fill_(5.0)  # writes through, as a view
    assert base.tolist() == [[0, 0, 0], [5, 5, 5]]
    with pytest.raises(IndexError, match=r"select\(\): index 3 out of range"):
        base.select(0, 3)
    with pytest.raises(IndexError, match="select"):
        torch.zeros(2, 3).select(0, 3)


def test_ravel_and_type_as_like_pytorch(device):
    x, tx = _pair(np.arange(6).reshape(2, 3), device)
    np.testing.assert_array_equal(x.t().ravel().numpy(force=True), tx.t().ravel().numpy(force=True))
    assert plugrad.ravel(x).shape == (6,)
    for dtype in ("float64", "int64", "bool", "float16"):
        other, tother = _pair([1], device, dtype)
        got, want = x.type_as(other), tx.type_as(tother)
        assert got.dtype.name == str(want.dtype).split(".")[1]
        np.testing.assert_array_equal(got.numpy(force=True), want.numpy(force=True))
    x.requires_grad_()
    x.type_as(_pair([1], device, "float64")[0]).sum().backward()
    assert x.grad.dtype is plugrad.float32 and x.grad.tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kw", [{}, {"nan": 1.0}, {"posinf": 9.0, "neginf": -9.0},
                                {"neginf": 2.0}])
def test_nan_to_num_like_pytorch(device, dtype, kw):
    if device == "ref" and dtype == "float16":
        pytest.skip("small sizes on ref: float16 covered on cpu")
    vals = [[1.5, np.nan, -2.0], [np.inf, -np.inf, 0.0]]
    x, tx = _pair(vals, device, dtype)
    np.testing.assert_array_equal(plugrad.nan_to_num(x, **kw).numpy(force=True),
                                  torch.nan_to_num(tx, **kw).numpy(force=True))
    x.nan_to_num_(**kw)
    np.testing.assert_array_equal(x.numpy(force=True), torch.nan_to_num(tx, **kw).numpy(force=True))
    x, tx = _pair(vals, device, dtype)
    x.requires_grad_()
    tx.requires_grad_()
    x.nan_to_num(**kw).mul(3).sum().backward()
    tx.nan_to_num(**kw).mul(3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(force=True), tx.grad.numpy())
    i, ti = _pair([1, 2], device, "int64")
    assert i.nan_to_num().tolist() == ti.nan_to_num().tolist()
