"""Dimension arguments of reductions and scans, resolved one way for every op."""
from __future__ import annotations

import math
from collections import namedtuple

from plugrad.core import dtypes as _dt
from plugrad.core.errors import DTypeError
from plugrad.core.tensor import _wrap, _wrap_dim


def return_type(name: str, *fields: str):
    """A named tuple of results as ``torch.return_types.<name>`` (``values``/``indices``)."""
    cls = namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
    return cls


def normalize_dims(dim, ndim: int, op: str):
    """``dim`` (None, an int or a sequence) as a sorted tuple of axes, or None for all."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        axes = tuple(sorted({_wrap_dim(d, ndim, op) for d in dim}))
        if len(axes) != len(dim):
            raise RuntimeError(f"{op}: dim {list(dim)} appears multiple times in the list of "
                               f"dims")
    else:
        axes = (_wrap_dim(int(dim), ndim, op),)
    if ndim == 0:
        return None
    return axes


def kept_shape(shape: tuple, axes) -> tuple:
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def reduced_shape(shape: tuple, axes, keepdim: bool) -> tuple:
    if keepdim:
        return kept_shape(shape, axes)
    return () if axes is None else tuple(n for i, n in enumerate(shape) if i not in axes)


def count(shape: tuple, axes) -> int:
    """How many elements each output of a reduction over ``axes`` combines."""
    if axes is None:
        return math.prod(shape)
    return math.prod(n for i, n in enumerate(shape) if i in axes)


def filled(x, shape: tuple, value, dtype):
    """A new tensor on ``x``'s device (results that need no kernel: empty reductions)."""
    k = x._k
    return _wrap(k.full(shape, value, dtype.name, x.device.index), dtype, x.device, k)


def check_float(op: str, x, what: str) -> None:
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}(): {what}, but got {x.dtype.name} input of shape "
                         f"{list(x.shape)}")


def int_to_long(x, dtype):
    """The result dtype of sum-like ops: ``dtype``, else int64 for bool/int input."""
    if dtype is not None:
        return _dt.get_dtype(dtype)
    return _dt.int64 if x.dtype.kind in "biu" else x.dtype
