"""Binds the ops onto :class:`Tensor` as methods and operators, in one readable table."""
from __future__ import annotations

from plugrad.core import factories, random
from plugrad.core.ops import tensor_ops  # noqa: F401 - binds the engine's Tensor ops
from plugrad.core.ops import (activation, conversion, indexing, inplace, linalg, pointwise,
                              reduction, shape)
from plugrad.core.tensor import Tensor

P, R, S, I, L = pointwise, reduction, shape, indexing, linalg


def _reflected(fn):
    return lambda self, other: fn(other, self)


def _new_factory(fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        return fn(size, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)
    return method


_METHODS = {
    # arithmetic
    "add": P.add, "sub": P.sub, "subtract": P.sub, "mul": P.mul, "multiply": P.mul,
    "div": P.div, "divide": P.div, "true_divide": P.div, "floor_divide": P.floor_divide,
    "remainder": P.remainder, "fmod": P.fmod, "pow": P.pow, "maximum": P.maximum,
    "minimum": P.minimum, "neg": P.neg, "negative": P.neg, "abs": P.abs, "absolute": P.abs,
    "exp": P.exp, "exp2": P.exp2, "expm1": P.expm1, "log": P.log, "log2": P.log2,
    "log10": P.log10, "log1p": P.log1p, "sqrt": P.sqrt, "rsqrt": P.rsqrt, "sin": P.sin,
    "cos": P.cos, "tan": P.tan, "tanh": P.tanh, "sigmoid": P.sigmoid, "relu": P.relu,
    "erf": P.erf, "sign": P.sign, "floor": P.floor, "ceil": P.ceil, "round": P.round,
    "trunc": P.trunc, "reciprocal": P.reciprocal, "square": P.square, "clamp": P.clamp,
    "clip": P.clamp, "clamp_min": P.clamp_min, "clamp_max": P.clamp_max, "lerp": P.lerp,
    "addcmul": P.addcmul, "addcdiv": P.addcdiv, "where": lambda self, c, o: P.where(c, self, o),
    # comparison, logic
    "eq": P.eq, "ne": P.ne, "lt": P.lt, "le": P.le, "gt": P.gt, "ge": P.ge,
    "greater": P.gt, "less": P.lt, "greater_equal": P.ge, "less_equal": P.le,
    "not_equal": P.ne, "logical_and": P.logical_and, "logical_or": P.logical_or,
    "logical_xor": P.logical_xor, "logical_not": P.logical_not, "isnan": P.isnan,
    "isinf": P.isinf, "isfinite": P.isfinite,
    # reductions
    "sum": R.sum, "mean": R.mean, "nansum": R.nansum, "prod": R.prod, "max": R.max,
    "min": R.min, "amax": R.amax, "amin": R.amin, "argmax": R.argmax, "argmin": R.argmin,
    "all": R.all, "any": R.any, "var": R.var, "std": R.std, "logsumexp": R.logsumexp,
    "cumsum": R.cumsum, "cumprod": R.cumprod, "norm": R.norm, "count_nonzero": R.count_nonzero,
    "softmax": activation.softmax, "log_softmax": activation.log_softmax,
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
    "add_": P.add, "sub_": P.sub, "mul_": P.mul, "div_": P.div, "pow_": P.pow,
    "remainder_": P.remainder, "floor_divide_": P.floor_divide, "clamp_": P.clamp,
    "clip_": P.clamp, "clamp_min_": P.clamp_min, "clamp_max_": P.clamp_max,
    "neg_": P.neg, "abs_": P.abs, "exp_": P.exp, "log_": P.log, "sqrt_": P.sqrt,
    "sin_": P.sin, "cos_": P.cos, "tanh_": P.tanh, "sigmoid_": P.sigmoid, "relu_": P.relu,
    "floor_": P.floor, "ceil_": P.ceil, "round_": P.round, "trunc_": P.trunc,
    "reciprocal_": P.reciprocal, "square_": P.square, "sign_": P.sign,
    "masked_fill_": I.masked_fill, "scatter_": I.scatter, "scatter_add_": I.scatter_add,
    "index_add_": I.index_add, "lerp_": P.lerp, "addcmul_": P.addcmul, "addcdiv_": P.addcdiv,
    "maximum_": P.maximum, "minimum_": P.minimum, "logical_not_": P.logical_not,
    "erf_": P.erf, "log1p_": P.log1p, "expm1_": P.expm1,
    "t_": S.t, "transpose_": S.transpose, "squeeze_": S.squeeze, "unsqueeze_": S.unsqueeze,
}

# `number * t` and `number + t` call the op with the tensor first: same result (IEEE + and *
# commute), and the op takes its float-scalar fast path.
_OPERATORS = {
    "__add__": P.add, "__radd__": P.add, "__sub__": P.sub,
    "__rsub__": _reflected(P.sub), "__mul__": P.mul, "__rmul__": P.mul,
    "__truediv__": P.div, "__rtruediv__": _reflected(P.div),
    "__floordiv__": P.floor_divide, "__rfloordiv__": _reflected(P.floor_divide),
    "__mod__": P.remainder, "__rmod__": _reflected(P.remainder), "__pow__": P.pow,
    "__rpow__": _reflected(P.pow), "__matmul__": L.matmul, "__rmatmul__": _reflected(L.matmul),
    "__neg__": P.neg, "__pos__": lambda self: self, "__abs__": P.abs,
    "__eq__": P.eq, "__ne__": P.ne, "__lt__": P.lt, "__le__": P.le, "__gt__": P.gt,
    "__ge__": P.ge, "__and__": P.bitwise_and, "__or__": P.bitwise_or,
    "__xor__": P.bitwise_xor, "__invert__": P.bitwise_not,
    "__rand__": _reflected(P.bitwise_and), "__ror__": _reflected(P.bitwise_or),
    "__getitem__": I.getitem, "__setitem__": I.setitem,
}

_AUGMENTED = {
    "__iadd__": P.add, "__isub__": P.sub, "__imul__": P.mul, "__itruediv__": P.div,
    "__ifloordiv__": P.floor_divide, "__imod__": P.remainder, "__ipow__": P.pow,
    "__imatmul__": L.matmul, "__iand__": P.bitwise_and, "__ior__": P.bitwise_or,
    "__ixor__": P.bitwise_xor,
}


#: In-place arithmetic with a direct path into the tensor's array (``Backend.update_``).
_FAST_ARITH = {"add_": "add", "sub_": "sub", "mul_": "mul", "div_": "div", "__iadd__": "add",
               "__isub__": "sub", "__imul__": "mul", "__itruediv__": "div"}


def _bind() -> None:
    for name, fn in _METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in _OPERATORS.items():
        setattr(Tensor, name, fn)
    for name, fn in {**_INPLACE, **_AUGMENTED}.items():
        if name in _FAST_ARITH:
            setattr(Tensor, name, inplace._arith_inplace(name, fn, _FAST_ARITH[name]))
        else:
            setattr(Tensor, name, inplace._binary_inplace(name, fn) if name.startswith("__")
                    else inplace._unary_inplace(name, fn))
    # `x.T` / `x.mT`: PyTorch's properties
    Tensor.T = property(lambda self: S.permute(self, tuple(range(self.ndim))[::-1]))
    Tensor.mT = property(lambda self: S.transpose(self, -2, -1))
    Tensor.H = Tensor.T
    Tensor.mH = Tensor.mT
    Tensor.abs_ = Tensor.abs_


_bind()
del conversion
