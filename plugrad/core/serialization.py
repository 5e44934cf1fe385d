"""``plugrad.save`` / ``plugrad.load``: checkpoints as safetensors, never pickle.

Tensors go into a safetensors file under their path in the saved object (a model state
dict keeps its own keys, so PyTorch's ``safetensors.torch.load_file`` reads it as is); the
structure around them (dicts, lists, numbers, strings) is JSON in the file's metadata.
Loading executes nothing: a file that is not a well-formed safetensors file, or whose
description does not match its tensors, is refused with :class:`SerializationError`.
"""
from __future__ import annotations

import argparse
import json
import os

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core import serialization_objects as _objects
from plugrad.core.device import Device
from plugrad.core.factories import tensor
from plugrad.core.tensor import Tensor

STRUCTURE_KEY = "plugrad.structure"
FORMAT_KEY = "plugrad.format"
FORMAT_VERSION = "1"
MAX_HEADER_BYTES = 100 * 1024 * 1024

_SAFE_DTYPES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "I32": "int32",
                "I64": "int64", "F16": "float16", "F32": "float32", "F64": "float64"}
_ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "I32": 4, "I64": 8, "F16": 2, "F32": 4,
             "F64": 8}


_NUMPY_DTYPES = set(_SAFE_DTYPES.values())


class SerializationError(RuntimeError):
    """A checkpoint could not be written or was refused when read."""


# ---------------------------------------------------------------------------- save
def save(obj, f, pickle_module=None, pickle_protocol=None,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False) -> None:
    """Write ``obj`` to ``f`` (a path or a binary file): tensors, NumPy arrays and scalars,
    dicts, lists, tuples, sets, numbers, strings, None, dtypes, devices,
    ``argparse.Namespace``, and whole objects such as modules and optimizers (their class's
    name and state, see :mod:`plugrad.core.serialization_objects`); PyTorch's pickle options
    are accepted and unused."""
    tensors: dict[str, np.ndarray] = {}
    structure = _encode(obj, "", tensors, {"objects": {}, "tensors": {}, "depth": 0})
    from safetensors.numpy import save as st_save
    metadata = {STRUCTURE_KEY: json.dumps(structure), FORMAT_KEY: FORMAT_VERSION}
    payload = st_save(tensors, metadata=metadata)
    if hasattr(f, "write"):
        f.write(payload)
        return
    tmp = f"{os.fspath(f)}.tmp"
    with open(tmp, "wb") as out:
        out.write(payload)
    os.replace(tmp, f)


def _encode(obj, path: str, tensors: dict, memo: dict):
    """The JSON description of ``obj``; its arrays go into ``tensors``. Inside a whole
    object (``memo["depth"] > 0``) a tensor or object met again is written once and
    referenced, so tied weights stay tied."""
    if isinstance(obj, Tensor):
        if memo["depth"] and id(obj) in memo["tensors"]:
            return memo["tensors"][id(obj)][0]
        name = _free_name(path or "tensor", tensors)
        if obj.dtype is _dt.bfloat16:
            raise SerializationError(f"save: bfloat16 tensor at {name!r} cannot be stored "
                                     f"through NumPy")
        tensors[name] = np.ascontiguousarray(obj.detach().cpu().numpy())
        node = {"__tensor__": name, "dtype": obj.dtype.name, "device": str(obj.device),
                "requires_grad": bool(obj.requires_grad)}
        if type(obj) is not Tensor:  # nn.Parameter and other subclasses
            node["cls"] = _objects.global_name(type(obj))
        if memo["depth"]:
            memo["tensors"][id(obj)] = (node, obj)  # obj kept alive: its id stays unique
        return node
    if isinstance(obj, np.ndarray):
        if obj.dtype.name not in _NUMPY_DTYPES:
            raise SerializationError(f"save: NumPy array of dtype {obj.dtype} at "
                                     f"{path or 'top level'} cannot be stored (numeric and "
                                     f"bool arrays only; no pickle)")
        name = _free_name(path or "array", tensors)
        tensors[name] = np.ascontiguousarray(obj)
        return {"__ndarray__": name}
    if isinstance(obj, np.generic):
        if obj.dtype.name not in _NUMPY_DTYPES:
            raise SerializationError(f"save: NumPy scalar of dtype {obj.dtype} at "
                                     f"{path or 'top level'} cannot be stored")
        return {"__npscalar__": _encode(obj.item(), path, tensors, memo),
                "dtype": obj.dtype.name}
    if isinstance(obj, _dt.DType):
        return {"__dtype__": obj.name}
    if isinstance(obj, Device):
        return {"__device__": str(obj)}
    if isinstance(obj, argparse.Namespace):
        return {"__namespace__": _encode(vars(obj), path, tensors, memo)}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, float)):
        if isinstance(obj, float) and not np.isfinite(obj):
            return {"__float__": repr(obj)}
        return obj
    if isinstance(obj, dict):
        if all(isinstance(k, str) and not k.startswith("__") for k in obj):
            return {k: _encode(v, _join(path, k), tensors, memo) for k, v in obj.items()}
        items = []
        for k, v in obj.items():
            if isinstance(k, Tensor) or memo["depth"] and not isinstance(
                    k, (str, int, float, bool)):  # an optimizer's state, keyed by parameter
                items.append([_encode(k, path, tensors, memo),
                              _encode(v, _join(path, "value"), tensors, memo)])
                continue
            if not isinstance(k, (str, int, float, bool)) or k is None:
                raise SerializationError(f"save: dict key {k!r} at {path or 'top level'} is "
                                         f"not a string or number")
            items.append([k, _encode(v, _join(path, str(k)), tensors, memo)])
        return {"__dict__": items}
    if isinstance(obj, (list, tuple, set, frozenset)):
        out = [_encode(v, _join(path, str(i)), tensors, memo) for i, v in enumerate(obj)]
        if isinstance(obj, (set, frozenset)):
            return {"__set__": out, "frozen": isinstance(obj, frozenset)}
        return {"__tuple__": out} if isinstance(obj, tuple) else out
    return _encode_object(obj, path, tensors, memo)


def _encode_object(obj, path: str, tensors: dict, memo: dict):
    """A class or function by name; any other object by its class's name and its state."""
    where = path or "top level"
    if _objects._is_global(obj):
        node = _objects.encode_global(obj)
        if node is None:
            raise SerializationError(f"save: cannot store {obj!r} at {where}: a local "
                                     f"function or class has no importable name")
        return node
    if id(obj) in memo["objects"]:
        return {"__ref__": memo["objects"][id(obj)][0]}
    name, state = _objects.global_name(type(obj)), _objects.object_state(obj)
    if name is None or state is None:
        raise SerializationError(f"save: cannot store an object of type {type(obj).__name__} "
                                 f"at {where} (no importable class or no state to save; only "
                                 f"tensors, NumPy arrays, containers, numbers, strings, dtypes, "
                                 f"devices and objects with a __dict__; no pickle). For a model "
                                 f"or optimizer, its state_dict() always works")
    key = len(memo["objects"])
    memo["objects"][id(obj)] = (key, obj)
    memo["depth"] += 1
    try:
        encoded = _encode(state, path, tensors, memo)
    finally:
        memo["depth"] -= 1
    return {"__object__": name, "id": key, "state": encoded}


def _free_name(name: str, tensors: dict) -> str:
    while name in tensors:
        name += "_"
    return name


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# ---------------------------------------------------------------------------- load
def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Read what :func:`save` wrote (or any safetensors file: then a dict of tensors).

    ``map_location``: a device (string or :class:`Device`), a dict mapping saved device
    strings to new ones, or a callable ``(tensor, saved_device) -> tensor``. Nothing is ever
    unpickled; ``weights_only`` decides, as in PyTorch, which saved whole objects may be
    rebuilt (plugrad's own classes always, others once allowed through
    ``serialization.add_safe_globals`` or with ``weights_only=False``). PyTorch's pickle
    options change nothing.
    """
    data = f.read() if hasattr(f, "read") else _read_file(f)
    header = _check_header(data)
    arrays = _read_tensors(data, header)
    meta = header.get("__metadata__") or {}
    if STRUCTURE_KEY not in meta:
        return {name: _to_tensor(arr, None, map_location, False) for name, arr in arrays.items()}
    try:
        structure = json.loads(meta[STRUCTURE_KEY])
    except (TypeError, ValueError) as exc:
        raise SerializationError(f"load: malformed structure description: {exc}") from None
    return _decode(structure, arrays, _LoadContext(map_location, weights_only))


def _read_file(path) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise SerializationError(f"load: cannot read {os.fspath(path)!r}: {exc}") from None


def _check_header(data: bytes) -> dict:
    """Validate the safetensors framing before anything else reads the bytes."""
    n = int.from_bytes(data[:8], "little") if len(data) >= 8 else -1
    framed = 0 <= n <= len(data) - 8 and data[8:9] == b"{"
    if not framed and (data[:2] == b"PK" or data[:1] == b"\x80"):
        raise SerializationError("load: this looks like a pickle or a PyTorch zip checkpoint; "
                                 "plugrad.load reads only safetensors files and never unpickles")
    if len(data) < 8:
        raise SerializationError(f"load: file too short for a safetensors header "
                                 f"({len(data)} bytes)")
    if n > MAX_HEADER_BYTES:
        raise SerializationError(f"load: header length {n} exceeds the {MAX_HEADER_BYTES}-byte "
                                 f"limit")
    if 8 + n > len(data):
        raise SerializationError(f"load: header length {n} is larger than the file "
                                 f"({len(data)} bytes): truncated or corrupt")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SerializationError(f"load: malformed safetensors header: {exc}") from None
    if not isinstance(header, dict):
        raise SerializationError("load: safetensors header is not a JSON object")
    header["__body_start__"] = 8 + n
    return header


def _read_tensors(data: bytes, header: dict) -> dict:
    start = header.pop("__body_start__")
    body = memoryview(data)[start:]
    spans = []
    arrays = {}
    for name, info in header.items():
        if name == "__metadata__":
            if info is not None and not (isinstance(info, dict) and
                                         all(isinstance(v, str) for v in info.values())):
                raise SerializationError("load: __metadata__ must map strings to strings")
            continue
        if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= set(info):
            raise SerializationError(f"load: tensor {name!r}: entry needs dtype, shape and "
                                     f"data_offsets")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if dtype not in _SAFE_DTYPES:
            raise SerializationError(f"load: tensor {name!r} has unknown or unsupported dtype "
                                     f"{dtype!r}")
        if (not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape)
                or not isinstance(offsets, list) or len(offsets) != 2
                or not all(isinstance(o, int) for o in offsets)):
            raise SerializationError(f"load: tensor {name!r}: malformed shape or offsets")
        begin, end = offsets
        if not 0 <= begin <= end <= len(body):
            raise SerializationError(f"load: tensor {name!r}: offsets {offsets} are out of "
                                     f"range for a {len(body)}-byte body")
        expected = int(np.prod(shape, dtype=np.int64)) * _ITEMSIZE[dtype]
        if end - begin != expected:
            raise SerializationError(
                f"load: tensor {name!r}: shape {shape} of {dtype} needs {expected} bytes but "
                f"its span holds {end - begin}")
        spans.append((begin, end, name))
        arr = np.frombuffer(body[begin:end], dtype=np.dtype(_SAFE_DTYPES[dtype]).newbyteorder("<"))
        arrays[name] = arr.reshape(shape).astype(_SAFE_DTYPES[dtype], copy=True)
    spans.sort()
    for (b0, e0, n0), (b1, e1, n1) in zip(spans, spans[1:]):
        if b1 < e0:
            raise SerializationError(f"load: tensors {n0!r} and {n1!r} overlap in the file")
    return arrays


def _decode(node, arrays: dict, ctx: _LoadContext):
    if isinstance(node, list):
        return [_decode(v, arrays, ctx) for v in node]
    if not isinstance(node, dict):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        raise SerializationError(f"load: unexpected value {node!r} in the structure")
    if "__tensor__" in node:
        name = node["__tensor__"]
        if name not in arrays:
            raise SerializationError(f"load: the structure references tensor {name!r}, which "
                                     f"the file does not contain")
        try:
            dtype = _dt.get_dtype(node.get("dtype", str(arrays[name].dtype)))
        except TypeError:
            raise SerializationError(f"load: tensor {name!r} has unknown dtype "
                                     f"{node.get('dtype')!r}") from None
        if dtype.name != arrays[name].dtype.name:
            raise SerializationError(f"load: tensor {name!r} is described as {dtype.name} but "
                                     f"stored as {arrays[name].dtype.name}")
        if name not in ctx.tensors:
            t = _to_tensor(arrays[name], node.get("device"), ctx.map_location,
                           bool(node.get("requires_grad", False)))
            if node.get("cls") is not None:  # nn.Parameter and other Tensor subclasses
                cls = ctx.resolve(node["cls"])
                if not (isinstance(cls, type) and issubclass(cls, Tensor)):
                    raise SerializationError(f"load: tensor {name!r}: {node['cls']} is not a "
                                             f"Tensor subclass")
                t.__class__ = cls
            ctx.tensors[name] = t
        return ctx.tensors[name]
    if "__ndarray__" in node:
        name = node["__ndarray__"]
        if name not in arrays:
            raise SerializationError(f"load: the structure references array {name!r}, which "
                                     f"the file does not contain")
        return arrays[name]
    if "__npscalar__" in node:
        try:
            return np.dtype(node["dtype"]).type(_decode(node["__npscalar__"], arrays, ctx))
        except (TypeError, ValueError) as exc:
            raise SerializationError(f"load: bad NumPy scalar {node!r}: {exc}") from None
    if "__dtype__" in node:
        try:
            return _dt.get_dtype(node["__dtype__"])
        except TypeError:
            raise SerializationError(f"load: unknown dtype {node['__dtype__']!r}") from None
    if "__device__" in node:
        return Device(node["__device__"])
    if "__namespace__" in node:
        return argparse.Namespace(**_decode(node["__namespace__"], arrays, ctx))
    if "__float__" in node:
        value = node["__float__"]
        if value not in ("inf", "-inf", "nan"):
            raise SerializationError(f"load: bad float {value!r}")
        return float(value)
    if "__object__" in node:
        return _decode_object(node, arrays, ctx)
    if "__ref__" in node:
        if node["__ref__"] not in ctx.objects:
            raise SerializationError(f"load: reference to unknown object {node['__ref__']!r}")
        return ctx.objects[node["__ref__"]]
    if "__global__" in node:
        return ctx.resolve(node["__global__"])
    if "__set__" in node:
        items = [_decode(v, arrays, ctx) for v in node["__set__"]]
        return frozenset(items) if node.get("frozen") else set(items)
    if "__tuple__" in node:
        return tuple(_decode(v, arrays, ctx) for v in node["__tuple__"])
    if "__dict__" in node:
        items = node["__dict__"]
        if not isinstance(items, list) or not all(isinstance(i, list) and len(i) == 2
                                                  for i in items):
            raise SerializationError("load: malformed dict entry in the structure")
        return {(_decode(k, arrays, ctx) if isinstance(k, dict) else k): _decode(v, arrays, ctx)
                for k, v in items}
    return {k: _decode(v, arrays, ctx) for k, v in node.items()}


def _decode_object(node, arrays: dict, ctx: _LoadContext):
    cls = ctx.resolve(node["__object__"])
    try:
        obj = _objects.new_object(cls)
    except (_objects.UnsafeGlobalError, TypeError) as exc:
        raise SerializationError(f"load: cannot rebuild a {node['__object__']}: {exc}") from None
    ctx.objects[node.get("id")] = obj
    state = _decode(node.get("state"), arrays, ctx)
    try:
        _objects.set_state(obj, state)
    except _objects.UnsafeGlobalError as exc:
        raise SerializationError(f"load: {exc}") from None
    return obj


class _LoadContext:
    """What one ``load`` call decodes with: placement, the ``weights_only`` rule, and the
    objects and tensors already rebuilt (references to them resolve to the same ones)."""

    def __init__(self, map_location, weights_only):
        self.map_location, self.weights_only = map_location, weights_only
        self.objects: dict = {}
        self.tensors: dict = {}

    def resolve(self, name):
        try:
            return _objects.resolve(name, self.weights_only)
        except _objects.UnsafeGlobalError as exc:
            raise SerializationError(f"load: Weights only load failed. {exc}"
                                     if self.weights_only is not False else f"load: {exc}") \
                from None


def _target_device(saved, map_location):
    if map_location is None:
        return Device(saved) if saved else Device("cpu")
    if isinstance(map_location, dict):
        return Device(map_location.get(saved, saved) or "cpu")
    if callable(map_location):
        return None
    return Device(map_location)


def _to_tensor(arr, saved_device, map_location, requires_grad):
    device = _target_device(saved_device, map_location)
    if device is None:  # callable map_location: build on the host, let it move the tensor
        t = tensor(arr, device="cpu")
        t = map_location(t, saved_device or "cpu")
    else:
        try:
            t = tensor(arr, device=device)
        except Exception as exc:
            raise SerializationError(f"load: cannot place a tensor on {device}: {exc}; pass "
                                     f"map_location='cpu'") from None
    if requires_grad and t.dtype.is_floating_point:
        t.requires_grad_(True)
    return t
