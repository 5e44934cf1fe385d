"""The core's side of capture (``plugrad.compile``): where the active recorder sits.

The core never imports :mod:`plugrad.capture`; while a step is being recorded the recorder
installs itself in :data:`recorder`, and the core calls into it at the few places where a
Python decision is taken from tensor data (:func:`host_read`) or where something happens
that a replay could not repeat (:func:`graph_break`).
"""
from __future__ import annotations

import numpy as np

#: The recorder of the step being captured, or None (set by ``plugrad.capture``).
recorder = None


def host_read(decide, k, *arrays):
    """``decide`` applied to host copies of ``arrays``: a check or a branch on tensor data.

    ``decide`` may raise (an index out of range) and returns a small decision (a bool, a
    count), never the data itself. Under capture the recorder keeps ``decide`` and runs it
    again on every replay's arrays before anything else: it raises as eager would, and a
    different decision sends that call back to eager execution.
    """
    if recorder is not None:
        return recorder.host_read(decide, k, arrays)
    return decide(*[np.asarray(k.to_numpy(a)) for a in arrays])


def graph_break(reason: str) -> None:
    """Tell the recorder, if one is active, that this call cannot be replayed, and why."""
    if recorder is not None:
        recorder.graph_break(reason)


def backward_from(nodes) -> None:
    """Tell the recorder which graphs a backward pass ran through (their outputs may be
    returned by a replayed call: their graph is spent either way)."""
    if recorder is not None:
        recorder.backward_from(nodes)


def host_scalars(compute, k, *arrays, key=None) -> tuple:
    """``compute`` (host copies of ``arrays``) -> a tuple of Python floats that the caller
    passes to kernels as they are (an optimizer's per-step bias corrections from its step
    counter). Under capture the recorder makes ``compute`` an instruction of the program:
    each replay computes the floats afresh and hands them to the same kernel calls. ``key``
    names the computation across calls when ``compute`` closes over state it reads live (an
    optimizer's param group, whose ``lr`` a scheduler changes)."""
    if recorder is not None:
        return recorder.host_scalars(compute, k, arrays, key)
    return tuple(compute(*[np.asarray(k.to_numpy(a)) for a in arrays]))
