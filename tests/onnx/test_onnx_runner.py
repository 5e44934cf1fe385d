"""``torch.onnx.export`` in an unmodified PyTorch program under ``python -m plugrad run``: the
file it writes runs in onnxruntime at another batch size with the model's outputs."""
import json
import textwrap

import pytest

from tests.programs.conftest import run_plugrad

pytest.importorskip("onnx", reason="the onnx package is not installed (test extra)")
pytest.importorskip("onnxruntime", reason="the onnxruntime package is not installed (test extra)")

PROGRAM = '''
import json
import numpy as np
import onnxruntime as ort
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return F.log_softmax(self.fc(torch.flatten(x, 1)), dim=1)


torch.manual_seed(0)
model = Net()
model.eval()
dummy = torch.randn(2, 1, 8, 8)
torch.onnx.export(model, dummy, "net.onnx", export_params=True, opset_version=17,
                  do_constant_folding=True, input_names=["input"], output_names=["output"],
                  dynamic_axes={"input": {0: "batch_size"}, "output": {0: "batch_size"}})
session = ort.InferenceSession("net.onnx", providers=["CPUExecutionProvider"])
x = torch.randn(5, 1, 8, 8)
got = session.run(None, {"input": x.cpu().numpy()})[0]
with torch.no_grad():
    expected = model(x).cpu().numpy()
print(json.dumps({"onnx_module": torch.onnx.__name__, "device": str(x.device),
                  "shape": list(got.shape), "diff": float(np.abs(got - expected).max()),
                  "input_shape": [d.dim_param or d.dim_value for d in
                                  __import__("onnx").load("net.onnx").graph.input[0]
                                  .type.tensor_type.shape.dim]}))
'''


@pytest.mark.parametrize("device", ["cpu", "ref"])
def test_torch_onnx_export_under_the_runner(tmp_path, device):
    prog = tmp_path / "export_net.py"
    prog.write_text(textwrap.dedent(PROGRAM))
    r = run_plugrad(["run", "--device", device, str(prog)], tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["onnx_module"] == "plugrad.onnx"
    assert report["device"].startswith(device)
    assert report["shape"] == [5, 10] and report["input_shape"] == ["batch_size", 1, 8, 8]
    assert report["diff"] < 1e-5
