"""plugrad.onnx.export: the exported graphs pass onnx.checker and run in onnxruntime with
plugrad's outputs (to 1e-5), at the export batch size and at another one (dynamic axes), on
cpu and ref; unsupported kernels and data-dependent forwards fail naming where they came from.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F

onnx = pytest.importorskip("onnx", reason="the onnx package is not installed (test extra)")
ort = pytest.importorskip("onnxruntime",
                          reason="the onnxruntime package is not installed (test extra)")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from char_gpt import CharGPT  # noqa: E402

DEVICES = ["cpu", "ref"]


def _export(model, args, **kw):
    buf = io.BytesIO()
    program = plugrad.onnx.export(model, args, buf, **kw)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    return program, ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])


def _run(session, *arrays):
    names = [i.name for i in session.get_inputs()]
    return session.run(None, {n: a.cpu().numpy() for n, a in zip(names, arrays)})


def _agree(session, model, *inputs, atol=1e-5):
    with plugrad.no_grad():
        expected = model(*inputs)
    if isinstance(expected, tuple):
        expected = expected[0]
    got = _run(session, *inputs)[0]
    assert got.shape == tuple(expected.shape)
    np.testing.assert_allclose(got, expected.cpu().numpy(), rtol=1e-5, atol=atol)


def _conv_net(device):
    plugrad.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 16), nn.ReLU(),
                          nn.Linear(16, 10)).to(device)
    with plugrad.no_grad():  # running statistics that are not the identity
        model[1].running_mean.copy_(plugrad.randn(4) * 0.1)
        model[1].running_var.copy_(plugrad.rand(4) + 0.5)
    return model.eval()


@pytest.mark.parametrize("device", DEVICES)
def test_conv_mlp_dynamic_batch(device):
    model = _conv_net(device)
    program, session = _export(model, (plugrad.randn(2, 1, 8, 8, device=device),),
                               input_names=["image"], output_names=["logits"],
                               dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    out = session.get_outputs()[0]
    assert session.get_inputs()[0].shape == ["batch", 1, 8, 8] and out.shape == ["batch", 10]
    assert {"Conv", "MaxPool", "MatMul"} <= {n.op_type for n in program.model_proto.graph.node}
    for batch in (2, 5):
        _agree(session, model, plugrad.randn(batch, 1, 8, 8, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_char_gpt_dynamic_batch(device):
    plugrad.manual_seed(0)
    n_layer = 2 if device == "cpu" else 1
    model = CharGPT(vocab_size=20, block_size=8, d_model=16, n_layer=n_layer, n_head=2)
    model = model.to(device).eval()
    program, session = _export(model, (plugrad.randint(0, 20, (2, 8), device=device),),
                               input_names=["idx"], output_names=["logits"],
                               dynamic_axes={"idx": {0: "batch"}})
    ops = {n.op_type for n in program.model_proto.graph.node}
    assert {"Gather", "LayerNormalization", "MatMul", "Softmax", "Tanh"} <= ops
    inits = {i.name for i in program.model_proto.graph.initializer}
    assert "tok_emb.weight" in inits and "blocks.0.ln1.weight" in inits
    assert session.get_outputs()[0].shape == ["batch", 8, 20]
    for batch in (2, 5):
        _agree(session, model, plugrad.randint(0, 20, (batch, 8), device=device))


def test_char_gpt_dynamic_batch_and_sequence_opset13():
    plugrad.manual_seed(1)
    model = CharGPT(vocab_size=20, block_size=8, d_model=16, n_layer=1, n_head=2).eval()
    program, session = _export(model, (plugrad.randint(0, 20, (2, 6)),), opset_version=13,
                               input_names=["idx"], dynamic_axes={"idx": [0, 1]})
    assert program.model_proto.opset_import[0].version == 13
    assert "LayerNormalization" not in {n.op_type for n in program.model_proto.graph.node}
    assert session.get_inputs()[0].shape == ["idx_dynamic_axes_1", "idx_dynamic_axes_2"]
    for shape in ((2, 6), (5, 3), (1, 8)):
        _agree(session, model, plugrad.randint(0, 20, shape))


class _Lambda(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _zoo():
    x = (2, 3, 8, 8)
    seq = (2, 4, 8)
    return [
        ("avg_pool", lambda: nn.AvgPool2d(3, 2, 1, count_include_pad=False), [x]),
        ("adaptive_avg_pool", lambda: nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten()), [x]),
        ("group_norm", lambda: nn.GroupNorm(3, 3), [x]),
        ("instance_norm", lambda: nn.InstanceNorm2d(3), [x]),
        ("rms_norm", lambda: nn.RMSNorm(8), [seq]),
        ("layer_norm_no_affine", lambda: nn.LayerNorm((4, 8), elementwise_affine=False), [seq]),
        ("conv1d_stride", lambda: nn.Conv1d(3, 4, 3, stride=2, padding=1), [(2, 3, 10)]),
        ("conv_transpose", lambda: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1,
                                                      output_padding=1), [x]),
        ("activations", lambda: nn.Sequential(nn.LeakyReLU(0.1), nn.ELU(), nn.Hardswish(),
                                              nn.SiLU(), nn.GELU(), nn.Sigmoid(), nn.Tanh(),
                                              nn.Softplus(), nn.Mish()), [x]),
        ("softmaxes", lambda: _Lambda(lambda t: F.softmax(t, 1) + F.log_softmax(t, -1)), [x]),
        ("attention_mask", lambda: _Lambda(lambda q: F.scaled_dot_product_attention(
            q, q, q, attn_mask=plugrad.zeros(4, 4))), [(2, 2, 4, 8)]),
        ("multihead_attention", lambda: nn.MultiheadAttention(8, 2, batch_first=True),
         [seq, seq, seq]),
        ("transformer_layer", lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                                 batch_first=True), [seq]),
        ("lstm", lambda: nn.LSTM(8, 6, batch_first=True), [seq]),
        ("gru_bidirectional", lambda: nn.GRU(8, 6, batch_first=True, bidirectional=True), [seq]),
        ("movement", lambda: _Lambda(lambda t: plugrad.cat(
            [t[:, 1:3, ::2, -1] * 2, t.flip(1)[:, :2, :4, 0], t.permute(0, 2, 1, 3)[:, :2, 0, :4]],
            1) + t[-1].sum() + t.mean(0).amax()), [x]),
        ("reductions_casts", lambda: _Lambda(lambda t: t.argmax(1, keepdim=True).float()
                                             + t.sum((2, 3), keepdim=True) - t.amin(1, True)
                                             + (t > 0).float() * t.abs().sqrt()), [x]),
        ("shapes_follow_batch", lambda: _Lambda(lambda t: plugrad.zeros(t.shape[0], 3)
                                                + t.view(t.size(0), -1)[:, :3].clamp(0, 1)
                                                + plugrad.ones(1, 3).expand(t.shape[0], 3)),
         [x]),
        ("where_comparisons", lambda: _Lambda(lambda t: plugrad.where(
            (t > 0) & (t != 1), t, -t).relu() ** 2 // 1 % 3), [x]),
        ("embedding_upsample", lambda: nn.Sequential(nn.Upsample(scale_factor=2)), [x]),
    ]


@pytest.mark.parametrize("name,make,shapes", _zoo(), ids=[z[0] for z in _zoo()])
def test_model_zoo_dynamic_batch(name, make, shapes):
    plugrad.manual_seed(0)
    model = make().eval()
    names = [f"x{i}" for i in range(len(shapes))]
    _, session = _export(model, tuple(plugrad.randn(*s) for s in shapes), input_names=names,
                         dynamic_axes={n: {0: "batch"} for n in names})
    for batch in (2, 5):
        _agree(session, model, *[plugrad.randn(batch, *s[1:]) for s in shapes])


def test_max_pool_indices_and_ceil_mode():
    model = _Lambda(lambda t: F.max_pool2d(t, 3, 2, ceil_mode=True, return_indices=True))
    x = plugrad.randn(2, 3, 8, 8)
    _, session = _export(model, (x,), input_names=["x"], dynamic_axes={"x": [0]})
    x = plugrad.randn(4, 3, 8, 8)
    out, idx = _run(session, x)
    expected_out, expected_idx = model(x)
    np.testing.assert_array_equal(out, expected_out.numpy())
    np.testing.assert_array_equal(idx, expected_idx.numpy())


def test_embedding_and_int_inputs():
    model = nn.Embedding(10, 4).eval()
    _, session = _export(model, (plugrad.randint(0, 10, (2, 3)),), input_names=["ids"],
                         dynamic_axes={"ids": {0: "n", 1: "t"}})
    _agree(session, model, plugrad.tensor([[1, 9, 0, 4]]))


def test_converters_are_contract_kernels():
    from plugrad.backends.contract import optional_kernels, required_primitives
    from plugrad.onnx._ops import CONVERTERS
    assert set(CONVERTERS) <= set(required_primitives()) | set(optional_kernels())


def test_unsupported_kernel_names_it_and_where_it_came_from():
    class Angle(nn.Module):
        def forward(self, x):
            return plugrad.atan2(x, x + 1)
    model = nn.Sequential(nn.Linear(3, 3), Angle())
    with pytest.raises(plugrad.onnx.UnsupportedOperatorError,
                       match=r"kernel 'atan2' in module 1 \(Angle\) at test_onnx_export\.py:\d+"
                             r".*cannot be exported to ONNX"):
        plugrad.onnx.export(model, (plugrad.randn(2, 3),), io.BytesIO())


def test_value_read_to_python_is_an_error_with_its_reason():
    class Branchy(nn.Module):
        def forward(self, x):
            return x * 2 if x.sum().item() > 0 else x
    with pytest.raises(plugrad.onnx.OnnxExporterError, match=r"read to Python \(\.item\(\)"):
        plugrad.onnx.export(Branchy(), plugrad.randn(3), io.BytesIO())


def test_size_that_does_not_follow_the_axis_is_found_out():
    half = _Lambda(lambda t: t[: t.shape[0] // 2] * 2)  # B // 2 is not c * B + b
    with pytest.raises(plugrad.onnx.OnnxExporterError, match=r"kernel call 0 \(slice\).*"
                                                              r"does not follow dynamic axis"):
        plugrad.onnx.export(half, plugrad.randn(4, 3), io.BytesIO(), dynamic_axes={"t": [0]},
                            input_names=["t"])
    _, session = _export(half, plugrad.randn(4, 3))  # without dynamic axes it is fine
    _agree(session, half, plugrad.randn(4, 3))


def test_export_to_path_mode_restored_and_is_in_onnx_export(tmp_path):
    seen = []

    class Probe(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x, scale=1.0):
            seen.append((plugrad.onnx.is_in_onnx_export(), self.training))
            return self.fc(x) * scale, x.sum(1)

    model = Probe()
    path = tmp_path / "probe.onnx"
    program = plugrad.onnx.export(model, (plugrad.randn(4, 3), {"scale": 3.0}), str(path),
                                  dynamic_axes={"x": [0]})
    assert model.training and not plugrad.onnx.is_in_onnx_export()
    assert seen and all(s == (True, False) for s in seen)
    proto = onnx.load(str(path))
    assert [i.name for i in proto.graph.input] == ["x"]
    assert [o.name for o in proto.graph.output] == ["output_0", "output_1"]
    assert {"fc.weight", "fc.bias"} <= {i.name for i in proto.graph.initializer}
    assert "ONNXProgram" in repr(program)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = plugrad.randn(7, 3)
    a, b = session.run(None, {"x": x.numpy()})
    with plugrad.no_grad():
        ea, eb = model(x, scale=3.0)
    np.testing.assert_allclose(a, ea.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b, eb.numpy(), rtol=1e-5, atol=1e-6)


def test_bad_arguments():
    model = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="opset_version 99"):
        plugrad.onnx.export(model, plugrad.randn(1, 2), io.BytesIO(), opset_version=99)
    with pytest.raises(NotImplementedError, match="dynamic_shapes"):
        plugrad.onnx.export(model, plugrad.randn(1, 2), io.BytesIO(), dynamic_shapes={"x": {}})
    with pytest.warns(UserWarning, match="not a valid input/output name"):
        plugrad.onnx.export(model, plugrad.randn(1, 2), io.BytesIO(), dynamic_axes={"y": [0]})
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = plugrad.onnx.export(model, plugrad.randn(1, 2), io.BytesIO(),
                                      opset_version=11)
    version = program.model_proto.opset_import[0].version
    warned = any("opset 11" in str(w.message) for w in caught)
    assert (version, warned) in ((11, False), (13, True))
