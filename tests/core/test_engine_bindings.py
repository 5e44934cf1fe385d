"""The engine: one loop, two bindings of every rule.

``loss.backward()`` runs each node's rule on its own kernel table with bare arrays;
``create_graph=True`` runs the same rule on the differentiable Tensor ops. The conformance
suite holds the two bindings bit-equal for every public op (``test_backward_paths``); this
module covers the ``nn.functional`` nodes, that the plain pass touches no Tensor, and the
per-node details (hooks, captures, devices) of the one loop.
"""
import numpy as np
import pytest

import plugrad as torch
import plugrad.nn.functional as F
from plugrad.core.autograd import engine
from plugrad.testing import assert_close


def _leaf(rng, *shape, device="cpu", dtype=torch.float32):
    return torch.tensor(rng.standard_normal(shape), dtype=dtype, device=device,
                        requires_grad=True)


def _both_bindings(fn, leaves):
    """Gradients of ``fn()`` by ``backward()`` (arrays) and ``autograd.grad`` with
    ``create_graph=True`` (Tensor ops)."""
    out = fn()
    w = torch.tensor(np.linspace(0.5, 1.5, max(out.numel(), 1)).reshape(tuple(out.shape)),
                     dtype=out.dtype, device=out.device)
    loss = (out * w).sum()
    expected = torch.autograd.grad(loss, leaves, retain_graph=True, allow_unused=True,
                                   create_graph=True)
    loss.backward()
    return [t.grad for t in leaves], [None if e is None else e.detach() for e in expected]


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
def test_the_two_bindings_agree_bit_for_bit(case):
    *leaves, fn = CASES[case](np.random.default_rng(0))
    got, expected = _both_bindings(fn, leaves)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g is not None and e is not None, f"{case}: input {i} has no gradient"
        assert g.dtype is e.dtype, f"{case}: input {i}: {g.dtype} vs {e.dtype}"
        assert_close(g, e, rtol=0, atol=0, msg=f"{case}: input {i}")


def _no_tensor_binding(monkeypatch):
    """Make any use of the Tensor binding or of a Tensor rule in backward fail loudly."""
    def refuse(*_):
        raise AssertionError("the plain backward pass used the Tensor binding")
    monkeypatch.setattr(engine, "tensor_ops_for", refuse)
    monkeypatch.setattr(engine, "_run_tensor_rule", refuse)


def test_a_training_step_runs_every_rule_on_arrays(monkeypatch):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(),
                                torch.nn.LayerNorm(16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 4))
    x = torch.randn(5, 8)
    loss = F.cross_entropy(model(x).sigmoid().exp().float(), torch.tensor([0, 1, 2, 3, 0]))
    _no_tensor_binding(monkeypatch)
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())


def test_create_graph_records_the_backward_pass():
    x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad((x.sin() * x).sum(), x, create_graph=True)
    assert g.grad_fn is not None
    (h,) = torch.autograd.grad(g.sum(), x)
    xv = np.array([0.5, 1.5])
    np.testing.assert_allclose(h.numpy(), 2 * np.cos(xv) - xv * np.sin(xv))


def test_hooks_are_a_per_node_detail():
    """A hooked node takes the detailed path; the graph next to it stays plain."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    y.register_hook(lambda g: g * 10.0)
    y.retain_grad()
    y.sum().backward()
    assert x.grad.tolist() == [30.0, 30.0] and y.grad.tolist() == [10.0, 10.0]
    z = torch.tensor([1.0], requires_grad=True)
    assert not (z * 2.0).grad_fn.special  # nothing sticky for later graphs


def test_node_hooks_see_tensors():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    seen = []
    y.grad_fn.register_hook(lambda ins, outs: seen.append((type(ins[0]), type(outs[0]))))
    y.grad_fn.register_prehook(lambda outs: (outs[0] * 2.0,))
    y.sum().backward()
    assert seen == [(torch.Tensor, torch.Tensor)]
    assert_close(x.grad, 2.0 * torch.tensor([1.0, 2.0]).exp())


def test_a_graph_across_devices_runs_each_node_on_its_table():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2.0).to("ref")
    loss = (y * y).sum()
    loss.backward()
    assert x.grad.tolist() == [8.0, 16.0] and x.grad.device.type == "cpu"


def test_autograd_grad_runs_only_what_leads_to_its_inputs(monkeypatch):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    side = b.exp()  # not on a path to ``a``
    loss = (a * 2.0).sum() + side.sum()
    ran = []
    side.grad_fn.register_prehook(lambda g: ran.append("exp"))
    (ga,) = torch.autograd.grad(loss, [a])
    assert ga.tolist() == [2.0, 2.0] and ran == [] and b.grad is None


def test_several_outputs_of_one_node_as_roots():
    """``backward`` from two outputs of one node (a custom Function): both gradients."""
    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0, x * 3.0

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2.0 + gb * 3.0

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a, b = Two.apply(x)
    torch.autograd.backward([a, b], [torch.ones(2), torch.ones(2)])
    assert x.grad.tolist() == [5.0, 5.0]


def test_a_node_that_saved_nothing_can_run_twice():
    """As in PyTorch: only freed saved values stop a second backward."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x + 1.0
    y.sum().backward()
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_split_pieces_share_one_node():
    x = torch.arange(6.0, requires_grad=True)
    parts = x.split(2)
    assert len({id(p.grad_fn) for p in parts}) == 1
    (parts[0].sum() * 1.0 + parts[2].sum() * 3.0).backward()
    assert x.grad.tolist() == [1.0, 1.0, 0.0, 0.0, 3.0, 3.0]


def test_deep_chains_need_no_recursion():
    x = torch.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(20000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_leaf_gradients_are_not_aliased():
    """``a + b`` hands one array to both operands; each .grad must own its memory."""
    a = torch.zeros(3, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    (a + b).sum().backward()
    a.grad.add_(1.0)
    assert b.grad.tolist() == [1.0, 1.0, 1.0]


def test_inplace_change_of_a_saved_tensor_is_caught():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    z = y * y
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_leaf_hooks_run_in_array_mode():
    """DDP's hooks sit on leaves: they run on the summed gradient, before accumulation."""
    seen = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: seen.append(g.tolist()) or g * 2.0)
    (x * 3.0 + x).sum().backward()
    assert seen == [[4.0, 4.0]] and x.grad.tolist() == [8.0, 8.0]


def test_shared_subgraphs_run_once_after_all_consumers():
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


def test_second_backward_through_a_freed_graph_raises():
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
