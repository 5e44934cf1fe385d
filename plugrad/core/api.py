"""The ``plugrad.*`` functions that mirror ``torch.*`` (``torch.exp(x)``, ``torch.cat``, ...)."""
from plugrad.core.ops.activation import log_softmax, softmax
from plugrad.core.ops.inplace import copy_, fill_, zero_


from plugrad.core.ops import (binary, compare, extrema, indexing, join, linalg,  # noqa: F401,E402
                              movement, reduction, select, shape, slicing, sorting,
                              statistics, subscript, unary)  # (importing them declares ops)
from plugrad.core.ops import linalg_extra  # noqa: F401,E402
from plugrad.core.ops import tensor_extra  # noqa: F401,E402 - issue 15's tensor ops
from plugrad.core.ops.arrange import tril_indices, triu_indices  # noqa: E402,F401
from plugrad.core.ops import bitwise, transcendental  # noqa: F401,E402
from plugrad.core.ops.compare import allclose, equal  # noqa: E402,F401
from plugrad.core.type_info import finfo, iinfo  # noqa: E402,F401
from plugrad.core.ops.declare import torch_namespace as _torch_namespace  # noqa: E402

globals().update(_torch_namespace())


def numel(t) -> int:
    return t.numel()


def detach(t):
    return t.detach()
