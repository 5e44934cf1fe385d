"""Whether ops record the graph: a per-thread switch, as in PyTorch."""
from __future__ import annotations

import functools
import threading


class _State(threading.local):
    enabled = True


_state = _State()


def is_grad_enabled() -> bool:
    return _state.enabled


class _GradMode:
    """Base of the grad-mode switches: a context manager and a decorator."""

    mode: bool = True

    def __enter__(self):
        self._previous = _state.enabled
        _state.enabled = self.mode
        return self

    def __exit__(self, *exc):
        _state.enabled = self._previous
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Ops inside do not record the graph (for updates and evaluation)."""
    mode = False


class enable_grad(_GradMode):
    """Recording back on inside a ``no_grad`` region."""
    mode = True


class set_grad_enabled(_GradMode):
    """Set grad mode: as a function call it takes effect at once, in ``with`` only inside."""

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self._previous = _state.enabled
        _state.enabled = self.mode

    def __enter__(self):
        return self

    def __call__(self, fn):
        _state.enabled = self._previous
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class inference_mode(no_grad):
    """Same as ``no_grad`` here (no separate inference tensors)."""

    def __init__(self, mode: bool = True):
        self.mode = not mode
