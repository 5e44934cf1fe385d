"""Binds the ops onto :class:`Tensor` as methods and operators.

Declared ops (see :mod:`plugrad.core.ops.declare`) bring their own spellings; the table
below holds what is not an op (factories from a tensor, random fills) and the ops still
listed by hand.
"""
from __future__ import annotations

from plugrad.core import factories, random
from plugrad.core.ops import tensor_ops  # noqa: F401 - binds the engine's Tensor ops
from plugrad.core.ops import (activation, binary, compare, conversion, extrema,  # noqa: F401
                              indexing, inplace, linalg, reduction, select, shape,
                              sorting, statistics, unary)
from plugrad.core.ops.declare import OPS
from plugrad.core.tensor import Tensor

R, S, I, L = reduction, shape, indexing, linalg


def _new_factory(fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        return fn(size, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)
    return method


_METHODS = {
    # linear algebra
    "matmul": L.matmul, "mm": L.mm, "bmm": L.bmm, "mv": L.mv, "dot": L.dot, "outer": L.outer,
    # shape
    "reshape": S.reshape, "view": S.view, "flatten": S.flatten, "unflatten": S.unflatten,
    "squeeze": S.squeeze, "unsqueeze": S.unsqueeze, "permute": S.permute,
    "transpose": S.transpose, "swapaxes": S.transpose, "swapdims": S.transpose, "t": S.t,
    "movedim": S.movedim, "expand": S.expand, "expand_as": S.expand_as,
    "broadcast_to": S.broadcast_to, "repeat": S.repeat,
    "repeat_interleave": S.repeat_interleave, "narrow": S.narrow, "split": S.split,
    "chunk": S.chunk, "tensor_split": S.tensor_split, "unbind": S.unbind, "flip": S.flip,
    "fliplr": S.fliplr, "flipud": S.flipud, "roll": S.roll, "tril": S.tril, "triu": S.triu,
    "clone": S.clone, "contiguous": S.contiguous,
    "view_as": lambda self, other: S.view(self, other.shape),
    "reshape_as": lambda self, other: S.reshape(self, other.shape),
    # indexing
    "gather": I.gather, "scatter": I.scatter, "scatter_add": I.scatter_add,
    "index_select": I.index_select, "index_add": I.index_add, "masked_fill": I.masked_fill,
    "masked_select": I.masked_select, "nonzero": I.nonzero, "argwhere": I.argwhere,
    "take_along_dim": I.take_along_dim,
    # in place
    "zero_": inplace.zero_, "fill_": inplace.fill_, "copy_": inplace.copy_,
    "uniform_": random.uniform_, "normal_": random.normal_, "bernoulli_": random.bernoulli_,
    "exponential_": random.exponential_, "random_": random.random_,
    # not ops: Python values
    "allclose": compare.allclose, "equal": compare.equal,
    # factories from a tensor
    "new_zeros": _new_factory(factories.zeros), "new_ones": _new_factory(factories.ones),
    "new_empty": _new_factory(factories.empty),
    "new_full": lambda self, size, fill_value, dtype=None, device=None, requires_grad=False:
        factories.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                       requires_grad=requires_grad),
    "new_tensor": lambda self, data, dtype=None, device=None, requires_grad=False:
        factories.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad),
    "zeros_like": factories.zeros_like, "ones_like": factories.ones_like,
    "bernoulli": random.bernoulli,
    "multinomial": random.multinomial,
}

_INPLACE = {
    "masked_fill_": I.masked_fill, "scatter_": I.scatter, "scatter_add_": I.scatter_add,
    "index_add_": I.index_add,
    "t_": S.t, "transpose_": S.transpose, "squeeze_": S.squeeze, "unsqueeze_": S.unsqueeze,
}

_OPERATORS = {
    "__matmul__": L.matmul, "__rmatmul__": lambda self, other: L.matmul(other, self),
    "__pos__": lambda self: self, "__getitem__": I.getitem, "__setitem__": I.setitem,
}

_AUGMENTED = {"__imatmul__": L.matmul}


def _bind_declared() -> None:
    """Every spelling of every declared op, as a Tensor method."""
    for d in OPS.values():
        for name in d.method + d.dunder + d.reflected:
            setattr(Tensor, name, d.fn)
        for name, form in d.method_forms.items():
            setattr(Tensor, name, form)
        for name in d.inplace + d.augmented:
            if d.fast_inplace is not None:
                setattr(Tensor, name, inplace._arith_inplace(name, d.fn, d.fast_inplace))
            else:
                setattr(Tensor, name, inplace._unary_inplace(name, d.fn))


def _bind() -> None:
    _bind_declared()
    for name, fn in _METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in _OPERATORS.items():
        setattr(Tensor, name, fn)
    for name, fn in {**_INPLACE, **_AUGMENTED}.items():
        setattr(Tensor, name, inplace._unary_inplace(name, fn))
    # `x.T` / `x.mT`: PyTorch's properties
    Tensor.T = property(lambda self: S.permute(self, tuple(range(self.ndim))[::-1]))
    Tensor.mT = property(lambda self: S.transpose(self, -2, -1))
    Tensor.H = Tensor.T
    Tensor.mH = Tensor.mT


_bind()
