"""The ``plugrad.*`` functions that mirror ``torch.*`` (``torch.exp(x)``, ``torch.cat``, ...)."""
from plugrad.core.ops.activation import log_softmax, softmax
from plugrad.core.ops.indexing import (gather, index_add, index_select, masked_fill,
                                       masked_select, nonzero, argwhere, scatter, scatter_add,
                                       take_along_dim)
from plugrad.core.ops.inplace import copy_, fill_, zero_
from plugrad.core.ops.linalg import (addmm, baddbmm, bmm, dot, einsum, matmul, mm, mv, outer)
from plugrad.core.ops.pointwise import (abs, add, addcdiv, addcmul, ceil, clamp, clamp_max,
                                        clamp_min, cos, div, eq, erf, exp, exp2, expm1, floor,
                                        floor_divide, fmod, ge, gt, isfinite, isinf, isnan, le, lerp,
                                        log, log1p, log2, log10, logical_and, logical_not,
                                        logical_or, logical_xor, lt, maximum, minimum, mul, ne,
                                        neg, pow, reciprocal, relu, remainder, round, rsqrt,
                                        sigmoid, sign, sin, sqrt, square, sub, tan, tanh, trunc,
                                        where)
from plugrad.core.ops.reduction import (all, amax, amin, any, argmax, argmin, count_nonzero,
                                        cumprod, cumsum, logsumexp, max, mean, min, nansum, norm,
                                        prod, std, std_mean, sum, var, var_mean)
from plugrad.core.ops.shape import (atleast_1d, broadcast_tensors, broadcast_to, cat, chunk,
                                    clone, concat, concatenate, flatten, flip, fliplr, flipud,
                                    hstack, movedim, narrow, permute, repeat_interleave,
                                    reshape, roll, split, squeeze, stack, t, tensor_split,
                                    transpose, tril, triu, unbind, unflatten, unsqueeze, vstack)

clip = clamp
subtract, multiply, divide, true_divide, negative, absolute = sub, mul, div, div, neg, abs
swapaxes = swapdims = transpose
greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne


def equal(a, b) -> bool:
    """True if both tensors have the same shape and values."""
    return tuple(a.shape) == tuple(b.shape) and bool((a == b).all())


def allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False) -> bool:
    return bool(isclose(a, b, rtol, atol, equal_nan).all())


def isclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    close = (a - b).abs() <= atol + rtol * b.abs()
    if equal_nan:
        close = close | (a.isnan() & b.isnan())
    return close


def numel(t) -> int:
    return t.numel()


def detach(t):
    return t.detach()


def topk(x, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) entries along ``dim`` and their indices."""
    from plugrad.core.ops.sorting import topk as _topk
    return _topk(x, k, dim, largest, sorted)


def sort(x, dim=-1, descending=False, stable=False):
    from plugrad.core.ops.sorting import sort as _sort
    return _sort(x, dim, descending)


def argsort(x, dim=-1, descending=False, stable=False):
    return sort(x, dim, descending).indices
