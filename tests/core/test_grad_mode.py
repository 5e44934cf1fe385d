"""Grad mode: ``no_grad``/``enable_grad``/``set_grad_enabled``/``inference_mode``."""
import threading

import pytest

import plugrad as torch


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    yield
    assert torch.is_grad_enabled()  # every test must leave the mode as it found it


def records(device):
    return (torch.ones(1, device=device, requires_grad=True) * 2).requires_grad


def test_context_managers(device):
    assert torch.is_grad_enabled() and records(device)
    with torch.no_grad():
        assert not torch.is_grad_enabled() and not records(device)
        with torch.enable_grad():
            assert torch.is_grad_enabled() and records(device)
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


def test_mode_is_restored_after_an_exception(device):
    with pytest.raises(ZeroDivisionError):
        with torch.no_grad():
            1 / 0
    assert torch.is_grad_enabled()


def test_set_grad_enabled_as_function_and_context(device):
    torch.set_grad_enabled(False)
    try:
        assert not torch.is_grad_enabled() and not records(device)
    finally:
        torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        assert not torch.is_grad_enabled()
        with torch.set_grad_enabled(True):
            assert records(device)
        assert not torch.is_grad_enabled()


def test_decorators_with_parentheses(device):
    @torch.no_grad()
    def off():
        return torch.is_grad_enabled()

    @torch.enable_grad()
    def on():
        return torch.is_grad_enabled()

    @torch.set_grad_enabled(False)
    def set_off():
        return records(device)

    assert torch.is_grad_enabled()  # decorating changed nothing
    assert off() is False and set_off() is False
    with torch.no_grad():
        assert on() is True
        assert not torch.is_grad_enabled()


def test_decorators_without_parentheses(device):
    @torch.no_grad
    def off():
        return torch.is_grad_enabled()

    @torch.enable_grad
    def on():
        return torch.is_grad_enabled()

    assert off() is False and torch.is_grad_enabled()
    with torch.no_grad():
        assert on() is True
    assert off.__name__ == "off"


def test_decorated_function_is_reentrant(device):
    @torch.no_grad()
    def recurse(n):
        return torch.is_grad_enabled() if n == 0 else recurse(n - 1)

    assert recurse(3) is False and torch.is_grad_enabled()


def test_decorated_generator_sets_mode_only_inside(device):
    @torch.no_grad()
    def gen():
        received = yield torch.is_grad_enabled()
        yield received, torch.is_grad_enabled()
        return "done"

    it = gen()
    assert next(it) is False and torch.is_grad_enabled()
    assert it.send(5) == (5, False) and torch.is_grad_enabled()
    with pytest.raises(StopIteration) as stop:
        next(it)
    assert stop.value.value == "done"


def test_inference_mode(device):
    with torch.autograd.inference_mode():
        assert not records(device)
    with torch.autograd.inference_mode(False):
        assert records(device)

    @torch.autograd.inference_mode
    def off():
        return torch.is_grad_enabled()

    assert off() is False


def test_grad_mode_is_thread_local(device):
    inside, other = threading.Event(), threading.Event()
    seen = {}

    def worker():
        inside.wait()
        seen["other"] = torch.is_grad_enabled()
        seen["other_records"] = records(device)
        with torch.no_grad():
            other.set()
            seen["other_off"] = torch.is_grad_enabled()

    thread = threading.Thread(target=worker)
    thread.start()
    with torch.no_grad():
        inside.set()
        other.wait()
        seen["main"] = torch.is_grad_enabled()
    thread.join()
    assert seen == {"other": True, "other_records": True, "other_off": False, "main": False}


def test_autograd_namespace_exports(device):
    assert torch.autograd.no_grad is torch.no_grad
    assert torch.autograd.is_grad_enabled is torch.is_grad_enabled
