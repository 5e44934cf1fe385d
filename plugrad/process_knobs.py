"""Process-wide settings PyTorch programs set at the top (``torch.set_num_threads(1)``,
``torch.set_float32_matmul_precision("high")``, ``torch.use_deterministic_algorithms``).

plugrad's kernels are NumPy/CuPy calls whose thread pools and matmul precision these knobs do
not reach, so each records what was asked, answers it back, and checks its argument as
PyTorch does; computation is unchanged (float32 matmuls stay full float32, which every
precision setting allows on a CPU).
"""
from __future__ import annotations

import os

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads", "set_float32_matmul_precision",
           "get_float32_matmul_precision", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled"]

_state = {"threads": None, "interop": None, "precision": "highest", "deterministic": False,
          "warn_only": False}


def _positive(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise RuntimeError(f"{name}: Expected a positive number of threads, got {n!r}")
    return n


def set_num_threads(n: int) -> None:
    _state["threads"] = _positive("set_num_threads", n)


def get_num_threads() -> int:
    return _state["threads"] or os.cpu_count() or 1


def set_num_interop_threads(n: int) -> None:
    _state["interop"] = _positive("set_num_interop_threads", n)


def get_num_interop_threads() -> int:
    return _state["interop"] or os.cpu_count() or 1


def set_float32_matmul_precision(precision: str) -> None:
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"set_float32_matmul_precision: invalid precision {precision!r} "
                           f"(expected 'highest', 'high' or 'medium')")
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Every plugrad kernel is already deterministic on the host backends."""
    _state["deterministic"], _state["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]
