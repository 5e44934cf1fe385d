"""``optim.LBFGS`` (closure API, fixed step and strong-Wolfe line search) against PyTorch."""
import numpy as np
import pytest
import torch

import plugrad


def _run(lib, device, dtype, line_search, steps, n=30, **options):
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((n, 3)), rng.standard_normal((n, 1))
    W = rng.standard_normal((3, 5)) * 0.5
    kw = {"device": device} if lib is plugrad else {}
    x, y = lib.tensor(X.astype(dtype), **kw), lib.tensor(Y.astype(dtype), **kw)
    w1 = lib.tensor(W.astype(dtype), requires_grad=True, **kw)
    w2 = lib.tensor(np.full((5, 1), 0.1, dtype), requires_grad=True, **kw)
    opt = lib.optim.LBFGS([w1, w2], line_search_fn=line_search, **options)

    def closure():
        opt.zero_grad()
        loss = ((lib.tanh(x @ w1) @ w2 - y) ** 2).mean()
        loss.backward()
        return loss
    losses = [opt.step(closure).item() for _ in range(steps)]
    state = opt.state[w1]
    return losses, state["func_evals"], state["n_iter"], w2.detach().cpu().numpy().ravel()


CASES = [(None, {}), ("strong_wolfe", {}),
         (None, {"lr": 0.5, "history_size": 3, "max_iter": 7}),
         ("strong_wolfe", {"history_size": 2, "max_iter": 6, "max_eval": 9})]


@pytest.mark.parametrize("line_search, options", CASES)
def test_float64_follows_pytorch_exactly(device, line_search, options):
    steps, n = (4, 30) if device != "ref" else (2, 8)
    ours = _run(plugrad, device, np.float64, line_search, steps, n, **options)
    theirs = _run(torch, None, np.float64, line_search, steps, n, **options)
    assert ours[1:3] == theirs[1:3]  # the same number of evaluations and iterations
    # the float64 products and tanh differ from torch's by ulps, by CPU (an AVX2 machine's
    # kernels drift to 4e-9 in four steps: the curvature pairs amplify them)
    assert np.allclose(ours[0], theirs[0], rtol=1e-7, atol=1e-12)
    assert np.allclose(ours[3], theirs[3], rtol=1e-5)  # flat directions: weights drift first


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_float32_agrees_with_pytorch(line_search):
    ours = _run(plugrad, "cpu", np.float32, line_search, 3)
    theirs = _run(torch, None, np.float32, line_search, 3)
    assert np.allclose(ours[0], theirs[0], rtol=1e-3)  # float32 rounding, 20 iterations
    assert ours[0][0] > ours[0][1] > ours[0][2]


def test_converged_start_and_errors(device):
    p = plugrad.nn.Parameter(plugrad.zeros(2, device=device))
    opt = plugrad.optim.LBFGS([p])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    assert opt.step(closure).item() == 0.0 and len(calls) == 1  # gradient 0: nothing to do
    with pytest.raises(RuntimeError, match="LBFGS requires a closure"):
        opt.step(None)
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        plugrad.optim.LBFGS([p], line_search_fn="armijo")
    q = plugrad.nn.Parameter(plugrad.zeros(1, device=device))
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        plugrad.optim.LBFGS([{"params": [p]}, {"params": [q]}])


def test_quadratic_is_solved_by_the_line_search(device):
    target = plugrad.tensor([1.0, -2.0, 3.0], device=device, dtype=plugrad.float64)
    p = plugrad.nn.Parameter(plugrad.zeros(3, device=device, dtype=plugrad.float64))
    opt = plugrad.optim.LBFGS([p], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((p - target) ** 2 * plugrad.tensor([1.0, 10.0, 100.0], device=device,
                                                   dtype=plugrad.float64)).sum()
        loss.backward()
        return loss
    opt.step(closure)
    assert np.allclose(p.detach().tolist(), [1.0, -2.0, 3.0], atol=1e-6)
