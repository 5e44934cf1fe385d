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
from plugrad.core.tensor import Tensor
from plugrad.core import factories
from plugrad.core.ops import (activation, binary, compare, conv, conversion, extrema, fused,
                              indexing,
                              join, linalg, movement, reduction, select, shape, slicing, unary)
from plugrad.core.ops import linalg_decomp
from plugrad.core.ops import bitwise, transcendental

R, E, S, I, L = reduction, extrema, shape, indexing, linalg
J, M = join, movement


B, U, C, SEL = binary, unary, compare, select


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
    add = staticmethod(B.add)
    sub = staticmethod(B.sub)
    mul = staticmethod(B.mul)
    div = staticmethod(B.div)
    pow = staticmethod(B.pow_kernel)  # no sqrt shortcut: as the kernel binding's pow
    neg = staticmethod(U.neg)
    abs = staticmethod(U.abs)
    exp = staticmethod(U.exp)
    expm1 = staticmethod(U.expm1)
    log = staticmethod(U.log)
    log1p = staticmethod(U.log1p)
    sqrt = staticmethod(U.sqrt)
    sin = staticmethod(U.sin)
    cos = staticmethod(U.cos)
    tanh = staticmethod(U.tanh)
    sigmoid = staticmethod(U.sigmoid)
    erf = staticmethod(U.erf)
    sign = staticmethod(U.sign)
    floor = staticmethod(U.floor)
    ceil = staticmethod(U.ceil)
    round = staticmethod(U.round)
    @staticmethod
    def maximum(a, b):  # with a number: clamp (the kernel takes weak scalars)
        return SEL.maximum(a, b) if isinstance(b, Tensor) else SEL.clamp_min(a, b)

    @staticmethod
    def minimum(a, b):
        return SEL.minimum(a, b) if isinstance(b, Tensor) else SEL.clamp_max(a, b)
    remainder = staticmethod(B.remainder)

    @staticmethod
    def floordiv(a, b):  # in a gradient: div's floor mode (gradient 0), not floor_divide
        return B.div(a, b, rounding_mode="floor")

    eq = staticmethod(C.eq)
    ne = staticmethod(C.ne)
    lt = staticmethod(C.lt)
    le = staticmethod(C.le)
    gt = staticmethod(C.gt)
    ge = staticmethod(C.ge)
    logical_and = staticmethod(C.logical_and)
    logical_or = staticmethod(C.logical_or)
    logical_xor = staticmethod(C.logical_xor)
    logical_not = staticmethod(C.logical_not)
    isnan = staticmethod(C.isnan)

    @staticmethod
    def where(cond, a, b):
        return SEL.where(cond, a, b)

    # ------------------------------------------------------------------ reductions
    @staticmethod
    def sum(x, axes, keepdims):
        return R.sum(x, _axes(axes), keepdims)

    @staticmethod
    def prod(x, axes, keepdims):
        return R.prod(x, _axes(axes), keepdims)

    @staticmethod
    def max(x, axes, keepdims):
        return E.amax(x, _axes(axes) if axes is not None else (), keepdims)

    @staticmethod
    def min(x, axes, keepdims):
        return E.amin(x, _axes(axes) if axes is not None else (), keepdims)

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
        return J.cat(list(arrays), axis)

    @staticmethod
    def slice(x, key):
        return slicing.basic_slice(x, tuple(key))

    @staticmethod
    def assign(dst, key, value):
        """Functional here: the contract lets ``assign`` return the array to use."""
        return slicing.slice_scatter(dst, tuple(key), value)

    @staticmethod
    def scatter(x, axis, index, src):
        return I.scatter(x, axis, index, src)

    @staticmethod
    def flip(x, axes):
        return M.flip(x, tuple(axes))

    @staticmethod
    def pad(x, widths, value):
        return M.pad_dims(x, tuple(widths), value)

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

    linalg_solve = staticmethod(linalg_decomp.solve_batched)
    linalg_slogdet = staticmethod(linalg_decomp.slogdet)

    @staticmethod
    def linalg_svd(a, full_matrices, compute_uv):
        return linalg_decomp.svd(a, full_matrices)

    # ------------------------------------------------------------------ fused
    @staticmethod
    def softmax(x, axis):
        return activation.softmax(x, axis)

    @staticmethod
    def log_softmax(x, axis):
        return activation.log_softmax(x, axis)

    @staticmethod
    def gelu(x, approximate):
        return activation.gelu(x, approximate)

    @staticmethod
    def gelu_backward(g, x, approximate):  # PyTorch's double backward, not the composite's
        return activation.gelu_backward(g, x, approximate)

    @staticmethod
    def unfold2d(x, kernel, stride, padding, dilation, value=0):
        return conv.unfold2d(x, kernel, stride, padding, dilation, value)

    @staticmethod
    def fold2d(cols, input_hw, kernel, stride, padding, dilation):
        return conv.fold2d(cols, input_hw, kernel, stride, padding, dilation)


for _name, _fn in fused.OPS.items():  # fused kernels: differentiable through their composite
    if not hasattr(TensorOps, _name):
        setattr(TensorOps, _name, staticmethod(_fn))

for _name in transcendental.KERNELS:  # the math kernels as their (differentiable) ops
    setattr(TensorOps, _name, staticmethod(getattr(transcendental, _name)))
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"):
    setattr(TensorOps, _name, staticmethod(getattr(bitwise, _name)))
TensorOps.left_shift = staticmethod(bitwise.bitwise_left_shift)
TensorOps.right_shift = staticmethod(bitwise.bitwise_right_shift)

_BY_TYPE: dict = {}


def tensor_ops_for(k) -> TensorOps:
    """The Tensor binding for kernel table ``k``'s device type (one per type)."""
    ops = _BY_TYPE.get(k.device_type)
    if ops is None:
        ops = _BY_TYPE[k.device_type] = TensorOps(k.device_type)
    return ops


engine.tensor_ops_for = tensor_ops_for
