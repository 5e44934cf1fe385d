"""``plugrad.compile`` (``torch.compile``): PyTorch's entry point over plugrad's capture.

A function becomes a :class:`~plugrad.capture.CompiledFunction`; a module becomes an
``OptimizedModule`` (still a module: parameters, ``state_dict`` under ``_orig_mod.``,
``train()``/``eval()``) whose calls go through one. ``backend``, ``mode`` and ``options``
are accepted for PyTorch programs' sake: the capture is plugrad's own, whatever they say.
"""
from __future__ import annotations


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor",  # noqa: A001
            mode=None, options=None, disable: bool = False):
    """Capture ``model``'s calls and replay them (see ``docs/compile.md``).

    Used bare (``plugrad.compile(fn)``) or as a decorator with or without arguments.
    """
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if not callable(model):
        raise RuntimeError(f"compile: expected a function or a module, got "
                           f"{type(model).__name__}")
    if disable:
        return model
    from plugrad.nn.modules.compiled import OptimizedModule
    from plugrad.nn.modules.module import Module
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph=fullgraph, dynamic=dynamic)
    from plugrad.capture import CompiledFunction
    return CompiledFunction(model, fullgraph=fullgraph, dynamic=dynamic)


def is_compiling() -> bool:
    """Whether a call is being captured right now (``torch.compiler.is_compiling``): code
    that must not be part of a capture (logging, a host-side counter) can branch on it."""
    from plugrad.core import tracing
    rec = tracing.recorder
    return rec is not None and rec.broken is None


def disable(fn=None, recursive: bool = True):
    """``torch.compiler.disable``: calls of ``fn`` are never captured; a capture that
    reaches one stops there (a graph break) and that call runs eagerly."""
    import functools

    if fn is None:
        return lambda f: disable(f, recursive)

    @functools.wraps(fn)
    def eager_only(*args, **kwargs):
        from plugrad.core import tracing
        tracing.graph_break(f"{getattr(fn, '__qualname__', fn)} is compiler.disable'd")
        return fn(*args, **kwargs)
    return eager_only


def reset() -> None:
    """``torch.compiler.reset``: forget the cached module guards (each compiled function
    keeps its own captures; drop the function to drop them)."""
    from plugrad.capture import guards
    guards._module_keys.clear()
    guards._optimizer_keys.clear()
