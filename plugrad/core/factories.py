"""Tensor factories: ``tensor``, ``zeros``, ``arange``, ``eye``, the ``*_like`` family, ..."""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core.device import Device, get_default_device
from plugrad.core.errors import ArgumentError, DTypeError, check_dtype_supported
from plugrad.core.outputs import write_out
from plugrad.core.registry import BackendError, get_registry
from plugrad.core.tensor import Size, Tensor, _adopt, _wrap, table_for


def resolve_device(device) -> Device:
    """The device a new tensor goes to. A bare multi-device type (``"cuda"``) means its
    current device, so ``"cuda"`` and ``"cuda:0"`` tensors mix as in PyTorch."""
    if device is None:
        dev = get_default_device()
    elif isinstance(device, int):
        return Device("cuda", device)
    else:
        dev = Device(device)
    return with_index(dev)


def with_index(dev: Device) -> Device:
    if dev.index is not None:
        count = table_for(dev).device_count
        if not 0 <= dev.index < count:
            raise BackendError(f"device '{dev}': index {dev.index} is out of range; backend "
                               f"{table_for(dev).name!r} has {count} {dev.type} device"
                               f"{'s' if count != 1 else ''} (indices 0..{count - 1})")
        return dev
    if dev.type in ("cpu", "ref"):
        return dev
    backend = table_for(dev).backend
    current = getattr(backend, "current_device", None)
    return Device(dev.type, current()) if current is not None else dev


def _finish(data, dtype, device, k, requires_grad) -> Tensor:
    t = _wrap(data, dtype, device, k)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _sizes(size, op: str = "size") -> tuple:
    """``(2, 3)``, ``((2, 3),)`` or ``([2, 3],)`` as a tuple of non-negative ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for i, s in enumerate(size):
        try:
            out.append(operator.index(s))
        except TypeError:
            raise TypeError(f"{op}(): argument 'size' must be a tuple of ints, but found "
                            f"element of type {type(s).__name__} at pos {i}") from None
    if any(s < 0 for s in out):
        raise ArgumentError(f"{op}(): negative dimension in size {out} (sizes must be "
                         f"non-negative)")
    return tuple(out)


def _infer_dtype(values: np.ndarray, data) -> _dt.DType:
    """Python data: bool, int64 or the default float; NumPy data keeps its dtype; Tensors in
    a list count with their own dtypes, as in PyTorch."""
    kind = values.dtype.kind
    if kind not in "biuf":
        raise DTypeError(f"tensor: can't convert data of type {values.dtype} (only bool, "
                         f"integer and floating values; PyTorch: Could not infer dtype)")
    if isinstance(data, (np.ndarray, np.generic)):
        return _dt.get_dtype(values.dtype)
    if isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in _flat_first(data)):
        found = None
        for leaf in _leaves(data):
            d = leaf.dtype if isinstance(leaf, Tensor) else _dt.scalar_dtype(leaf)
            found = d if found is None else _dt.promote_types(found, d)
        return found
    return {"b": _dt.bool_, "i": _dt.int64, "u": _dt.int64}.get(kind) or _dt.get_default_dtype()


def _to_numpy_values(data) -> np.ndarray:
    if isinstance(data, Tensor):
        return np.asarray(data._k.to_numpy(data._data))
    if isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in _flat_first(data)):
        data = _tensors_to_lists(data)
    try:
        values = np.asarray(data)
    except (ValueError, TypeError):
        _check_rectangular(data, 0)
        raise
    except OverflowError:
        raise ValueError(f"tensor: value out of range of int64 in {_short(data)}") from None
    if values.dtype == object:
        _check_rectangular(data, 0)
        if any(isinstance(v, int) and not isinstance(v, bool) for v in _leaves(data)):
            raise ValueError(f"tensor: value out of range of int64 in {_short(data)}")
    return values


def _short(data) -> str:
    text = repr(data)
    return text if len(text) <= 60 else text[:57] + "..."


def _leaves(data):
    """The numbers (or Tensors) of a nested sequence."""
    if isinstance(data, (list, tuple)):
        for d in data:
            yield from _leaves(d)
    else:
        yield data


def _check_rectangular(data, dim: int):
    """Raise PyTorch's message for a ragged nested sequence (``[[1, 2], [3]]``)."""
    if not isinstance(data, (list, tuple)):
        return
    seqs = [isinstance(d, (list, tuple)) for d in data]
    if any(seqs) and not all(seqs):
        raise ValueError(f"tensor: expected a rectangular nested sequence, but at dim {dim} "
                         f"some elements are sequences and some are numbers: {_short(data)}")
    if all(seqs) and data:
        n = len(data[0])
        for d in data:
            if len(d) != n:
                raise ValueError(f"tensor: expected sequence of length {n} at dim {dim + 1} "
                                 f"(got {len(d)})")
        for d in data:
            _check_rectangular(d, dim + 1)


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
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.clone().detach() or sourceTensor.clone().detach()"
                      ".requires_grad_(True), rather than plugrad.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
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
    if (isinstance(data, np.ndarray) and resolve_device(device).type == "cpu"
            and (dtype is None or _dt.get_dtype(dtype).name == data.dtype.name)):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A ``cpu`` tensor sharing memory with ``array``, as in PyTorch."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(array).__name__})")
    try:
        dt = _dt.get_dtype(array.dtype)
    except TypeError:
        raise TypeError(f"from_numpy: can't convert np.ndarray of type {array.dtype}; the "
                        f"supported types are: bool, uint8, int8, int16, int32, int64, float16, "
                        f"float32, float64") from None
    dev = Device("cpu")
    k = table_for(dev)
    check_dtype_supported("from_numpy", k, dt)
    data = array if k.backend.array_type is np.ndarray else k.from_numpy(array, dt.name, None)
    return _wrap(data, dt, dev, k)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    dtype, device = out_defaults(out, dtype, device)
    size = _sizes(tuple(size) if isinstance(size, (tuple, list)) else (size,), "full")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if not isinstance(fill_value, (bool, int, float, complex, np.generic)):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(fill_value).__name__}")
    dt = _dt.get_dtype(dtype) if dtype is not None else _dt.scalar_dtype(fill_value)
    return _into("full", out, _filled("full", size, fill_value, dt, device, requires_grad))


def _filled(op, size, value, dt, device, requires_grad) -> Tensor:
    """A new tensor of ``size`` filled with ``value`` (cast to ``dt`` as PyTorch casts)."""
    dev = resolve_device(device)
    k = table_for(dev)
    check_dtype_supported(op, k, dt)
    kind = dt.kind
    v = _dt.checked_scalar(op, value, dt)
    return _finish(k.full(size, v, dt.name, dev.index), dt, dev, k, requires_grad)


def _into(op, out, result: Tensor) -> Tensor:
    """Honour ``out=`` (PyTorch's rules: :mod:`plugrad.core.outputs`; a factory resizes
    ``out`` without a warning, as PyTorch's do)."""
    return result if out is None else write_out(op, out, result, warn=False)


def out_defaults(out, dtype, device):
    """A factory given ``out=`` makes ``out``'s dtype on ``out``'s device unless told."""
    if out is None or not isinstance(out, Tensor):
        return dtype, device
    return (out.dtype if dtype is None else dtype), (out.device if device is None else device)


def _default(dtype):
    return _dt.get_dtype(dtype) if dtype is not None else _dt.get_default_dtype()


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None, **_ignored) -> Tensor:
    dtype, device = out_defaults(out, dtype, device)
    return _into("zeros", out, _filled("zeros", _sizes(size, "zeros"), 0, _default(dtype),
                                     device, requires_grad))


def ones(*size, dtype=None, device=None, requires_grad=False, out=None, **_ignored) -> Tensor:
    dtype, device = out_defaults(out, dtype, device)
    return _into("ones", out, _filled("ones", _sizes(size, "ones"), 1, _default(dtype),
                                     device, requires_grad))


def empty(*size, dtype=None, device=None, requires_grad=False, out=None, **_ignored) -> Tensor:
    dtype, device = out_defaults(out, dtype, device)
    """Like ``zeros`` (plugrad does not hand out uninitialised memory)."""
    return _into("empty", out, _filled("empty", _sizes(size, "empty"), 0, _default(dtype),
                                       device, requires_grad))


def _like(op, t, fill, dtype, device, requires_grad) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(t).__name__}")
    dt = _dt.get_dtype(dtype) if dtype is not None else t.dtype
    return _filled(op, tuple(t.shape), fill, dt, device if device is not None else t.device,
                   requires_grad)


def zeros_like(t, *, dtype=None, device=None, requires_grad=False, **_ignored) -> Tensor:
    return _like("zeros_like", t, 0, dtype, device, requires_grad)


def ones_like(t, *, dtype=None, device=None, requires_grad=False, **_ignored) -> Tensor:
    return _like("ones_like", t, 1, dtype, device, requires_grad)


def legacy_new(name: str, dtype, device, args) -> Tensor:
    """PyTorch's legacy constructor arguments (``torch.FloatTensor(...)``, ``x.new(...)``):
    nothing (an empty tensor), sizes (ints or a ``Size``: uninitialised), a tensor of the
    dtype (shared), or one sequence of data."""
    if not args:
        return empty(0, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], Size):
        return empty(*args[0], dtype=dtype, device=device)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return empty(*args, dtype=dtype, device=device)
    if len(args) > 1:
        raise TypeError(f"{name}(): expected sizes (ints) or one sequence of data, got "
                        f"{len(args)} arguments")
    data = args[0]
    if isinstance(data, Tensor):
        if data.dtype is not dtype:
            raise TypeError(f"{name}(): expected a tensor of dtype {dtype}, got {data.dtype}; "
                            f"convert with .to({dtype})")
        return data.detach()
    return tensor(data, dtype=dtype, device=device)


def empty_like(t, *, dtype=None, device=None, requires_grad=False, **_ignored) -> Tensor:
    return _like("empty_like", t, 0, dtype, device, requires_grad)


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False,
              **_ignored) -> Tensor:
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _like("full_like", t, fill_value, dtype, device, requires_grad)


def _is_int(v) -> bool:
    try:
        operator.index(v)
        return True
    except TypeError:
        return False


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False,
           out=None) -> Tensor:
    """``start, start + step, ...`` below ``end``: int64 when every bound is an integer."""
    dtype, device = out_defaults(out, dtype, device)
    if end is None:
        start, end = 0, start
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    all_int = all(_is_int(v) for v in values)
    start, end, step = values if all_int else [float(v) for v in values]
    if not all_int and not all(math.isfinite(v) for v in values):
        raise ArgumentError(f"arange: unsupported range {start} -> {end} (step {step})")
    if step == 0:
        raise ArgumentError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise ArgumentError(f"arange: upper bound and larger bound inconsistent with step sign "
                         f"(start={start}, end={end}, step={step})")
    dt = _dt.get_dtype(dtype) if dtype is not None else (
        _dt.int64 if all_int else _dt.get_default_dtype())
    dev = resolve_device(device)
    k = table_for(dev)
    check_dtype_supported("arange", k, dt)
    if all_int:
        n = max(-((start - end) // step), 0)
        data = k.arange(start, start + n * step, step, dt.name, dev.index)
    else:  # in float64 like PyTorch's accumulate type; an integer dtype truncates
        n = max(int(math.ceil((end - start) / step)), 0)
        data = k.from_numpy(start + np.arange(n, dtype=np.float64) * step, dt.name, dev.index)
    result = _finish(data, dt, dev, k, requires_grad)
    if isinstance(out, Tensor) and out.numel() and out.numel() != n:
        warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is "
                      f"{out.numel()} which does not match the computed number of elements "
                      f"{n}. Note that this may occur as a result of rounding error. The out "
                      f"tensor will be resized to a tensor of shape ({n},).", UserWarning,
                      stacklevel=2)
    return _into("arange", out, result)


def _steps(op: str, steps) -> int:
    if not _is_int(steps) or operator.index(steps) < 0:
        raise ArgumentError(f"{op}: number of steps must be a non-negative integer, got {steps!r}")
    return operator.index(steps)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    values = np.linspace(float(start), float(end), _steps("linspace", steps))
    return tensor(values, dtype=_default(dtype), device=device, requires_grad=requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None,
             requires_grad=False) -> Tensor:
    values = np.logspace(float(start), float(end), _steps("logspace", steps), base=base)
    return tensor(values, dtype=_default(dtype), device=device, requires_grad=requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    n, m = _sizes((n, n if m is None else m), "eye")
    return tensor(np.eye(n, m), dtype=_default(dtype), device=device,
                  requires_grad=requires_grad)


def _dlpack_source(kind: int, index: int) -> Device:
    """The device of a DLPack object: ``cpu`` for host memory (kind 1), ``cuda:index`` for
    kind 2, else the device of the one backend whose ``dlpack_device_type`` is ``kind``."""
    if kind == 1:
        return Device("cpu")
    if kind == 2:
        return Device("cuda", index)
    reg = get_registry()
    reg.load_entry_points()
    serving = sorted(d for d, b in reg.backends.items()
                     if getattr(b, "dlpack_device_type", None) == kind)
    if len(serving) == 1:
        return Device(serving[0], index)
    declared = ", ".join(f"{d} ({b.dlpack_device_type})" for d, b in sorted(reg.backends.items())
                         if getattr(b, "dlpack_device_type", None) is not None)
    who = f"several backends ({', '.join(serving)})" if serving else "no plugrad backend"
    raise TypeError(f"from_dlpack: DLPack device type {kind} is declared by {who}; pass "
                    f"device= (the backends' DLPack device types: {declared or 'none'})")


def from_dlpack(ext_tensor, *, device=None) -> Tensor:
    """A tensor holding the values of any object that exports DLPack (NumPy, PyTorch, CuPy,
    JAX arrays), sharing its memory where the backend can (always on ``cpu`` and ``cuda``).
    ``device=None`` means the object's own device; another device gets a copy."""
    if isinstance(ext_tensor, Tensor):
        t = ext_tensor.detach()
        return t if device is None else t.to(device)
    if not hasattr(ext_tensor, "__dlpack__") or not hasattr(ext_tensor, "__dlpack_device__"):
        raise TypeError(f"from_dlpack: {type(ext_tensor).__name__} does not export __dlpack__")
    kind, index = (int(v) for v in ext_tensor.__dlpack_device__())
    dev = with_index(_dlpack_source(kind, index)) if device is None else resolve_device(device)
    k = table_for(dev)
    try:
        data = k.from_dlpack(ext_tensor, dev.index)
    except Exception as exc:  # noqa: BLE001 - the backend's own reason, with the op named
        raise (BufferError if isinstance(exc, BufferError) else TypeError)(
            f"from_dlpack: backend {k.name!r} cannot import a {type(ext_tensor).__name__} of "
            f"DLPack device type {kind}: {type(exc).__name__}: {exc}") from exc
    try:
        dt = _dt.get_dtype(k.backend.dtype_of(data))
    except TypeError as exc:  # e.g. complex
        raise TypeError(f"from_dlpack: {exc}") from exc
    check_dtype_supported("from_dlpack", k, dt)
    return _wrap(data, dt, dev, k)


def legacy_init(self, *args, dtype=None, device=None):
    """``Tensor(data)`` or ``Tensor(*sizes)``: PyTorch's legacy constructor, a float tensor
    (bound as ``Tensor.__init__`` by :mod:`plugrad.core.methods`)."""
    if len(args) == 1 and not isinstance(args[0], int):
        src = tensor(args[0], dtype=dtype or _dt.get_default_dtype(), device=device)
    else:
        src = empty(*args, dtype=dtype, device=device)
    _adopt(self, src)
