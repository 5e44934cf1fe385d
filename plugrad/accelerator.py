"""``torch.accelerator``: the device-agnostic questions PyTorch 2.6+ programs ask
(``pytorch/examples`` choose their device with ``torch.accelerator.is_available()`` and
``current_accelerator()``). plugrad's accelerator is ``cuda`` (the CuPy backend) when a GPU
is there; without one, as in PyTorch on a CPU-only machine, there is none and programs fall
back to ``"cpu"`` (which ``python -m plugrad run --device ref`` maps to its own device).
"""
from __future__ import annotations

from plugrad import cuda as _cuda
from plugrad.core.device import Device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "current_device_idx", "set_device_index", "set_device_idx", "synchronize",
           "device_index"]


def is_available() -> bool:
    return _cuda.is_available()


def current_accelerator(check_available: bool = False) -> Device | None:
    """``device('cuda')`` where a GPU serves it, else None (PyTorch on a CPU-only build)."""
    return Device("cuda") if _cuda.is_available() else None


def device_count() -> int:
    return _cuda.device_count()


def _require(what: str):
    if not _cuda.is_available():
        raise RuntimeError(f"torch.accelerator.{what}: no accelerator is available (plugrad's "
                           f"is cuda, through CuPy and a GPU)")


def current_device_index() -> int:
    _require("current_device_index")
    return _cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device) -> None:
    _require("set_device_index")
    _cuda.set_device(device)


set_device_idx = set_device_index


def synchronize(device=None) -> None:
    if _cuda.is_available():
        _cuda.synchronize(device)


class device_index:
    """``with torch.accelerator.device_index(i):`` makes CUDA device ``i`` current inside."""

    def __init__(self, device):
        self.idx = device
        self._ctx = None

    def __enter__(self):
        if self.idx is not None:
            _require("device_index")
            self._ctx = _cuda.device(self.idx)
            self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
        return False
