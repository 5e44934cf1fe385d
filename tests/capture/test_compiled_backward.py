"""Compiled calls whose outputs need a graph (``torch.compile(model)``, loss and backward
outside): the forward is replayed, the backward runs the captured backward program through
one ``CompiledFunctionBackward`` node. Gradients and updates equal eager ones bit for bit."""
import numpy as np
import pytest

import plugrad

nn, F = plugrad.nn, plugrad.nn.functional


def _model(device, seed=0):
    plugrad.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(),
                         nn.Linear(8, 3)).to(device)


def _same(a, b):
    return all(np.array_equal(p.detach().cpu().numpy(), q.detach().cpu().numpy())
               for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize("device", ["cpu", "ref"])
@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_compiled_module_trains_as_eager(device, opt):
    eager, comp = _model(device), _model(device)
    compiled = plugrad.compile(comp)
    make = (lambda p: plugrad.optim.SGD(p, lr=0.1, momentum=0.9)) if opt == "sgd" else \
        (lambda p: plugrad.optim.Adam(p, lr=0.01))
    opts = make(eager.parameters()), make(comp.parameters())
    x = plugrad.randn(5, 6, device=device)
    y = plugrad.randint(0, 3, (5,), device=device)
    for _ in range(5):
        for m, o in zip((eager, compiled), opts):
            o.zero_grad()
            out = m(x)
            F.cross_entropy(out, y).backward()
            o.step()
        assert _same(eager, comp)
    report = compiled.explain()
    assert report.replays == 3 and report.eager_calls == 0
    assert out.grad_fn.name() == "CompiledFunctionBackward"


def test_gradients_accumulate_and_unused_outputs_get_zeros():
    w = plugrad.randn(3, 4, requires_grad=True)
    b = plugrad.randn(4, requires_grad=True)

    def fn(x):
        y = x @ w
        return y + b, y.tanh(), (x * 2).sum()  # the last needs no graph

    compiled = plugrad.compile(fn)
    x = plugrad.randn(2, 3)
    expected = []
    for _ in range(2):  # eager reference: only the first output is used, twice
        a, _, _ = fn(x)
        expected.append(plugrad.autograd.grad(a.sum() * 2, (w, b)))
    for _ in range(3):
        a, t, s = compiled(x)
    assert not s.requires_grad and t.grad_fn is a.grad_fn
    (a.sum() * 2).backward()
    a, t, s = compiled(x)
    (a.sum() * 2).backward()  # accumulates into .grad, as eager
    assert np.array_equal(w.grad.numpy(), (expected[0][0] + expected[1][0]).numpy())
    assert np.array_equal(b.grad.numpy(), (expected[0][1] + expected[1][1]).numpy())


def test_two_outputs_backward_together_and_retain_graph():
    w = plugrad.randn(3, requires_grad=True)
    compiled = plugrad.compile(lambda x: ((x * w).exp(), (x + w).sin()))
    x = plugrad.randn(3)
    for _ in range(3):
        p, q = compiled(x)
    loss = (p * 2 + q).sum()
    loss.backward(retain_graph=True)
    first = w.grad.clone()
    loss.backward()
    ep, eq = (x * w).exp(), (x + w).sin()
    ref = plugrad.autograd.grad((ep * 2 + eq).sum(), w)[0]
    assert np.array_equal(first.numpy(), ref.numpy())
    assert np.array_equal(w.grad.numpy(), (ref + ref).numpy())
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


def test_parameter_changed_in_place_before_backward_is_an_error():
    lin = nn.Linear(3, 2)
    compiled = plugrad.compile(lin)
    x = plugrad.randn(4, 3)
    for _ in range(3):
        out = compiled(x)
    with plugrad.no_grad():
        lin.weight.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_second_order_through_a_replay_raises_clearly():
    w = plugrad.randn(3, requires_grad=True)
    compiled = plugrad.compile(lambda x: (x * w).pow(3))
    x = plugrad.randn(3)
    for _ in range(3):
        y = compiled(x)
    with pytest.raises(RuntimeError, match="create_graph"):
        plugrad.autograd.grad(y.sum(), w, create_graph=True)


def test_backward_deciding_on_data_runs_eagerly():
    w = plugrad.randn(4, requires_grad=True)
    compiled = plugrad.compile(lambda x: (x * w).prod())  # prod's rule counts zeros
    x = plugrad.randn(4)
    for _ in range(3):
        y = compiled(x)
    report = compiled.explain()
    assert report.break_reasons and report.replays == 0 and report.eager_calls == 2
    assert "in its backward" in report.break_reasons[0]
    y.backward()
    assert np.array_equal(w.grad.numpy(), plugrad.autograd.grad((x * w).prod(), w)[0].numpy())


def test_no_grad_call_is_a_plain_replay():
    lin = nn.Linear(3, 2)
    compiled = plugrad.compile(lin)
    x = plugrad.randn(4, 3)
    with plugrad.no_grad():
        for _ in range(3):
            out = compiled(x)
    assert not out.requires_grad and compiled.explain().replays == 1


def test_returning_a_parameter_itself_runs_eagerly():
    w = plugrad.randn(3, requires_grad=True)
    compiled = plugrad.compile(lambda x: (w, x * 2))
    for _ in range(3):
        out, _ = compiled(plugrad.ones(3))
    assert out is w and "leaf" in compiled.explain().break_reasons[0]


def test_one_gradient_array_for_two_parameters_stays_two_gradients():
    w1, w2 = plugrad.zeros(3, requires_grad=True), plugrad.zeros(3, requires_grad=True)
    compiled = plugrad.compile(lambda x: w1 + w2 + x)  # both gradients are the seed itself
    for _ in range(4):
        compiled(plugrad.ones(3)).sum().backward()
    assert compiled.explain().replays == 2
    with plugrad.no_grad():
        w1.grad.add_(100)
    assert w1.grad.tolist() == [104.0] * 3 and w2.grad.tolist() == [4.0] * 3
