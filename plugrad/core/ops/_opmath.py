"""float16/bfloat16 computed in float32 and rounded once, as PyTorch's CPU kernels do.

PyTorch's elementwise and reduction kernels load half-precision values into float32
("opmath"), compute, and round the result once. An op that plugrad writes as a composite of
kernels (gelu's ``x * Phi(x)``, softmax, a backward rule of several products) would round
to half after every step instead, a few units in the last place off. Decorating such an op
with :func:`half_in_float32` runs it on a float32 copy and rounds the result; its gradient
then runs in float32 too and is rounded once when it reaches the half input.
"""
from __future__ import annotations

import functools

from plugrad.core import dtypes as _dt
from plugrad.core.tensor import Tensor


def _is_half(x) -> bool:
    return isinstance(x, Tensor) and x.dtype.kind == "f" and x.dtype.itemsize == 2


def half_in_float32(fn):
    """``fn(x, ...)`` on ``x.float()`` rounded back to ``x``'s dtype when ``x`` is half (an
    explicit ``dtype=`` or ``inplace=True`` call runs ``fn`` as it is)."""
    @functools.wraps(fn)
    def run(x, *args, **kwargs):
        if not _is_half(x) or kwargs.get("dtype") is not None or kwargs.get("inplace") \
                or any(a is True for a in args):
            return fn(x, *args, **kwargs)
        r = fn(x.to(_dt.float32), *args, **kwargs)
        if isinstance(r, Tensor) and r.dtype is _dt.float32:
            return r.to(x.dtype)
        return r
    return run


def half_rule(grad):
    """A gradient rule run in float32 when its incoming gradient is half precision: the
    saved values and ``g`` upcast, the results rounded once to ``g``'s dtype (PyTorch's
    backward kernels for half, e.g. ``sigmoid_backward``, compute so). Serves both
    bindings: ``F`` is a kernel table or the Tensor ops."""
    @functools.wraps(grad)
    def rule(self, F, g, *saved):
        name = F.dtype_of(g)
        if name not in _HALF_NAMES:
            return grad(self, F, g, *saved)
        up = [F.astype(s, "float32") if s is not None and not isinstance(s, (int, float, bool))
              and F.dtype_of(s) == name else s for s in saved]
        outs = grad(self, F, F.astype(g, "float32"), *up)
        return tuple(None if o is None else F.astype(o, name) for o in outs)
    return rule


def half_node(cls):
    """Class decorator: the node's ``grad`` as :func:`half_rule`."""
    cls.grad = half_rule(cls.grad)
    return cls


def half_kernel(k, data, fn):
    """``fn(data)`` (a kernel call) in float32 when ``data`` is half, rounded once."""
    name = k.dtype_of(data)
    if name not in _HALF_NAMES:
        return fn(data)
    return k.astype(fn(k.astype(data, "float32")), name)


_HALF_NAMES = frozenset({"float16", "bfloat16"})
