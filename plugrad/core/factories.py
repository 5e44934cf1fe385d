"""Tensor factories: ``tensor``, ``zeros``, ``arange``, ``eye``, the ``*_like`` family, ..."""
from __future__ import annotations

import math

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core.device import Device, get_default_device
from plugrad.core.ops._base import check_dtype_supported
from plugrad.core.tensor import Tensor, _wrap, table_for


def resolve_device(device) -> Device:
    if device is None:
        return get_default_device()
    if isinstance(device, int):
        return Device("cuda", device)
    return Device(device)


def _finish(data, dtype, device, k, requires_grad) -> Tensor:
    t = _wrap(data, dtype, device, k)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _sizes(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = tuple(int(s) for s in size)
    if any(s < 0 for s in out):
        raise ValueError(f"negative dimension in size {list(out)}")
    return out


def _infer_dtype(values: np.ndarray, data) -> _dt.DType:
    """Python data: bool, int64 or the default float; NumPy data keeps its dtype."""
    kind = values.dtype.kind
    from_numpy = isinstance(data, (np.ndarray, np.generic))
    if kind == "b":
        return _dt.bool_
    if kind in "iu":
        return _dt.get_dtype(values.dtype) if from_numpy else _dt.int64
    if kind == "f":
        return _dt.get_dtype(values.dtype) if from_numpy else _dt.get_default_dtype()
    raise TypeError(f"tensor: can't convert data of type {values.dtype} (only bool, integer and "
                    f"floating values)")


def _to_numpy_values(data) -> np.ndarray:
    if isinstance(data, Tensor):
        return np.asarray(data._k.to_numpy(data._data))
    if isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in _flat_first(data)):
        data = _tensors_to_lists(data)
    try:
        return np.asarray(data)
    except ValueError as exc:
        raise ValueError(f"tensor: expected a rectangular nested sequence of numbers "
                         f"({exc})") from None


def _flat_first(data):
    while isinstance(data, (list, tuple)) and data:
        yield data[0]
        data = data[0]


def _tensors_to_lists(data):
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_lists(d) for d in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested sequence, array, Tensor)."""
    dev = resolve_device(device if device is not None or not isinstance(data, Tensor)
                         else data.device)
    values = _to_numpy_values(data)
    dt = _dt.get_dtype(dtype) if dtype is not None else (
        data.dtype if isinstance(data, Tensor) else _infer_dtype(values, data))
    k = table_for(dev)
    check_dtype_supported("tensor", k, dt)
    if dt is _dt.bfloat16:
        values = values.astype(np.float32)
    return _finish(k.from_numpy(values, dt.name, dev.index), dt, dev, k, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, without a copy where it already is one of the right kind."""
    if isinstance(data, Tensor):
        out = data
        if dtype is not None:
            out = out.to(_dt.get_dtype(dtype))
        if device is not None:
            out = out.to(resolve_device(device))
        return out
    if isinstance(data, np.ndarray) and dtype is None and resolve_device(device).type == "cpu":
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A ``cpu`` tensor sharing memory with ``array``, as in PyTorch."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(array).__name__})")
    dt = _dt.get_dtype(array.dtype)
    dev = Device("cpu")
    k = table_for(dev)
    check_dtype_supported("from_numpy", k, dt)
    data = array if k.backend.array_type is np.ndarray else k.from_numpy(array, dt.name, None)
    return _wrap(data, dt, dev, k)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    size = _sizes((size,)) if isinstance(size, (tuple, list)) else _sizes((size,))
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    dt = _dt.get_dtype(dtype) if dtype is not None else _dt.scalar_dtype(fill_value)
    return _filled(size, fill_value, dt, device, requires_grad)


def _filled(size, value, dt, device, requires_grad) -> Tensor:
    dev = resolve_device(device)
    k = table_for(dev)
    check_dtype_supported("full", k, dt)
    kind = dt.kind
    v = float(value) if kind == "f" else (bool(value) if kind == "b" else int(value))
    return _finish(k.full(size, v, dt.name, dev.index), dt, dev, k, requires_grad)


def _default(dtype):
    return _dt.get_dtype(dtype) if dtype is not None else _dt.get_default_dtype()


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    return _filled(_sizes(size), 0, _default(dtype), device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    return _filled(_sizes(size), 1, _default(dtype), device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, **_ignored) -> Tensor:
    """Like ``zeros`` (plugrad does not hand out uninitialised memory)."""
    return _filled(_sizes(size), 0, _default(dtype), device, requires_grad)


def _like(t, dtype, device):
    return (_dt.get_dtype(dtype) if dtype is not None else t.dtype,
            device if device is not None else t.device)


def zeros_like(t, *, dtype=None, device=None, requires_grad=False, **_ignored) -> Tensor:
    dt, dev = _like(t, dtype, device)
    return _filled(tuple(t.shape), 0, dt, dev, requires_grad)


def ones_like(t, *, dtype=None, device=None, requires_grad=False, **_ignored) -> Tensor:
    dt, dev = _like(t, dtype, device)
    return _filled(tuple(t.shape), 1, dt, dev, requires_grad)


def empty_like(t, *, dtype=None, device=None, requires_grad=False, **_ignored) -> Tensor:
    return zeros_like(t, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False,
              **_ignored) -> Tensor:
    dt, dev = _like(t, dtype, device)
    return _filled(tuple(t.shape), fill_value, dt, dev, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if end is None:
        start, end = 0, start
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = values
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise ValueError(f"arange: upper bound and larger bound inconsistent with step sign "
                         f"(start={start}, end={end}, step={step})")
    if dtype is not None:
        dt = _dt.get_dtype(dtype)
    else:
        dt = _dt.int64 if all(isinstance(v, int) for v in values) else _dt.get_default_dtype()
    dev = resolve_device(device)
    k = table_for(dev)
    check_dtype_supported("arange", k, dt)
    n = max(int(math.ceil((end - start) / step)), 0)
    data = k.arange(start, start + n * step if dt.kind in "iu" else end, step, dt.name,
                    dev.index) if dt.kind in "iu" else k.from_numpy(
        start + np.arange(n, dtype=np.float64) * step, dt.name, dev.index)
    return _finish(data, dt, dev, k, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    values = np.linspace(float(start), float(end), int(steps))
    return tensor(values, dtype=_default(dtype), device=device, requires_grad=requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None,
             requires_grad=False) -> Tensor:
    values = np.logspace(float(start), float(end), int(steps), base=base)
    return tensor(values, dtype=_default(dtype), device=device, requires_grad=requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return tensor(np.eye(n, m if m is not None else n), dtype=_default(dtype), device=device,
                  requires_grad=requires_grad)
