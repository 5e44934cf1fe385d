"""``assert_close``: compare tensors, arrays, numbers and nested lists as PyTorch does.

Default tolerances follow ``torch.testing.assert_close``: they are chosen by dtype (the
looser of the two when the dtypes differ and ``check_dtype=False``); integers and bool
compare exactly. The failure message names the mismatched count, the greatest absolute and
relative differences and where they occur.
"""
from __future__ import annotations

import numpy as np

from plugrad.core.tensor import Tensor

__all__ = ["assert_close", "default_tolerances"]

#: ``(rtol, atol)`` by dtype name, as ``torch.testing.assert_close`` chooses them.
DEFAULT_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}


def default_tolerances(*dtype_names: str) -> tuple[float, float]:
    """``(rtol, atol)`` for values of these dtypes: the loosest of them; 0 for exact kinds."""
    rtol = atol = 0.0
    for name in dtype_names:
        r, a = DEFAULT_TOLERANCES.get(name, (0.0, 0.0))
        rtol, atol = max(rtol, r), max(atol, a)
    return rtol, atol


def _is_leaf(x) -> bool:
    return isinstance(x, (Tensor, np.ndarray, np.generic, bool, int, float))


def _to_host(x) -> tuple[np.ndarray, str, str]:
    """``(values, dtype name, kind of input)`` of a tensor-like."""
    if isinstance(x, Tensor):
        values = np.asarray(x.detach().numpy(force=True))
        return values, x.dtype.name, f"Tensor on {x.device}"
    if isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(x), np.asarray(x).dtype.name, "ndarray"
    if isinstance(x, bool):
        return np.asarray(x), "bool", "bool"
    if isinstance(x, int):
        return np.asarray(x, dtype=np.int64), "int64", "int"
    if isinstance(x, float):
        return np.asarray(x, dtype=np.float64), "float64", "float"
    try:
        values = np.asarray(x)
    except Exception as exc:  # noqa: BLE001
        raise TypeError(f"assert_close: cannot compare an object of type "
                        f"{type(x).__name__}") from exc
    if values.dtype == object:
        raise TypeError(f"assert_close: cannot compare an object of type {type(x).__name__}")
    if values.dtype.kind == "f":
        values = values.astype(np.float64)
    elif values.dtype.kind in "iu":
        values = values.astype(np.int64)
    return values, values.dtype.name, type(x).__name__


def _holds_tensors(x) -> bool:
    return isinstance(x, (list, tuple)) and any(
        isinstance(e, (Tensor, np.ndarray)) or _holds_tensors(e) for e in x)


def assert_close(actual, expected, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_dtype: bool = True, msg: str | None = None,
                 _path: str = "") -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close.

    ``|actual - expected| <= atol + rtol * |expected|`` elementwise (infinities must match
    exactly; NaN matches NaN only with ``equal_nan``). Shapes must be equal and, with
    ``check_dtype``, the dtypes too. ``rtol`` and ``atol`` must be given together or not at
    all; omitted, they default by dtype (float16 1e-3/1e-5, float32 1.3e-6/1e-5, float64
    1e-7/1e-7, integers and bool exact). Sequences of tensors are compared item by item.
    """
    if (rtol is None) != (atol is None):
        raise ValueError("assert_close: both 'rtol' and 'atol' must be given, or neither "
                         f"(got rtol={rtol}, atol={atol})")
    if _holds_tensors(actual) or _holds_tensors(expected):
        if not (isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple))):
            raise AssertionError(f"{_where(_path)}one input is a sequence, the other is a "
                                 f"{type(actual if _holds_tensors(expected) else expected).__name__}")
        if len(actual) != len(expected):
            raise AssertionError(f"{_where(_path)}the sequences differ in length: "
                                 f"{len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, rtol, atol, equal_nan, check_dtype, msg, f"{_path}[{i}]")
        return
    a, adt, akind = _to_host(actual)
    e, edt, _ = _to_host(expected)
    head = msg + "\n\n" if msg else ""
    if a.shape != e.shape:
        raise AssertionError(f"{head}{_where(_path)}The values for attribute 'shape' do not "
                             f"match: {tuple(a.shape)} != {tuple(e.shape)}.")
    if check_dtype and adt != edt:
        raise AssertionError(f"{head}{_where(_path)}The values for attribute 'dtype' do not "
                             f"match: {adt} != {edt}.")
    if rtol is None:
        rtol, atol = default_tolerances(adt, edt)
    mismatch, abs_diff, rel_diff = _mismatches(a, e, rtol, atol, equal_nan)
    n_bad = int(mismatch.sum())
    if n_bad == 0:
        return
    total = int(mismatch.size)
    what = "Scalars" if a.ndim == 0 and not isinstance(actual, (Tensor, np.ndarray)) else \
        "Tensor-likes"
    lines = [f"{head}{_where(_path)}{what} are not {'equal' if rtol == atol == 0 else 'close'}!",
             "", f"Mismatched elements: {n_bad} / {total} ({100.0 * n_bad / total:.1f}%)"]
    for label, diff, allowed in (("absolute", abs_diff, atol), ("relative", rel_diff, rtol)):
        masked = np.where(mismatch, np.nan_to_num(diff, nan=np.inf), -1.0)
        flat = int(np.argmax(masked))
        idx = np.unravel_index(flat, a.shape) if a.ndim else ()
        value = diff.reshape(-1)[flat] if diff.size else float("nan")
        at = f" at index {tuple(int(i) for i in idx)}" if a.ndim else ""
        lines.append(f"Greatest {label} difference: {_fmt(value)}{at} "
                     f"(up to {allowed:g} allowed)")
    lines.append(f"(actual: {akind} of dtype {adt}; expected dtype {edt})")
    raise AssertionError("\n".join(lines))


def _fmt(v) -> str:
    v = float(v)
    return "nan" if v != v else (str(int(v)) if v.is_integer() and abs(v) < 1e16 else f"{v:g}")


def _where(path: str) -> str:
    return f"item {path}: " if path else ""


def _mismatches(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool):
    """Boolean mismatch mask, absolute and relative differences (float64 arrays)."""
    if a.dtype.kind == "b" and e.dtype.kind == "b":
        bad = a != e
        d = bad.astype(np.float64)
        return bad, d, d
    with np.errstate(all="ignore"):
        af = a.astype(np.float64)
        ef = e.astype(np.float64)
        if a.dtype.kind in "iu" and e.dtype.kind in "iu":
            bad = a.astype(np.int64) != e.astype(np.int64)
            d = np.abs(af - ef)
            return bad, d, d / np.abs(ef)
        diff = np.abs(af - ef)
        rel = diff / np.abs(ef)
        same = af == ef  # covers equal infinities
        close = same | (np.isfinite(diff) & (diff <= atol + rtol * np.abs(ef)))
        nan_a, nan_e = np.isnan(af), np.isnan(ef)
        if equal_nan:
            close = close | (nan_a & nan_e)
        bad = ~close
        diff = np.where(same, 0.0, diff)
        rel = np.where(same, 0.0, rel)
        return bad, diff, rel
