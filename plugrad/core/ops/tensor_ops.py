"""The gradient ops on Tensors: the binding of every gradient rule under ``create_graph``.

Each name has the signature of the backend kernel of that name (``sum(x, axes, keepdims)``,
``where(cond, a, b)``, ``astype(x, dtype_name)``, ...) and is carried out by the
differentiable public op, so a rule run on this namespace records the graph of the
backward pass. Running a rule on a kernel table instead gives bare arrays: the same text,
the same kernels, the same bits.

The contract's composites are written in kernel names too, so a fused kernel's composite
run on this namespace is that kernel as a differentiable op (see ``fused.py``).
"""
from __future__ import annotations

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core.autograd import engine
from plugrad.core.device import Device
from plugrad.core.ops import (activation, conversion, indexing, linalg, nn_ops, pointwise,
                              reduction, shape)
from plugrad.core import factories

P, R, S, I, L = pointwise, reduction, shape, indexing, linalg


def _axes(axes):
    return None if axes is None else tuple(axes)


class TensorOps:
    """Kernel names and signatures over Tensors of one device type."""

    tensors = True

    def __init__(self, device_type: str):
        self.device_type = device_type

    def _device(self, index):
        return Device(self.device_type, index)

    # ------------------------------------------------------------------ metadata, creation
    @staticmethod
    def dtype_of(x) -> str:
        return x.dtype.name

    def full(self, shape, value, dtype, device=None):
        return factories.full(tuple(shape), value, dtype=_dt.get_dtype(dtype),
                              device=self._device(device))

    def from_numpy(self, a, dtype, device=None):
        return factories.tensor(np.asarray(a), dtype=_dt.get_dtype(dtype),
                                device=self._device(device))

    def arange(self, start, stop, step, dtype, device=None):
        return factories.arange(start, stop, step, dtype=_dt.get_dtype(dtype),
                                device=self._device(device))

    def zeros_like(self, x):
        return factories.zeros_like(x)

    @staticmethod
    def astype(x, dtype):
        return conversion.to_dtype(x, _dt.get_dtype(dtype))

    @staticmethod
    def copy(x):
        return S.clone(x)

    # ------------------------------------------------------------------ elementwise
    add = staticmethod(P.add)
    sub = staticmethod(P.sub)
    mul = staticmethod(P.mul)
    div = staticmethod(P.div)
    pow = staticmethod(P.pow)
    neg = staticmethod(P.neg)
    abs = staticmethod(P.abs)
    exp = staticmethod(P.exp)
    expm1 = staticmethod(P.expm1)
    log = staticmethod(P.log)
    log1p = staticmethod(P.log1p)
    sqrt = staticmethod(P.sqrt)
    sin = staticmethod(P.sin)
    cos = staticmethod(P.cos)
    tanh = staticmethod(P.tanh)
    sigmoid = staticmethod(P.sigmoid)
    erf = staticmethod(P.erf)
    sign = staticmethod(P.sign)
    floor = staticmethod(P.floor)
    ceil = staticmethod(P.ceil)
    round = staticmethod(P.round)
    maximum = staticmethod(P.maximum)
    minimum = staticmethod(P.minimum)
    remainder = staticmethod(P.remainder)
    floordiv = staticmethod(P.floor_divide)
    eq = staticmethod(P.eq)
    ne = staticmethod(P.ne)
    lt = staticmethod(P.lt)
    le = staticmethod(P.le)
    gt = staticmethod(P.gt)
    ge = staticmethod(P.ge)
    logical_and = staticmethod(P.logical_and)
    logical_or = staticmethod(P.logical_or)
    logical_xor = staticmethod(P.logical_xor)
    logical_not = staticmethod(P.logical_not)
    isnan = staticmethod(P.isnan)

    @staticmethod
    def where(cond, a, b):
        return P.where(cond, a, b)

    # ------------------------------------------------------------------ reductions
    @staticmethod
    def sum(x, axes, keepdims):
        return R.sum(x, _axes(axes), keepdims)

    @staticmethod
    def prod(x, axes, keepdims):
        return R.prod(x, _axes(axes), keepdims)

    @staticmethod
    def max(x, axes, keepdims):
        return R.amax(x, _axes(axes) if axes is not None else (), keepdims)

    @staticmethod
    def min(x, axes, keepdims):
        return R.amin(x, _axes(axes) if axes is not None else (), keepdims)

    @staticmethod
    def cumsum(x, axis):
        return R.cumsum(x, axis)

    @staticmethod
    def logsumexp(x, axes, keepdims):
        return R.logsumexp(x, _axes(axes) if axes is not None else tuple(range(x.ndim)),
                           keepdims)

    # ------------------------------------------------------------------ movement
    @staticmethod
    def reshape(x, shape):
        return S.reshape(x, tuple(shape))

    @staticmethod
    def permute(x, axes):
        return S.permute(x, tuple(axes))

    @staticmethod
    def broadcast_to(x, shape):
        return S.expand(x, tuple(shape))

    @staticmethod
    def concat(arrays, axis):
        return S.cat(list(arrays), axis)

    @staticmethod
    def slice(x, key):
        return x[tuple(key)]

    @staticmethod
    def flip(x, axes):
        return S.flip(x, tuple(axes))

    @staticmethod
    def pad(x, widths, value):
        return S.pad_dims(x, tuple(widths), value)

    @staticmethod
    def gather(x, axis, index):
        return I.gather(x, axis, index)

    @staticmethod
    def scatter_add(x, axis, index, src):
        return I.scatter_add(x, axis, index, src)

    @staticmethod
    def take(x, axis, index):
        return I.index_select(x, axis, index)

    @staticmethod
    def matmul(a, b):
        return L.matmul(a, b)

    # ------------------------------------------------------------------ fused
    @staticmethod
    def softmax(x, axis):
        return activation.softmax(x, axis)

    @staticmethod
    def log_softmax(x, axis):
        return activation.log_softmax(x, axis)

    @staticmethod
    def gelu(x, approximate):
        return nn_ops.gelu(x, approximate)


_BY_TYPE: dict = {}


def tensor_ops_for(k) -> TensorOps:
    """The Tensor binding for kernel table ``k``'s device type (one per type)."""
    ops = _BY_TYPE.get(k.device_type)
    if ops is None:
        ops = _BY_TYPE[k.device_type] = TensorOps(k.device_type)
    return ops


engine.tensor_ops_for = tensor_ops_for
