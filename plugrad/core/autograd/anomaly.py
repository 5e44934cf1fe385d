"""Anomaly mode: forward tracebacks for failing backward nodes and NaN checks.

Off by default and then free: recording and checks run only when the flag is set.
"""
from __future__ import annotations

import traceback
import warnings

_enabled = False


def is_anomaly_enabled() -> bool:
    return _enabled


class set_detect_anomaly:
    """Turn anomaly detection on or off; in a ``with`` block, only inside it."""

    def __init__(self, mode: bool):
        global _enabled
        self._previous = _enabled
        _enabled = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _enabled
        _enabled = self._previous
        return False


class detect_anomaly(set_detect_anomaly):
    """Context manager: backward errors show where the failing op ran in forward, and a
    NaN produced by backward raises naming the node."""

    def __init__(self, check_nan: bool = True):
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)
        super().__init__(True)


def record_forward(node) -> None:
    """Called for each new node while anomaly mode is on."""
    node._anomaly = traceback.format_stack()[:-3]


def call_backward(node, grads):
    """Run ``node.backward``; in anomaly mode, explain failures and NaNs."""
    if not _enabled:
        return node.backward(*grads)
    try:
        outs = node.backward(*grads)
    except Exception as exc:
        stack = getattr(node, "_anomaly", None)
        if stack:
            exc.add_note(f"Error detected in {node.name()}. Traceback of forward call that "
                         f"caused the error:\n" + "".join(stack))
        raise
    for i, g in enumerate(outs):
        if g is not None and g.dtype.is_floating_point and bool(g.isnan().any()):
            stack = getattr(node, "_anomaly", None)
            where = ("\nTraceback of forward call that caused the error:\n" + "".join(stack)
                     if stack else "")
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                               f"{i}th output.{where}")
    return outs
