"""Whole objects in a checkpoint (``torch.save(model, f)``) without pickle.

PyTorch programs save a whole model and load it back (``pytorch/examples``' word language
model does, inside ``torch.serialization.safe_globals([...its classes...])``). plugrad writes
such an object as its class's import path and its state (``__dict__``, or what
``__getstate__`` returns) in the same JSON description as everything else, so shared tensors
and objects (tied weights, a module used twice) stay shared. Loading follows PyTorch's
``weights_only`` rule, without its unpickler: an object is rebuilt (``cls.__new__`` and its
state; no ``__init__``, no ``__reduce__``) only if its class is plugrad's own, is allowed
through ``torch.serialization.add_safe_globals`` / ``safe_globals``, or the caller passed
``weights_only=False``. Functions and classes kept in an object's state (``self.act =
F.relu``) are looked up under the same rule. Nothing else is ever imported or called.
"""
from __future__ import annotations

import importlib
import types

#: the allowlist of ``torch.serialization.add_safe_globals`` (objects or (object, name) pairs)
SAFE_GLOBALS: list = []


class UnsafeGlobalError(RuntimeError):
    pass


def global_name(obj) -> str | None:
    """``module:qualname`` of a class or function importable by that path, else None."""
    module = getattr(obj, "__module__", None)
    qual = getattr(obj, "__qualname__", None)
    if not module or not qual or "<" in qual:
        return None
    return f"{module}:{qual}"


def _is_global(obj) -> bool:
    return isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType))


def _lookup(module: str, qual: str):
    obj = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def encode_global(obj):
    """``{"__global__": "module:qualname"}`` under a name that finds ``obj`` itself (a
    public op's wrapper keeps its implementation's module: then ``plugrad``'s or
    ``plugrad.nn.functional``'s name is used), else None."""
    name = global_name(obj)
    if name is None:
        return None
    module, qual = name.split(":", 1)
    for where in (module, "plugrad", "plugrad.nn.functional"):
        try:
            if _lookup(where, qual) is obj:
                return {"__global__": f"{where}:{qual}"}
        except (ImportError, AttributeError):
            continue
    return None


def object_state(obj):
    """What is saved of ``obj``: its ``__getstate__()`` where the class defines one, else
    its ``__dict__``; None where it has neither (slots-only objects, builtins)."""
    getstate = getattr(type(obj), "__getstate__", None)
    if getstate is not None and getstate is not getattr(object, "__getstate__", None):
        return obj.__getstate__()
    return vars(obj) if hasattr(obj, "__dict__") else None


def _allowed_names() -> dict:
    """The allowlist by name: ``module:qualname``, and PyTorch's ``module.qualname`` for the
    (object, name) pairs."""
    out = {}
    for g in SAFE_GLOBALS:
        if isinstance(g, tuple):
            out[g[1]] = g[0]
        elif global_name(g) is not None:
            out[global_name(g)] = g
    return out


def resolve(name: str, weights_only) -> object:
    """The class or function saved as ``name`` (``module:qualname``), if the rule allows."""
    if not isinstance(name, str) or ":" not in name:
        raise UnsafeGlobalError(f"malformed global name {name!r}")
    module, qual = name.split(":", 1)
    allowed = _allowed_names()
    if name in allowed:
        return allowed[name]
    dotted = f"{module}.{qual}"
    if dotted in allowed:
        return allowed[dotted]
    if not (module == "plugrad" or module.startswith("plugrad.")) and weights_only is not False:
        raise UnsafeGlobalError(
            f"Unsupported global: {dotted} was not an allowed global by default. Allow it "
            f"with torch.serialization.add_safe_globals([{qual}]) or the "
            f"torch.serialization.safe_globals([{qual}]) context manager if you trust it, "
            f"or pass weights_only=False (plugrad still unpickles nothing: the object is "
            f"rebuilt from its class and saved state)")
    try:
        obj = _lookup(module, qual)
    except (ImportError, AttributeError) as exc:
        raise UnsafeGlobalError(f"cannot find {dotted} to rebuild the saved object: "
                                f"{exc}") from None
    if not _is_global(obj):
        raise UnsafeGlobalError(f"{dotted} is not a class or function")
    return obj


def new_object(cls):
    """An instance of ``cls`` made without running its ``__init__`` (as unpickling does)."""
    if not isinstance(cls, type):
        raise UnsafeGlobalError(f"{global_name(cls)} is not a class")
    return cls.__new__(cls)


def set_state(obj, state) -> None:
    if hasattr(type(obj), "__setstate__"):
        obj.__setstate__(state)
    elif isinstance(state, dict):
        obj.__dict__.update(state)
    else:
        raise UnsafeGlobalError(f"saved state of {type(obj).__name__} is not a dict")
