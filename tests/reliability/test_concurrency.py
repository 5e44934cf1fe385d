"""Concurrency: grad mode is per thread; threads training separate models don't interfere."""
import copy
import threading

import numpy as np
import pytest

import plugrad as pg
import plugrad.nn as nn
import plugrad.optim as optim


def _run_in_thread(fn):
    out, errors = [], []

    def target():
        try:
            out.append(fn())
        except BaseException as exc:  # surfaced in the main thread
            errors.append(exc)
    t = threading.Thread(target=target)
    t.start()
    return t, out, errors


def test_no_grad_in_one_thread_does_not_affect_another(device):
    inside, done = threading.Event(), threading.Event()

    def hold_no_grad():
        with pg.no_grad():
            inside.set()
            assert done.wait(10)
            return pg.is_grad_enabled()

    t, out, errors = _run_in_thread(hold_no_grad)
    assert inside.wait(10)
    try:
        assert pg.is_grad_enabled()
        x = pg.ones(2, device=device, requires_grad=True)
        y = x * 2
        assert y.requires_grad and y.grad_fn is not None
    finally:
        done.set()
        t.join(10)
    assert not errors and out == [False]
    assert pg.is_grad_enabled()


def test_grad_mode_set_in_main_thread_is_not_inherited(device):
    def probe():
        x = pg.ones(2, device=device, requires_grad=True)
        return pg.is_grad_enabled(), (x * 2).requires_grad

    with pg.no_grad():
        t, out, errors = _run_in_thread(probe)
        t.join(10)
    assert not errors and out == [(True, True)]


def _make(seed, device):
    pg.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).to(device)
    x = pg.randn(32, 8, device=device)
    y = pg.randint(0, 3, (32,), device=device)
    return model, x, y


def _train(model, x, y, steps):
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [np.asarray(p.detach().cpu().numpy()).copy() for p in model.parameters()]


@pytest.mark.parametrize("device", ["cpu", "ref"])
def test_two_threads_train_like_sequential(device):
    steps = 200 if device == "cpu" else 5
    setups = [_make(1, device), _make(2, device)]
    sequential = [_train(copy.deepcopy(m), x, y, steps) for m, x, y in setups]

    barrier = threading.Barrier(2)

    def job(m, x, y):
        def run():
            barrier.wait(10)  # start together, so the steps interleave
            return _train(m, x, y, steps)
        return run

    threads = [_run_in_thread(job(copy.deepcopy(m), x, y)) for m, x, y in setups]
    for t, _, _ in threads:
        t.join(120)
    for (t, out, errors), (seq_losses, seq_params) in zip(threads, sequential):
        assert not t.is_alive() and not errors, errors
        losses, params = out[0]
        assert losses == seq_losses  # bitwise
        for p, q in zip(params, seq_params):
            assert np.array_equal(p, q)
    assert sequential[0][0] != sequential[1][0]  # two genuinely different runs
