"""``plugrad.cuda``: what PyTorch users ask of the GPU, answered by the ``cuda`` backend.

Nothing here imports CuPy until a question needs it, and ``is_available()`` / ``device_count()``
never raise: without CuPy or a GPU they answer ``False`` / ``0``.
"""
from __future__ import annotations

from plugrad.legacy import _CUDA

globals().update(_CUDA)  # torch.cuda.FloatTensor, ...: the legacy CUDA tensor types


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


def _index(device, b=None) -> int:
    """The CUDA device index of ``device``: an int, ``"cuda"``/``"cuda:N"``, a Device, or None
    (the current device)."""
    b = b or _require()
    if device is None:
        return b.current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        idx = device
    else:
        from plugrad.core.device import Device
        d = Device(device)
        if d.type != "cuda":
            raise ValueError(f"expected a cuda device, got {d}")
        idx = b.current_device() if d.index is None else d.index
    if not 0 <= idx < b.device_count():
        raise ValueError(f"invalid CUDA device index {idx}: "
                         f"{b.device_count()} device(s) are present")
    return idx


def current_device() -> int:
    """Index of the device that plain ``"cuda"`` tensors go to."""
    return _require().current_device()


def set_device(device) -> None:
    """Make ``device`` (an index, ``"cuda:N"`` or a Device) the current CUDA device."""
    b = _require()
    b.cp.cuda.Device(_index(device, b)).use()


class device:
    """Context manager making a CUDA device current inside the block (``torch.cuda.device``)."""

    def __init__(self, device):
        self.idx = device
        self._prev = None

    def __enter__(self):
        b = _require()
        self._prev = b.current_device()
        b.cp.cuda.Device(_index(self.idx, b)).use()
        return self

    def __exit__(self, *exc):
        _backend().cp.cuda.Device(self._prev).use()
        return False


def synchronize(device=None) -> None:
    """Wait for every queued kernel on ``device`` (default: the current one) to finish."""
    b = _require()
    b.synchronize(_index(device, b))


def manual_seed(seed: int) -> None:
    """Seed the current device's generator (a no-op without CUDA, as in PyTorch)."""
    if is_available():
        _backend().seed_device(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seed every device's generator (a no-op without CUDA)."""
    if is_available():
        _backend().seed(int(seed))


def get_rng_state(device="cuda"):
    """The cuda backend's generator state as a uint8 tensor, where the backend can read it
    out (CuPy's cuRAND generators cannot: then a RuntimeError says to seed instead)."""
    import numpy as np

    from plugrad.core.factories import tensor
    b = _require()
    state = b.rng_state()
    if state is None:
        raise RuntimeError(f"torch.cuda.get_rng_state: the {b.name!r} backend cannot read its "
                           "generator's state; use torch.cuda.manual_seed to repeat a run")
    return tensor(np.frombuffer(state, dtype=np.uint8).copy(), dtype="uint8")


def set_rng_state(new_state, device="cuda") -> None:
    """Restore a state :func:`get_rng_state` returned."""
    import numpy as np
    _require().set_rng_state(bytes(np.asarray(new_state.cpu().numpy(), dtype=np.uint8)))


def get_rng_state_all() -> list:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def memory_allocated(device=None) -> int:
    """Bytes held by live CuPy arrays on ``device`` (CuPy's default memory pool)."""
    b = _require()
    return b.memory_stats(_index(device, b))["allocated"]


def memory_reserved(device=None) -> int:
    """Bytes the memory pool holds on ``device``, in use or cached for reuse."""
    b = _require()
    return b.memory_stats(_index(device, b))["reserved"]


def max_memory_allocated(device=None) -> int:
    """An upper bound of the peak of :func:`memory_allocated`: CuPy's pool keeps no peak
    counter, and everything ever allocated stays reserved until :func:`empty_cache`."""
    return memory_reserved(device)


def empty_cache() -> None:
    """Return the cached, unused blocks of the memory pools to the driver."""
    if is_available():
        _backend().empty_cache()


def get_device_name(device=None) -> str:
    b = _require()
    name = b.cp.cuda.runtime.getDeviceProperties(_index(device, b))["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 works on the current CUDA device (False without CUDA)."""
    return is_available() and "bfloat16" in _backend().dtypes


def reset_peak_memory_stats(device=None) -> None:
    """Accepted (CuPy's pool keeps no peak counter to reset)."""


def __getattr__(name):
    if name == "amp":  # ``torch.cuda.amp``: imported on first use
        import importlib
        return importlib.import_module("plugrad.cuda.amp")
    raise AttributeError(f"module 'plugrad.cuda' has no attribute {name!r}")
