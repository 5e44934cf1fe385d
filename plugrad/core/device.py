"""Devices (``cpu``, ``cuda:1``, ``ref``, a plugin's own) and the default device.

Device objects are interned, so the per-op same-device check is an identity test.
"""
from __future__ import annotations

import os
import threading

from plugrad.core.registry import BackendError, get_registry


class Device:
    """Where a tensor lives: a device type (served by one backend) and an optional index."""

    __slots__ = ("type", "index", "_str")

    def __new__(cls, spec, index: int | None = None):
        if isinstance(spec, Device):
            if index is None:
                return spec
            spec = spec.type
        if not isinstance(spec, str):
            raise TypeError(f"device: expected a string like 'cpu' or 'cuda:0', got {spec!r}")
        key = (spec, index)
        found = _interned.get(key)
        if found is not None:
            return found
        dev_type, _, idx = spec.partition(":")
        if idx:
            if index is not None:
                raise ValueError(f"device: index given twice in {spec!r} and index={index}")
            if not idx.isdigit():
                raise ValueError(f"device: invalid device string {spec!r} "
                                 "(expected 'type' or 'type:index')")
            index = int(idx)
        if not dev_type or not dev_type.replace("_", "").isalnum():
            raise ValueError(f"device: invalid device string {spec!r}")
        canonical = (dev_type, index)
        with _lock:
            obj = _interned.get(canonical)
            if obj is None:
                obj = object.__new__(cls)
                obj.type = dev_type
                obj.index = index
                obj._str = dev_type if index is None else f"{dev_type}:{index}"
                _interned[canonical] = obj
            _interned[key] = obj
        return obj

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self._str

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = Device(other)
            except ValueError:
                return False
        return self is other

    def __hash__(self) -> int:
        return hash(self._str)

    def __reduce__(self):
        return (Device, (self._str,))

    def __enter__(self) -> "Device":
        """``with plugrad.device('ref'):`` makes ``ref`` the default inside the block."""
        _check_served(self, "device")
        _default.stack.append(_default.value)
        _default.value = self
        return self

    def __exit__(self, *exc) -> bool:
        _default.value = _default.stack.pop()
        return False


device = Device
_interned: dict = {}
_lock = threading.Lock()


class _DefaultDevice:
    """The device new tensors go to: ``PLUGRAD_DEVICE`` at import, else ``cpu``."""

    def __init__(self):
        spec = os.environ.get("PLUGRAD_DEVICE", "") or "cpu"
        try:
            self.value = Device(spec)
        except ValueError as exc:
            raise ValueError(f"PLUGRAD_DEVICE={spec!r} is not a valid device: {exc}") from None
        self.stack: list = []


_default = _DefaultDevice()


def _check_served(dev: Device, op: str) -> Device:
    """Fail now, naming ``op``, if no backend can serve ``dev`` (rather than at first use)."""
    try:
        get_registry().table(dev.type)
    except BackendError as exc:
        raise BackendError(f"{op}: {exc}") from None
    return dev


class set_default_device:
    """Make ``device`` the default for new tensors; in a ``with`` block, only inside it."""

    def __init__(self, device):
        new = _check_served(Device(device if device is not None else "cpu"),
                            "set_default_device")
        self._previous = _default.value
        _default.value = new

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _default.value = self._previous
        return False


def get_default_device() -> Device:
    return _default.value


_REAL_CPU = {key: Device(*key) for key in (("cpu", None), ("cpu:0", None), ("cpu", 0))}
_cpu_target: Device | None = None


def map_cpu_to(target) -> None:
    """Make the device name ``cpu`` resolve to ``target`` (``None`` or ``"cpu"``: undo).

    The torch alias uses it under ``--device ref`` (or a plugin's device): a PyTorch program
    says ``"cpu"`` when it means "not the GPU", so its ``torch.device("cpu")``, ``.cpu()`` and
    ``.to("cpu")`` land on the device the run asked for. Interned lookups make it free.
    """
    global _cpu_target
    _interned.update(_REAL_CPU)
    _cpu_target = None
    if target is None:
        return
    target = _check_served(Device(target), "map_cpu_to")
    if target.type != "cpu":
        _cpu_target = target
        for key in _REAL_CPU:
            _interned[key] = target


def is_host(dev: Device) -> bool:
    """``cpu``, or the device ``cpu`` is mapped to: where ``.numpy()`` may read from."""
    return dev.type == "cpu" or dev is _cpu_target
