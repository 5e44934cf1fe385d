"""``torch.serialization`` at PyTorch's path: :func:`save` / :func:`load` (safetensors plus a
JSON description of the structure, never pickle)."""
from plugrad.core.serialization import SerializationError, load, save

__all__ = ["save", "load", "SerializationError", "add_safe_globals", "get_safe_globals",
           "safe_globals"]

_safe: list = []


def add_safe_globals(safe_globals) -> None:
    """Accepted for PyTorch programs that allow classes for ``weights_only`` unpickling;
    plugrad never unpickles, so nothing it loads can need them."""
    _safe.extend(safe_globals)


def get_safe_globals() -> list:
    return list(_safe)


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
