"""``torch.memory_format``: ``contiguous_format``, ``channels_last``, ``preserve_format``.

A backend keeps its arrays in the order it chooses, so a format changes no value here: it is
accepted wherever PyTorch takes one, and checked as PyTorch checks it (``channels_last``
needs a 4-d tensor, ``channels_last_3d`` a 5-d one), so programs that ask for one run.
"""
from __future__ import annotations


class memory_format:  # noqa: N801 - PyTorch's name
    """One of PyTorch's memory formats (its instances are module constants)."""

    __slots__ = ("_name", "_rank")

    def __init__(self, name: str, rank: int | None = None):
        self._name, self._rank = name, rank

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name  # pickled (copy, deepcopy) as the module constant


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", 4)
channels_last_3d = memory_format("channels_last_3d", 5)


def check(op: str, ndim: int, fmt) -> None:
    """PyTorch's errors for a format that is not one, or does not fit a tensor of ``ndim``."""
    if fmt is None:
        return
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{op}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(fmt).__name__}")
    if fmt._rank is not None and ndim != fmt._rank:
        raise RuntimeError(f"required rank {fmt._rank} tensor to use {fmt._name} format "
                           f"({op} of a {ndim}-d tensor)")
