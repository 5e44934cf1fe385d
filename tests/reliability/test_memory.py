"""Memory: saved tensors go after backward; training loops and hook cycles do not leak."""
import gc
import os
import weakref

import pytest

import plugrad as pg
import plugrad.nn as nn
import plugrad.optim as optim


def live_tensors() -> int:
    gc.collect()
    # type(), not isinstance(): a proxy object's __class__ property may warn or raise
    return sum(1 for o in gc.get_objects() if issubclass(type(o), pg.Tensor))


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_saved_tensors_are_released_after_backward(device):
    a = pg.ones(4, device=device, requires_grad=True)
    b = a * 2
    c = b.sin()  # SinBackward0 saves b
    ref = weakref.ref(b)
    del b
    assert ref() is not None  # kept alive by the graph
    c.sum().backward()
    assert ref() is None  # released by backward itself, no gc needed
    assert a.grad is not None


def test_retain_graph_keeps_saved_tensors(device):
    a = pg.ones(4, device=device, requires_grad=True)
    b = a * 2
    c = b.sin()
    ref = weakref.ref(b)
    del b
    c.sum().backward(retain_graph=True)
    assert ref() is not None
    c.sum().backward()
    assert ref() is None


def test_dropping_the_graph_without_backward_frees_it(device):
    a = pg.ones(4, device=device, requires_grad=True)
    b = a.exp()
    c = (b * b).sum()
    refs = [weakref.ref(b), weakref.ref(c.grad_fn)]
    del b, c
    assert all(r() is None for r in refs)


@pytest.mark.parametrize("where", ["leaf", "non_leaf"])
def test_reference_cycle_through_a_hook_is_collected(device, where):
    a = pg.ones(3, device=device, requires_grad=True)
    t = a if where == "leaf" else a * 2
    t.register_hook(lambda g: g + t.detach())  # t -> hooks -> closure -> t
    ref = weakref.ref(t)
    (t * 1).sum().backward()
    if where == "leaf":
        assert a.grad.tolist() == [2.0, 2.0, 2.0]
    del t, a
    gc.collect()
    assert ref() is None


def _classifier(device):
    pg.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).to(device)
    opt = optim.SGD(model.parameters(), lr=0.01)
    x = pg.randn(32, 20, device=device)
    y = pg.randint(0, 5, (32,), device=device)
    return model, opt, nn.CrossEntropyLoss(), x, y


def _steps(n, model, opt, loss_fn, x, y):
    total = 0.0
    for _ in range(n):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item()  # a Python float: holds no graph
    return total


def test_training_loop_keeps_tensor_count_and_rss_flat():
    model, opt, loss_fn, x, y = _classifier("cpu")
    first = _steps(100, model, opt, loss_fn, x, y)  # warm up (caches, momentum-free SGD)
    tensors0, rss0 = live_tensors(), rss_bytes()
    last = _steps(900, model, opt, loss_fn, x, y)
    tensors1, rss1 = live_tensors(), rss_bytes()
    assert tensors1 == tensors0, f"live tensors grew from {tensors0} to {tensors1}"
    assert rss1 - rss0 < 4 * 2**20, f"RSS grew by {(rss1 - rss0) / 2**20:.1f} MiB"
    assert last / 900 < first / 100  # and it did train


def test_training_loop_tensor_count_flat_on_every_backend(device):
    model, opt, loss_fn, x, y = _classifier(device)
    _steps(3, model, opt, loss_fn, x, y)
    before = live_tensors()
    _steps(10, model, opt, loss_fn, x, y)
    assert live_tensors() == before
