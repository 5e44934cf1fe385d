"""Binds the ops onto :class:`Tensor` as methods and operators.

Declared ops (see :mod:`plugrad.core.ops.declare`) bring their own spellings; the table
below holds what is not an op (factories from a tensor, random fills) and the ops still
listed by hand.
"""
from __future__ import annotations

from plugrad.core import factories, random, storage
from plugrad.core.autograd import tensor_api
from plugrad.core.ops import tensor_ops  # noqa: F401 - binds the engine's Tensor ops
from plugrad.core.ops import (activation, binary, compare, conv, conversion, dense,  # noqa: F401
                              distance,
                              extrema, loss_ops, normalization, pooling,
                              indexing, inplace, join, linalg, movement, reduction, select,
                              shape, slicing, sorting, statistics, subscript, unary)
from plugrad.core.ops import linalg_extra  # noqa: F401
from plugrad.core.ops import tensor_extra  # noqa: F401,E402 - issue 15's tensor ops
from plugrad.core.ops import conv_transpose  # noqa: F401 - declares conv_transpose1d/2d
from plugrad.core.ops import bitwise, ternary, transcendental  # noqa: F401
from plugrad.core.ops.declare import OPS
from plugrad.core.tensor import Tensor

S, L = shape, linalg


def _new_factory(fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        return fn(size, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)
    return method


_METHODS = {
    # in place
    "zero_": inplace.zero_, "fill_": inplace.fill_, "copy_": inplace.copy_,
    "uniform_": inplace.uniform_, "normal_": inplace.normal_, "bernoulli_": inplace.bernoulli_,
    "exponential_": inplace.exponential_, "random_": inplace.random_,
    # not ops: Python values
    "allclose": compare.allclose, "equal": compare.equal,
    # factories from a tensor
    "new_zeros": _new_factory(factories.zeros), "new_ones": _new_factory(factories.ones),
    "new_empty": _new_factory(factories.empty),
    "new_full": lambda self, size, fill_value, dtype=None, device=None, requires_grad=False:
        factories.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                       requires_grad=requires_grad),
    "new": lambda self, *args, device=None: factories.legacy_new(
        "Tensor.new", self.dtype, device or self.device, args),
    "new_tensor": lambda self, data, dtype=None, device=None, requires_grad=False:
        factories.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad),
    "zeros_like": factories.zeros_like, "ones_like": factories.ones_like,
    "bernoulli": random.bernoulli,
    "multinomial": random.multinomial,
}

_INPLACE: dict = {}

_OPERATORS = {
    "__pos__": lambda self: self,
}

_AUGMENTED: dict = {}


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


def _bind_entry_points() -> None:
    """What a Tensor does that is not an op: moves and casts, autograd entry points, the
    legacy constructor."""
    for name in ("to", "cpu", "cuda"):
        setattr(Tensor, name, getattr(conversion, name))
    Tensor.type = conversion.type_
    for name, fn in conversion.CAST_METHODS.items():
        setattr(Tensor, name, fn)
    for name in ("backward", "register_hook", "retain_grad"):
        setattr(Tensor, name, getattr(tensor_api, name))
    Tensor._add_node_hook = tensor_api.add_node_hook
    Tensor.__init__ = factories.legacy_init
    Tensor.storage = lambda self: storage.TypedStorage(self)  # PyTorch's legacy storage


def _bind() -> None:
    _bind_entry_points()
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
