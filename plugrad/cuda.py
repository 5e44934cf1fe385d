"""``plugrad.cuda``: what PyTorch users ask of the GPU, answered by the ``cuda`` backend.

Nothing here imports CuPy until a question needs it.
"""
from __future__ import annotations


def _backend():
    from plugrad.core.registry import get_registry
    return get_registry().backends.get("cuda")


def is_available() -> bool:
    b = _backend()
    return b is not None and b.is_available()


def device_count() -> int:
    return _backend().device_count() if is_available() else 0


def _require():
    if not is_available():
        b = _backend()
        reason = b.unavailable_reason() if b is not None else "no backend serves 'cuda'"
        raise RuntimeError(f"CUDA is not available: {reason}")
    return _backend()


_current = 0


def current_device() -> int:
    _require()
    return _current


def set_device(device) -> None:
    global _current
    _require()
    from plugrad.core.device import Device
    d = Device(device) if not isinstance(device, int) else Device("cuda", device)
    _current = d.index or 0
    _backend().cp.cuda.Device(_current).use()


def synchronize(device=None) -> None:
    _require().synchronize(device)


def manual_seed(seed: int) -> None:
    if is_available():
        _backend().seed(int(seed))


def manual_seed_all(seed: int) -> None:
    manual_seed(seed)


def memory_allocated(device=None) -> int:
    return _require().cp.get_default_memory_pool().used_bytes()


def memory_reserved(device=None) -> int:
    return _require().cp.get_default_memory_pool().total_bytes()


def max_memory_allocated(device=None) -> int:
    return memory_reserved(device)


def empty_cache() -> None:
    if is_available():
        _backend().cp.get_default_memory_pool().free_all_blocks()


def get_device_name(device=None) -> str:
    cp = _require().cp
    idx = device if isinstance(device, int) else 0
    return cp.cuda.runtime.getDeviceProperties(idx)["name"].decode()
