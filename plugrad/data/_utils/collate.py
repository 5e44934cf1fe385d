"""Turning a list of samples into a batch (``default_collate``), as PyTorch does."""
from __future__ import annotations

import collections.abc

import numpy as np

import plugrad


def default_collate(batch):
    """Stack tensors, numbers and arrays along a new first dimension; recurse into dicts,
    tuples (which come back as lists, as in PyTorch), namedtuples and lists."""
    elem = batch[0]
    if isinstance(elem, plugrad.Tensor):
        return plugrad.stack(list(batch), 0)
    if isinstance(elem, np.ndarray) and elem.dtype.kind not in "OSUV":
        return plugrad.stack([plugrad.as_tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic):
        return plugrad.tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return plugrad.tensor(batch, dtype=plugrad.bool)
    if isinstance(elem, float):
        return plugrad.tensor(batch, dtype=plugrad.float64)
    if isinstance(elem, int):
        return plugrad.tensor(batch, dtype=plugrad.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        out = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(out)
        except TypeError:  # a mapping type that can't be built from a dict
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(b) != size for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns
        try:
            return type(elem)(columns)
        except TypeError:
            return columns
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(elem).__name__}")


def default_convert(data):
    """Without batching: NumPy arrays become tensors, containers are walked; else as is."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OSUV":
        return plugrad.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return {key: default_convert(v) for key, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(v) for v in data))
    if isinstance(data, tuple):
        return [default_convert(v) for v in data]
    if isinstance(data, list):
        return [default_convert(v) for v in data]
    return data
