"""The ``plugrad.*`` functions that mirror ``torch.*`` (``torch.exp(x)``, ``torch.cat``, ...)."""
from plugrad.core.ops.activation import log_softmax, softmax
from plugrad.core.ops.indexing import (gather, index_add, index_select, masked_fill,
                                       masked_select, nonzero, argwhere, scatter, scatter_add,
                                       take_along_dim)
from plugrad.core.ops.inplace import copy_, fill_, zero_
from plugrad.core.ops.linalg import (addmm, baddbmm, bmm, dot, einsum, matmul, mm, mv, outer)
from plugrad.core.ops.shape import (atleast_1d, broadcast_tensors, broadcast_to, cat, chunk,
                                    clone, concat, concatenate, flatten, flip, fliplr, flipud,
                                    hstack, movedim, narrow, permute, repeat_interleave,
                                    reshape, roll, split, squeeze, stack, t, tensor_split,
                                    transpose, tril, triu, unbind, unflatten, unsqueeze, vstack)

from plugrad.core.ops import (binary, compare, extrema, reduction, select,  # noqa: F401,E402
                              sorting, statistics, unary)  # (importing them declares ops)
from plugrad.core.ops.compare import allclose, equal  # noqa: E402,F401
from plugrad.core.ops.declare import torch_namespace as _torch_namespace  # noqa: E402

globals().update(_torch_namespace())
swapaxes = swapdims = transpose


def numel(t) -> int:
    return t.numel()


def detach(t):
    return t.detach()
