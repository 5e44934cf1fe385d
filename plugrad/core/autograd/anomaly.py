"""Anomaly mode: forward tracebacks for failing backward nodes and NaN checks.

Off by default and then free: ``attach`` and the engine test the module flag ``_enabled``
(one global read) and call into this module only when it is set, so no stack is recorded
and no gradient is inspected while the mode is off.

The mode is process-wide, as in PyTorch; ``detect_anomaly()`` / ``set_detect_anomaly(...)``
used as context managers restore the previous setting on exit.
"""
from __future__ import annotations

import functools
import os
import traceback
import warnings

import numpy as np

_enabled = False
_check_nan = True

# Frames inside plugrad's own core (ops, autograd, tensor) are cut from the recorded
# traceback, so it ends at the user's line that ran the op.
_CORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_anomaly_enabled() -> bool:
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _enabled and _check_nan


class set_detect_anomaly:
    """Turn anomaly detection on or off; in a ``with`` block, only inside it.

    ``check_nan`` (default True) makes a backward node that returns NaN raise.
    """

    def __init__(self, mode: bool, check_nan: bool = True):
        global _enabled, _check_nan
        self._previous = (_enabled, _check_nan)
        _enabled = bool(mode)
        _check_nan = bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _enabled, _check_nan
        _enabled, _check_nan = self._previous
        return False


class detect_anomaly:
    """Context manager (or decorator): backward errors show where the failing op ran in
    forward, and a NaN produced by backward raises naming the node and output index."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = bool(check_nan)
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        global _enabled, _check_nan
        self._previous = (_enabled, _check_nan)
        _enabled, _check_nan = True, self.check_nan
        return self

    def __exit__(self, *exc):
        global _enabled, _check_nan
        _enabled, _check_nan = self._previous
        return False

    def __call__(self, fn):
        check_nan = self.check_nan

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            global _enabled, _check_nan
            previous = (_enabled, _check_nan)
            _enabled, _check_nan = True, check_nan
            try:
                return fn(*args, **kwargs)
            finally:
                _enabled, _check_nan = previous
        return wrapper


def _user_stack() -> list:
    """The current stack as formatted lines, without the innermost plugrad-core frames."""
    frames = traceback.extract_stack()[:-2]  # drop _user_stack and record_forward
    while frames and os.path.abspath(frames[-1].filename).startswith(_CORE_DIR):
        frames.pop()
    return traceback.format_list(frames)


def record_forward(node) -> None:
    """Called by ``attach`` for each new node while anomaly mode is on."""
    node._anomaly = _user_stack()


def forward_trace(node) -> str:
    """The recorded forward traceback of ``node`` as text ('' if none was recorded)."""
    stack = node.__dict__.get("_anomaly") if hasattr(node, "__dict__") else None
    if not stack:
        return ""
    return "Traceback of forward call that caused the error:\n" + "".join(stack)


def call_rule(node, g, tensor_mode: bool, apply, table_of):
    """Run ``node``'s rule through ``apply``; in anomaly mode, failures (including a saved
    tensor modified in place) name the forward call, and a NaN in a gradient raises."""
    try:
        if node._freed or node.versions:
            node.check_saved()
        outs = apply(node, g, tensor_mode)
    except Exception as exc:
        trace = forward_trace(node)
        note = f"Error detected in {node.name()}."
        if trace:
            note += " " + trace
        else:
            note += (" No forward traceback was recorded for it (was the graph built before "
                     "anomaly mode was turned on?)")
        exc.add_note(note)
        raise
    if _check_nan:
        for i, x in enumerate(outs):
            if x is None or not _has_nan(x, tensor_mode, table_of, node, i):
                continue
            trace = forward_trace(node)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                               f"{i}th output." + ("\n" + trace if trace else ""))
    return outs


def _has_nan(x, tensor_mode, table_of, node, i) -> bool:
    if tensor_mode:
        return x.dtype.is_floating_point and bool(x.isnan().any())
    values = np.asarray(table_of(node, i, x).to_numpy(x))
    return values.dtype.kind == "f" and bool(np.isnan(values).any())
