"""Module hooks against PyTorch's: full backward hooks and pre-hooks (what they see, when
they run, replacement gradients), forward hooks with kwargs and always_call."""
import numpy as np
import pytest

import plugrad

torch = pytest.importorskip("torch")

W = np.random.default_rng(0).normal(size=(3, 4))
X = np.random.default_rng(1).normal(size=(2, 4))


class Two(object):
    """A module of two tensor inputs and two outputs, written once for both libraries."""

    @staticmethod
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(4, 3, bias=False)
                with lib.no_grad():
                    self.lin.weight.copy_(lib.tensor(W, dtype=lib.float64))

            def forward(self, x, y, scale=1.0):
                h = self.lin(x) * scale
                return h.tanh(), h * y.sum()

        return M().double()


def _run(lib, device, hooks, x_grad=True, y_grad=True, replace=None):
    """Record what each hook saw (as NumPy) and the leaf gradients afterwards."""
    m = Two.make(lib)
    if lib is plugrad:
        m = m.to(device)
    seen = []

    def as_np(t):
        return None if t is None else t.detach().cpu().numpy().copy()

    def full(module, grad_input, grad_output):
        seen.append(("full", [as_np(g) for g in grad_input], [as_np(g) for g in grad_output]))
        if replace == "input":
            return tuple(None if g is None else g * 2 for g in grad_input)

    def pre(module, grad_output):
        seen.append(("pre", [as_np(g) for g in grad_output]))
        if replace == "output":
            return tuple(None if g is None else g * 3 for g in grad_output)

    if "pre" in hooks:
        m.register_full_backward_pre_hook(pre)
    if "full" in hooks:
        m.register_full_backward_hook(full)
    kw = dict(dtype=lib.float64)
    if lib is plugrad:
        kw["device"] = device
    x = lib.tensor(X, requires_grad=x_grad, **kw)
    y = lib.tensor(X[:, :3], requires_grad=y_grad, **kw)
    a, b = m(x, y, scale=0.5)
    (a.sum() + (b * b).sum()).backward()
    grads = [as_np(t.grad) for t in (x, y, m.lin.weight)]
    return seen, grads, type(a.grad_fn).__name__ if lib is torch else a.grad_fn.name()


def _same(p, t):
    assert (p is None) == (t is None)
    if p is not None:
        np.testing.assert_allclose(p, t, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("hooks", [("full",), ("pre",), ("pre", "full")])
@pytest.mark.parametrize("replace", [None, "input", "output"])
@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, False)])
def test_full_backward_hooks_match_pytorch(device, hooks, replace, needs):
    got = _run(plugrad, device, hooks, *needs, replace=replace)
    want = _run(torch, None, hooks, *needs, replace=replace)
    assert [s[0] for s in got[0]] == [s[0] for s in want[0]]  # the same hooks, in order
    for g, w in zip(got[0], want[0]):
        for gs, ws in zip(g[1:], w[1:]):
            assert len(gs) == len(ws)
            for p, t in zip(gs, ws):
                _same(p, t)
    for p, t in zip(got[1], want[1]):
        _same(p, t)
    assert got[2] == want[2] == "BackwardHookFunctionBackward"


def test_backward_hook_results_are_checked(device):
    m = plugrad.nn.Linear(2, 2).to(device)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    x = plugrad.ones(1, 2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="invalid number of grads, expected 1, but got 2"):
        m(x).sum().backward()


def test_removed_backward_hook_stops_running(device):
    calls = []
    m = plugrad.nn.Linear(2, 2).to(device)
    handle = m.register_full_backward_hook(lambda *a: calls.append(1))
    x = plugrad.ones(1, 2, device=device, requires_grad=True)
    m(x).sum().backward()
    handle.remove()
    m(x).sum().backward()
    assert calls == [1]
    assert m(x).grad_fn.name() == "AddmmBackward0"  # no identity nodes once unhooked


def test_forward_hooks_with_kwargs_and_always_call_match_pytorch():
    def run(lib):
        log = []

        def pre(mod, args, kwargs):
            log.append(("pre", sorted(kwargs)))
            return args, kwargs

        def post(mod, args, kwargs, out):
            log.append(("post", sorted(kwargs), tuple(out.shape)))

        class Boom(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        class Scaled(lib.nn.Linear):
            def forward(self, x, scale=1.0):
                return super().forward(x) * scale

        m = Scaled(2, 2)
        m.register_forward_pre_hook(pre, with_kwargs=True)
        m.register_forward_hook(post, with_kwargs=True)
        m(lib.ones(3, 2), scale=2.0)
        boom = Boom()
        boom.register_forward_hook(lambda mod, args, out: log.append(("always", out)),
                                   always_call=True)
        boom.register_forward_hook(lambda mod, args, out: log.append(("never", out)))
        with pytest.raises(ValueError, match="boom"):
            boom(lib.ones(1))
        bad = lib.nn.Linear(2, 2)
        bad.register_forward_pre_hook(lambda mod, args, kwargs: args, with_kwargs=True)
        with pytest.raises(RuntimeError, match="must return None or a tuple of"):
            bad(lib.ones(1, 2))
        return log

    assert run(plugrad) == run(torch)
