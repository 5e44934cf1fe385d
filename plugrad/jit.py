"""``torch.jit`` for programs that script or trace a model and then just call it.

plugrad runs every model eagerly (``plugrad.compile`` is its capture-and-replay), so
``script`` and ``trace`` return what they were given, which then computes exactly what it
did before; the decorators (``ignore``, ``unused``, ``export``) change nothing. Writing a
TorchScript archive (``save``) or reading one (``load``) is not possible and says so.
"""
from __future__ import annotations

from typing import Final  # noqa: F401 - torch.jit.Final, used in annotations

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting",
           "is_tracing", "annotate", "freeze", "optimize_for_inference", "save", "load",
           "ScriptModule", "ScriptFunction", "Final", "interface"]


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """The module or function itself: it already runs (eagerly) as it would scripted."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """The module or function itself (a trace would replay the same computation)."""
    return func


def trace_module(mod, inputs, *args, **kwargs):
    return mod


def _passthrough(fn=None, **kwargs):
    if fn is None or not callable(fn):  # used as @ignore(drop=True)
        return lambda f: f
    return fn


ignore = unused = export = interface = _passthrough


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def annotate(the_type, the_value):
    return the_value


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


def save(m, f, _extra_files=None):
    raise NotImplementedError("torch.jit.save: plugrad writes no TorchScript archives (its "
                              "models run eagerly); save the weights with "
                              "torch.save(model.state_dict(), f)")


def load(f, map_location=None, _extra_files=None):
    raise NotImplementedError("torch.jit.load: plugrad reads no TorchScript archives; rebuild "
                              "the model in Python and load its state_dict()")


def __getattr__(name):
    if name in ("ScriptModule", "RecursiveScriptModule", "TopLevelTracedModule"):
        from plugrad.nn import Module
        return Module
    if name == "ScriptFunction":
        import types
        return types.FunctionType
    raise AttributeError(f"module 'plugrad.jit' has no attribute {name!r}")
