"""``repr`` of tensors, formatted exactly as PyTorch formats them (users compare with tutorials).

The algorithm follows ``torch/_tensor_str.py``: one formatter (fixed, integer-valued or
scientific, and one width) is chosen from the finite non-zero values that will be shown, then
rows are wrapped at ``linewidth`` and suffixes (device, dtype, grad) appended.
"""
from __future__ import annotations

import contextlib
import math

import numpy as np


class _Options:
    """Current print options (``torch._tensor_str.PRINT_OPTS``)."""

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


PRINT_OPTS = _Options()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Like ``torch.set_printoptions``: ``sci_mode`` None lets the values decide."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: unknown profile {profile!r} "
                             f"(expected one of {', '.join(_PROFILES)})")
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    return dict(vars(PRINT_OPTS))


@contextlib.contextmanager
def printoptions(**kwargs):
    """Change the print options inside a ``with`` block only."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """One number format and width for every element shown, chosen as PyTorch chooses it."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        flat = values.ravel()
        if not self.floating:
            strs = [str(v) for v in flat.tolist()]
            self.width = max([1] + [len(s) for s in strs])
            return
        shown = flat.astype(np.float64)
        finite = shown[np.isfinite(shown) & (shown != 0)]
        if finite.size == 0:
            return
        hi, lo = float(np.abs(finite).max()), float(np.abs(finite).min())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
                         if PRINT_OPTS.sci_mode is None else bool(PRINT_OPTS.sci_mode))
        self.width = max(len(self._plain(v)) for v in finite.tolist())

    def _plain(self, v: float) -> str:
        """``v`` formatted without padding."""
        if self.sci_mode:
            return f"{v:.{PRINT_OPTS.precision}e}"
        if self.int_mode:
            return f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        return f"{v:.{PRINT_OPTS.precision}f}"

    def format(self, v) -> str:
        s = self._plain(float(v)) if self.floating else str(v)
        return s.rjust(self.width)


def _summarised(values: np.ndarray) -> np.ndarray:
    """Only the edge items along every dimension (the values a summary shows)."""
    edge = PRINT_OPTS.edgeitems
    for axis in range(values.ndim):
        n = values.shape[axis]
        if n > 2 * edge:
            values = np.take(values, list(range(edge)) + list(range(n - edge, n)), axis=axis)
    return values


def _shown_rows(n: int, summarise: bool) -> list:
    """Row indices to print, with None where the ``...`` goes."""
    edge = PRINT_OPTS.edgeitems
    if summarise and n > 2 * edge:
        return list(range(edge)) + [None] + list(range(n - edge, n))
    return list(range(n))


def _vector(values: np.ndarray, fmt: _Formatter, indent: int, summarise: bool) -> str:
    if summarise and not PRINT_OPTS.edgeitems:
        items = ["..."]
    else:
        items = [" ..." if i is None else fmt.format(values[i])
                 for i in _shown_rows(values.shape[0], summarise)]
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.width + 2)))
    lines = [", ".join(items[j:j + per_line]) for j in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _block(values: np.ndarray, fmt: _Formatter, indent: int, summarise: bool) -> str:
    if values.ndim == 0:
        return fmt.format(values.item())
    if values.ndim == 1:
        return _vector(values, fmt, indent, summarise)
    parts = ["..." if i is None else _block(values[i], fmt, indent + 1, summarise)
             for i in _shown_rows(values.shape[0], summarise)]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def format_values(values: np.ndarray, indent: int) -> str:
    """The bracketed body of a repr (no prefix, no suffixes)."""
    if values.size == 0:
        return "[]"
    summarise = values.size > PRINT_OPTS.threshold
    fmt = _Formatter(_summarised(values) if summarise else values)
    return _block(values, fmt, indent, summarise)


def _add_suffixes(body: str, suffixes: list, indent: int) -> str:
    """Append ``, suffix`` items, starting a new line where one would pass ``linewidth``."""
    out = [body]
    last = len(body) - body.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    return "".join(out) + ")"


def _suffixes(t, default_float) -> list:
    out = []
    if t.device.type != "cpu":
        out.append(f"device='{t.device}'")
    empty = t.numel() == 0
    if empty and t.ndim != 1 or not empty and not PRINT_OPTS.edgeitems:
        out.append(f"size={tuple(t.shape)}")
    # an empty tensor shows every dtype but the default: no values hint at int64 or bool
    if t.dtype is not default_float and (empty or t.dtype.name not in ("int64", "bool")):
        out.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        out.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        out.append("requires_grad=True")
    return out


def tensor_repr(t, default_float) -> str:
    prefix = "tensor("
    values = np.asarray(t._k.to_numpy(t._data))
    if values.dtype.kind == "V":  # bfloat16 (ml_dtypes): format its exact float32 values
        values = values.astype(np.float32)
    body = format_values(values, len(prefix))
    return _add_suffixes(prefix + body, _suffixes(t, default_float), len(prefix))
