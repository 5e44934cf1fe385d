"""The engine's array mode: ``loss.backward()`` running the nodes' array rules.

The conformance suite holds every public op's two rules to the same gradients
(``test_backward_paths``); this module covers the ``nn.functional`` nodes with array rules,
that the mode is really taken, and that what it must not handle goes the general way.
"""
import numpy as np
import pytest

import plugrad as torch
import plugrad.nn.functional as F
from plugrad.core.autograd import array_mode
from plugrad.testing import assert_close


def _leaf(rng, *shape, device="cpu", dtype=torch.float32):
    return torch.tensor(rng.standard_normal(shape), dtype=dtype, device=device,
                        requires_grad=True)


@pytest.fixture(params=[False, True], ids=["no_walk", "walk"])
def walk(request):
    """With and without the walk that looks for hooked nodes first (see array_mode)."""
    with array_mode.forced_walk(request.param):
        yield request.param


def _both_paths(fn, leaves):
    """Gradients of ``fn()`` by ``backward()`` and by ``autograd.grad`` (Tensor rules)."""
    out = fn()
    w = torch.tensor(np.linspace(0.5, 1.5, max(out.numel(), 1)).reshape(tuple(out.shape)),
                     dtype=out.dtype, device=out.device)
    loss = (out * w).sum()
    expected = torch.autograd.grad(loss, leaves, retain_graph=True, allow_unused=True)
    loss.backward()
    return [t.grad for t in leaves], list(expected)


CASES = {
    "linear_2d": lambda r: ((x := _leaf(r, 5, 4)), (w := _leaf(r, 3, 4)), (b := _leaf(r, 3)),
                            lambda: F.linear(x, w, b)),
    "linear_3d_no_bias": lambda r: ((x := _leaf(r, 2, 5, 4)), (w := _leaf(r, 3, 4)),
                                    lambda: F.linear(x, w)),
    "linear_1d": lambda r: ((x := _leaf(r, 4)), (w := _leaf(r, 3, 4)), (b := _leaf(r, 3)),
                            lambda: F.linear(x, w, b)),
    "conv2d": lambda r: ((x := _leaf(r, 2, 3, 6, 5)), (w := _leaf(r, 4, 3, 3, 3)),
                         (b := _leaf(r, 4)), lambda: F.conv2d(x, w, b, stride=2, padding=1)),
    "conv2d_groups": lambda r: ((x := _leaf(r, 1, 4, 5, 5)), (w := _leaf(r, 4, 2, 2, 2)),
                                lambda: F.conv2d(x, w, groups=2, dilation=2)),
    "cross_entropy": lambda r: ((x := _leaf(r, 6, 5)),
                                lambda: F.cross_entropy(x, torch.tensor([0, 4, 2, 2, 1, 3]))),
    "cross_entropy_ignored_sum": lambda r: (
        (x := _leaf(r, 3, 4, 2)),
        lambda: F.cross_entropy(x, torch.tensor([[0, 3], [-1, 2], [1, -1]]), ignore_index=-1,
                                reduction="sum")),
    "cross_entropy_options": lambda r: (
        (x := _leaf(r, 4, 3, 2)),
        lambda: F.cross_entropy(x, torch.tensor([[0, 2], [1, -100], [2, 2], [0, 1]]),
                                weight=torch.tensor([0.5, 2.0, 1.0]), ignore_index=-100,
                                label_smoothing=0.2,
                                reduction="none")),
    "softmax_chain": lambda r: ((x := _leaf(r, 3, 4)),
                                lambda: x.softmax(-1) * x.log_softmax(0)),
    "broadcast_arith": lambda r: ((a := _leaf(r, 3, 1)), (b := _leaf(r, 4)),
                                  lambda: (a * b - b / (a * a + 1.0) + 2.0 * a) ** 3),
    "mixed_dtypes": lambda r: ((a := _leaf(r, 3)), (b := _leaf(r, 3, dtype=torch.float64)),
                               lambda: a * b + a - b / a),
    "views": lambda r: ((x := _leaf(r, 2, 3, 4)),
                        lambda: x.permute(2, 0, 1).reshape(4, 6).narrow(1, 1, 3).mean(0)),
    "batched_matmul": lambda r: ((a := _leaf(r, 2, 3, 4)), (b := _leaf(r, 4, 5)),
                                 lambda: a @ b),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_array_rules_agree_with_tensor_rules(case, walk):
    *leaves, fn = CASES[case](np.random.default_rng(0))
    got, expected = _both_paths(fn, leaves)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g is not None and e is not None, f"{case}: input {i} has no gradient"
        assert g.dtype is e.dtype, f"{case}: input {i}: {g.dtype} vs {e.dtype}"
        assert_close(g, e, rtol=0, atol=0, msg=f"{case}: input {i}")


def test_a_training_step_runs_no_tensor_rule(monkeypatch, walk):
    """An MLP step's nodes all have array rules: the fallback is never called."""
    calls = []
    original = array_mode._tensor_rule
    monkeypatch.setattr(array_mode, "_tensor_rule",
                        lambda node, *a: calls.append(node.name()) or original(node, *a))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    loss = F.cross_entropy(model(torch.randn(5, 8)), torch.tensor([0, 1, 2, 3, 0]))
    loss.backward()
    assert calls == []
    assert all(p.grad is not None for p in model.parameters())


def test_nodes_without_array_rule_fall_back(monkeypatch, walk):
    calls = []
    original = array_mode._tensor_rule
    monkeypatch.setattr(array_mode, "_tensor_rule",
                        lambda node, *a: calls.append(node.name()) or original(node, *a))
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    x.sin().sum().backward()
    assert calls == ["SinBackward0"]
    assert_close(x.grad, torch.tensor([0.5, 1.0]).cos())


def test_hooks_take_the_general_path():
    """(Registering a hook turns the engine's walk for hooked nodes on for good.)"""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    y.register_hook(lambda g: g * 10.0)
    y.retain_grad()
    y.sum().backward()
    assert x.grad.tolist() == [30.0, 30.0] and y.grad.tolist() == [10.0, 10.0]
    assert array_mode.needs_general_path(y.sum().grad_fn)


def test_a_graph_across_devices_takes_the_general_path():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2.0).to("ref")
    loss = (y * y).sum()
    assert array_mode.needs_general_path(loss.grad_fn)
    loss.backward()
    assert x.grad.tolist() == [8.0, 16.0] and x.grad.device.type == "cpu"


def test_leaf_gradients_are_not_aliased(walk):
    """``a + b`` hands one array to both operands; each .grad must own its memory."""
    a = torch.zeros(3, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    (a + b).sum().backward()
    a.grad.add_(1.0)
    assert b.grad.tolist() == [1.0, 1.0, 1.0]


def test_inplace_change_of_a_saved_tensor_is_caught(walk):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    z = y * y
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_leaf_hooks_run_in_array_mode(walk):
    """DDP's hooks sit on leaves: they run on the summed gradient, before accumulation."""
    seen = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: seen.append(g.tolist()) or g * 2.0)
    (x * 3.0 + x).sum().backward()
    assert seen == [[4.0, 4.0]] and x.grad.tolist() == [8.0, 8.0]


def test_shared_subgraphs_run_once_after_all_consumers(walk):
    """A diamond and a node reused at several depths: each node's gradient is complete
    before it runs, whatever the order the graph was built in."""
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    a = x * 2.0
    b = a.exp()
    c = a * b + a
    d = (c * a).sum() + b.sum() * 3.0 + a.sum()
    d.backward()
    xv = np.array([0.5, -1.0, 2.0])
    av = 2 * xv
    # d = sum((a e^a + a) a) + 3 sum(e^a) + sum(a); dd/da = 2a e^a + a^2 e^a + 2a + 3 e^a + 1
    dda = 2 * av * np.exp(av) + av ** 2 * np.exp(av) + 2 * av + 3 * np.exp(av) + 1
    np.testing.assert_allclose(x.grad.numpy(), 2 * dda, rtol=1e-6)


def test_second_backward_through_a_freed_graph_raises(walk):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_general_path_first_in_a_fresh_process():
    """The general engine shares the leaf accumulation with array mode: it must work when
    it is the first backward a process runs (nothing bound lazily beforehand)."""
    import subprocess
    import sys
    code = ("import plugrad as torch\n"
            "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "y = x * 3.0\n"
            "y.register_hook(lambda g: g * 10.0)\n"
            "y.sum().backward()\n"
            "print(x.grad.tolist())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[30.0, 30.0]"
