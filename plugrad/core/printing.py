"""``repr`` of tensors, formatted as PyTorch formats them (users compare with tutorials)."""
from __future__ import annotations

import math

import numpy as np

THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80
PRECISION = 4


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Like ``torch.set_printoptions`` (``sci_mode`` is not supported and ignored)."""
    global PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH
    if profile == "default":
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, 1000, 3, 80
    elif profile == "full":
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, math.inf, 3, 80
    if precision is not None:
        PRECISION = precision
    if threshold is not None:
        THRESHOLD = threshold
    if edgeitems is not None:
        EDGEITEMS = edgeitems
    if linewidth is not None:
        LINEWIDTH = linewidth


class _Formatter:
    """Picks one number format and width for every element, as PyTorch does."""

    def __init__(self, values: np.ndarray):
        self.kind = values.dtype.kind
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        flat = values.ravel()
        if self.kind == "b":
            self.width = max((len(str(bool(v))) for v in flat), default=1)
        elif self.kind in "iu":
            self.width = max((len(str(int(v))) for v in flat), default=1)
        else:
            finite = flat[np.isfinite(flat)].astype(np.float64)
            if finite.size == 0:
                self.width = max((len(self._special(v)) for v in flat), default=1)
                return
            nonzero = np.abs(finite[finite != 0])
            self.int_mode = bool(np.all(finite == np.ceil(finite)))
            if nonzero.size:
                hi, lo = float(nonzero.max()), float(nonzero.min())
                if self.int_mode:
                    self.sci_mode = hi > 1e8
                else:
                    self.sci_mode = hi / lo > 1000.0 or hi > 1e8 or lo < 1e-4
            self.width = max(len(self.format(v)) for v in flat)

    @staticmethod
    def _special(v) -> str:
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")

    def format(self, v) -> str:
        if self.kind == "b":
            return str(bool(v))
        if self.kind in "iu":
            return str(int(v))
        v = float(v)
        if not math.isfinite(v):
            return self._special(v)
        if self.sci_mode:
            return f"{v:.{PRECISION}e}"
        if self.int_mode:
            return f"{v:.0f}."
        return f"{v:.{PRECISION}f}"

    def pad(self, v) -> str:
        return self.format(v).rjust(self.width)


def _summarised(values: np.ndarray) -> np.ndarray:
    """Only the edge items along every dimension (what gets printed of a big tensor)."""
    for axis in range(values.ndim):
        if values.shape[axis] > 2 * EDGEITEMS:
            head = np.take(values, range(EDGEITEMS), axis=axis)
            tail = np.take(values, range(values.shape[axis] - EDGEITEMS, values.shape[axis]),
                           axis=axis)
            values = np.concatenate([head, tail], axis=axis)
    return values


def _format_block(values: np.ndarray, fmt: _Formatter, indent: int, summarise: bool) -> str:
    if values.ndim == 0:
        return fmt.format(values.item())
    n = values.shape[0]
    if summarise and n > 2 * EDGEITEMS:
        idx = list(range(EDGEITEMS)) + [None] + list(range(n - EDGEITEMS, n))
    else:
        idx = list(range(n))
    if values.ndim == 1:
        items = [("..." if i is None else fmt.pad(values[i])) for i in idx]
        per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
        lines = [", ".join(items[j:j + per_line]) for j in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    sep = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    parts = [("..." if i is None else _format_block(values[i], fmt, indent + 1, summarise))
             for i in idx]
    return "[" + sep.join(parts) + "]"


def format_values(values: np.ndarray, indent: int) -> str:
    summarise = values.size > THRESHOLD
    shown = _summarised(values) if summarise else values
    if values.size == 0:
        return "[]"
    return _format_block(values, _Formatter(shown), indent, summarise)


def tensor_repr(t, default_float) -> str:
    prefix = "tensor("
    values = t._k.to_numpy(t._data)
    body = format_values(np.asarray(values), len(prefix))
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    dtype = t.dtype
    if t.numel() == 0 and t.ndim != 1:
        suffixes.append(f"size={tuple(t.shape)}")
    if dtype is not default_float and dtype.name not in ("int64", "bool"):
        suffixes.append(f"dtype={dtype!r}")
    elif t.numel() == 0 and dtype is not default_float:
        suffixes.append(f"dtype={dtype!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + body + "".join(", " + s for s in suffixes) + ")"
