"""Module behaviour: registration, traversal, modes, device/dtype moves, state dicts, hooks,
printing, containers, Parameter."""
from collections import OrderedDict

import numpy as np
import pytest

import plugrad
import plugrad.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 2, bias=False)
        self.scale = nn.Parameter(plugrad.ones(1))
        self.register_buffer("steps", plugrad.zeros(1))
        self.register_buffer("cache", plugrad.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


# ------------------------------------------------------------------ Parameter
def test_parameter_shares_array_and_requires_grad():
    t = plugrad.zeros(3)
    p = nn.Parameter(t)
    assert isinstance(p, plugrad.Tensor) and p.requires_grad and p.is_leaf
    with plugrad.no_grad():
        p.add_(1.0)
    assert t.tolist() == [1.0, 1.0, 1.0]  # same array
    assert repr(p).startswith("Parameter containing:\ntensor([1., 1., 1.], requires_grad=True)")
    assert not nn.Parameter(plugrad.zeros(1), requires_grad=False).requires_grad
    assert type(p * 2) is plugrad.Tensor


def test_parameter_rejects_non_tensor():
    with pytest.raises(TypeError, match="expected a Tensor"):
        nn.Parameter([1.0, 2.0])


# ------------------------------------------------------------------ registration
def test_setattr_registers_parameters_buffers_modules_in_order():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "cache"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert len(list(net.modules())) == 4 and len(list(net.children())) == 3
    assert net.fc2.bias is None
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]


def test_reassigning_and_deleting_attributes():
    net = Net()
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'scale'"):
        net.scale = plugrad.ones(1)
    net.scale = None
    assert "scale" not in [n for n, _ in net.named_parameters()]
    net.steps = plugrad.ones(1)  # buffer stays a buffer
    assert net.get_buffer("steps").tolist() == [1.0]
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer"):
        net.steps = 3
    del net.fc1
    assert "fc1" not in dict(net.named_children())
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'fc1'"):
        net.fc1


def test_register_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", plugrad.zeros(1))
    with pytest.raises(TypeError, match=r"torch.nn.Parameter or None required"):
        m.register_parameter("w", plugrad.zeros(1))
    m.x = 1
    with pytest.raises(KeyError, match="attribute 'x' already exists"):
        m.register_buffer("x", plugrad.zeros(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("y", 3)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(plugrad.zeros(1))
    with pytest.raises(AttributeError, match=r"before Module.__init__\(\) call"):
        Early()


def test_buffer_marker_and_shared_parameters_deduplicated():
    m = nn.Module()
    m.b = nn.Buffer(plugrad.zeros(2), persistent=False)
    assert [n for n, _ in m.named_buffers()] == ["b"] and "b" not in m.state_dict()
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_modules())) == 2


def test_missing_forward_is_reported():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


def test_get_submodule_parameter_buffer():
    net = nn.Sequential(OrderedDict(block=Net()))
    assert net.get_submodule("block.fc1") is net.block.fc1
    assert net.get_parameter("block.fc1.weight") is net.block.fc1.weight
    with pytest.raises(AttributeError, match="Net has no attribute `nope`"):
        net.get_submodule("block.nope")
    with pytest.raises(AttributeError, match="has no parameter `nope`"):
        net.get_parameter("block.nope")


# ------------------------------------------------------------------ modes and grads
def test_train_eval_apply_requires_grad():
    net = Net()
    assert net.training and net.fc1.training
    assert net.eval() is net and not net.fc1.training and not net.act.training
    net.train()
    assert net.fc2.training
    with pytest.raises(ValueError, match="boolean"):
        net.train("no")
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Net"]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_zero_grad(device):
    net = Net().to(device)
    net(plugrad.randn(5, 3, device=device)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0.0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


# ------------------------------------------------------------------ moving
def test_to_keeps_parameter_identity_and_converts_floats_only():
    net = nn.BatchNorm1d(3)
    w = net.weight
    net.weight.grad = plugrad.ones(3)
    assert net.double() is net
    assert net.weight is w and isinstance(w, nn.Parameter)
    assert w.dtype == plugrad.float64 and w.grad.dtype == plugrad.float64
    assert net.running_mean.dtype == plugrad.float64
    assert net.num_batches_tracked.dtype == plugrad.int64
    net.to(plugrad.float32)
    assert w.dtype == plugrad.float32
    net.float()
    with pytest.raises(TypeError, match="floating point dtypes"):
        net.to(plugrad.int64)


def test_to_device_moves_params_in_place(device):
    net = Net()
    p = net.fc1.weight
    before = p.tolist()
    net.to(device)
    assert net.fc1.weight is p and p.device.type == device
    assert net.steps.device.type == device and p.tolist() == before
    net.cpu()
    assert p.device.type == "cpu"


# ------------------------------------------------------------------ state dict
def test_state_dict_contents_and_round_trip():
    a, b = Net(), Net()
    sd = a.state_dict()
    assert list(sd) == ["scale", "steps", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert not sd["fc1.weight"].requires_grad  # detached
    assert a.state_dict(keep_vars=True)["fc1.weight"] is a.fc1.weight
    w = b.fc1.weight
    result = b.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    assert b.fc1.weight is w and b.fc1.weight.tolist() == a.fc1.weight.tolist()


def test_load_state_dict_reports_every_problem_at_once():
    net = Net()
    sd = net.state_dict()
    del sd["fc1.bias"], sd["steps"]
    sd["extra"] = plugrad.zeros(1)
    sd["fc2.weight"] = plugrad.zeros(3, 3)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd)
    assert str(info.value) == (
        "Error(s) in loading state_dict for Net:\n"
        '\tMissing key(s) in state_dict: "steps", "fc1.bias". \n'
        '\tUnexpected key(s) in state_dict: "extra". \n'
        "\tsize mismatch for fc2.weight: copying a param with shape plugrad.Size([3, 3]) from "
        "checkpoint, the shape in current model is plugrad.Size([2, 4]).")


def test_load_state_dict_non_strict_returns_keys():
    net = Net()
    sd = net.state_dict()
    del sd["scale"]
    sd["junk"] = plugrad.zeros(1)
    missing, unexpected = net.load_state_dict(sd, strict=False)
    assert missing == ["scale"] and unexpected == ["junk"]
    sd["fc1.bias"] = plugrad.zeros(7)
    with pytest.raises(RuntimeError, match="size mismatch for fc1.bias"):
        net.load_state_dict(sd, strict=False)


# ------------------------------------------------------------------ hooks
def test_forward_hooks_modify_and_remove():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 1)
    out = lin(plugrad.ones(1, 2))
    assert np.allclose(out.tolist(), (lin.bias + 1).tolist()) and calls == [(1, 2)]
    h1.remove()
    h2.remove()
    out = lin(plugrad.ones(1, 2))
    assert np.allclose(out.tolist(), (lin.weight.sum(1) + lin.bias).tolist())
    order = []
    lin.register_forward_hook(lambda *a: order.append("a"))
    lin.register_forward_hook(lambda *a: order.append("b"), prepend=True)
    lin(plugrad.ones(2))
    assert order == ["b", "a"]


# ------------------------------------------------------------------ printing
def test_repr_matches_pytorch_format():
    assert repr(nn.Linear(1, 1)) == "Linear(in_features=1, out_features=1, bias=True)"
    net = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Dropout(0.2)))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (1): Sequential(\n"
        "    (0): ReLU()\n"
        "    (1): Dropout(p=0.2, inplace=False)\n"
        "  )\n"
        ")")
    assert repr(nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()])) == (
        "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n)")
    assert repr(nn.Conv2d(1, 2, 3, stride=2, padding=1, bias=False)) == (
        "Conv2d(1, 2, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)")
    assert repr(nn.BatchNorm2d(4)) == (
        "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, "
        "track_running_stats=True)")
    assert repr(nn.LayerNorm(5)) == "LayerNorm((5,), eps=1e-05, elementwise_affine=True)"
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.Embedding(10, 3, padding_idx=0)) == "Embedding(10, 3, padding_idx=0)"


# ------------------------------------------------------------------ containers
def test_sequential_indexing_slicing_append():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b)
    seq.append(c)
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == [b, c]
    assert [n for n, _ in sub.named_children()] == ["1", "2"]
    with pytest.raises(IndexError, match="out of range"):
        seq[3]
    del seq[0]
    assert list(seq._modules) == ["0", "1"] and seq[0] is b
    seq[0] = nn.Tanh()
    assert isinstance(seq[0], nn.Tanh)
    named = nn.Sequential(OrderedDict(first=a, second=b))
    assert named.first is a and named(plugrad.ones(4, 2)).shape == (4, 3)


def test_module_list_and_dict_register_children():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    layers.insert(0, nn.ReLU())
    assert len(layers) == 4 and isinstance(layers[0], nn.ReLU)
    assert len(list(layers.parameters())) == 6
    assert isinstance(layers[1:], nn.ModuleList) and len(layers[1:]) == 3
    assert isinstance(layers.pop(0), nn.ReLU) and len(layers) == 3
    d = nn.ModuleDict({"a": nn.Linear(1, 1)})
    d["b"] = nn.ReLU()
    assert list(d) == ["a", "b"] and "a" in d and len(d) == 2
    assert [n for n, _ in d.named_parameters()] == ["a.weight", "a.bias"]
    del d["a"]
    assert list(d.keys()) == ["b"]


def test_parameter_list_and_dict_register_and_train():
    import plugrad.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([plugrad.ones(2), plugrad.zeros(2)])
            self.named = nn.ParameterDict({"scale": plugrad.tensor(2.0)})

        def forward(self, x):
            return (self.ws[0] * x + self.ws[1]).sum() * self.named["scale"]

    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["ws.0", "ws.1", "named.scale"]
    assert all(isinstance(p, nn.Parameter) for p in net.parameters())
    net(plugrad.tensor([1.0, 2.0])).backward()
    assert net.ws[0].grad.tolist() == [2.0, 4.0] and net.named["scale"].grad.item() == 3.0
    net.ws.append(plugrad.ones(1))
    assert len(net.ws) == 3 and "ws.2" in net.state_dict()
    with pytest.raises(IndexError, match="out of range"):
        net.ws[5]
