"""``torch.serialization`` at PyTorch's path: :func:`save` / :func:`load` (safetensors plus a
JSON description of the structure, never pickle) and the ``weights_only`` allowlist."""
from plugrad.core.serialization import SerializationError, load, save
from plugrad.core.serialization_objects import SAFE_GLOBALS as _safe

__all__ = ["save", "load", "SerializationError", "add_safe_globals", "get_safe_globals",
           "clear_safe_globals", "safe_globals"]


def add_safe_globals(safe_globals) -> None:
    """Allow these classes and functions (or ``(obj, "module.name")`` pairs) in whole
    objects that :func:`load` rebuilds (``torch.save(model, f)``); plugrad's own are always
    allowed. Nothing is unpickled either way: see :mod:`plugrad.core.serialization_objects`."""
    _safe.extend(safe_globals)


def get_safe_globals() -> list:
    return list(_safe)


def clear_safe_globals() -> None:
    _safe.clear()


class safe_globals:
    """``with torch.serialization.safe_globals([...]):`` (see :func:`add_safe_globals`)."""

    def __init__(self, safe_globals):
        self._globals = list(safe_globals)

    def __enter__(self):
        _safe.extend(self._globals)
        return self

    def __exit__(self, *exc):
        for g in self._globals:
            _safe.remove(g)
        return False
