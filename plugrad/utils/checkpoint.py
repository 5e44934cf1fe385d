"""``torch.utils.checkpoint``: activation checkpointing, which trades compute for memory.

plugrad keeps the activations (the function simply runs), so gradients are exactly those
of the un-checkpointed function; only the memory saving is absent.
"""
from __future__ import annotations

__all__ = ["checkpoint", "checkpoint_sequential"]


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check=None,
               debug=None, preserve_rng_state=True, **kwargs):
    return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (an ``nn.Sequential`` or a list of modules) one after the other."""
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    for fn in functions:
        input = fn(input)
    return input
