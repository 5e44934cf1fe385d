"""Whether ops record the graph: a per-thread switch, as in PyTorch."""
from __future__ import annotations

import functools
import inspect
import threading


class _State(threading.local):
    enabled = True


_state = _State()


def is_grad_enabled() -> bool:
    return _state.enabled


def _decorate(fn, make_mode):
    """``fn`` run under a fresh ``make_mode()`` each call."""
    if inspect.isgeneratorfunction(fn):
        return _decorate_generator(fn, make_mode)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with make_mode():
            return fn(*args, **kwargs)
    return wrapper


def _decorate_generator(fn, make_mode):
    """The mode holds around each step of the generator only, so the caller's mode is
    untouched between ``next`` calls (as PyTorch does)."""
    @functools.wraps(fn)
    def generator(*args, **kwargs):
        gen = fn(*args, **kwargs)
        step, request = gen.send, None
        while True:
            try:
                with make_mode():
                    response = step(request)
            except StopIteration as stop:
                return stop.value
            step = gen.send
            try:
                request = yield response
            except GeneratorExit:
                with make_mode():
                    gen.close()
                raise
            except BaseException as exc:  # forwarded into the wrapped generator
                step, request = gen.throw, exc
    return generator


class _GradMode:
    """Base of the grad-mode switches: a context manager and a decorator, with or without
    parentheses (``@no_grad`` and ``@no_grad()``)."""

    mode: bool = True

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and cls._bare_decorator:
            return _decorate(args[0], cls)
        return super().__new__(cls)

    _bare_decorator = True

    def __enter__(self):
        self._previous = _state.enabled
        _state.enabled = self.mode
        return self

    def __exit__(self, *exc):
        _state.enabled = self._previous
        return False

    def __call__(self, fn):
        return _decorate(fn, self.clone)

    def clone(self):
        return self.__class__()


class no_grad(_GradMode):
    """Ops inside do not record the graph (for updates and evaluation)."""
    mode = False


class enable_grad(_GradMode):
    """Recording back on inside a ``no_grad`` region."""
    mode = True


class set_grad_enabled(_GradMode):
    """Set grad mode: as a function call it takes effect at once, in ``with`` only inside."""

    _bare_decorator = False

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self._previous = _state.enabled
        _state.enabled = self.mode

    def __enter__(self):
        return self

    def __call__(self, fn):
        _state.enabled = self._previous  # used as a decorator: the call above was not meant
        return _decorate(fn, self.clone)

    def clone(self):
        return set_grad_enabled(self.mode)


class inference_mode(_GradMode):
    """Same as ``no_grad`` here (no separate inference tensors); ``inference_mode(False)``
    leaves the mode as it is."""

    def __init__(self, mode: bool = True):
        self._enabled_mode = bool(mode)

    @property
    def mode(self):
        return False if self._enabled_mode else _state.enabled

    def clone(self):
        return inference_mode(self._enabled_mode)
