"""Helpers that gradient rules share, written once over the gradient ops ``F``.

``F`` is either a kernel table (bare arrays) or the differentiable Tensor ops; both offer
the kernel names and signatures of the backend contract (``F.sum(x, axes, keepdims)``,
``F.reshape(x, shape)``, ...), so each helper below serves both bindings of every rule.
"""
from __future__ import annotations


def sum_to(F, g, shape: tuple):
    """Reduce a broadcast gradient ``g`` back to an input's ``shape``."""
    gshape = g.shape
    if gshape == shape:
        return g
    if not shape:  # a 0-d operand: everything sums into it
        return F.sum(g, None, False)
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1)
    out = F.sum(g, axes, True) if axes else g
    if lead:
        out = F.reshape(out, shape)
    return out


def expand_back(F, g, shape: tuple, axes, keepdim: bool):
    """A reduction's gradient broadcast back over its reduced ``axes`` (None: all)."""
    if not keepdim and g.shape:  # a 0-d gradient broadcasts as it is
        g = F.reshape(g, tuple(1 if axes is None or i in axes else n
                               for i, n in enumerate(shape)))
    return F.broadcast_to(g, shape)


def cast(F, x, dtype: str):
    """``x`` in dtype ``dtype`` (a name); Python scalars stay as they are (weak)."""
    if x.__class__ in (int, float, bool) or F.dtype_of(x) == dtype:
        return x
    return F.astype(x, dtype)


def to_inputs(F, grads, meta) -> tuple:
    """Gradients reduced to the shapes, and cast to the dtypes, ``meta`` records per input:
    ``(shape, dtype name or None)`` or None (nothing to do). Rules of broadcasting ops
    return output-shaped gradients in the result dtype; this is where they become their
    inputs' again."""
    if len(meta) == 2:  # a binary op: the common case, unrolled
        ga, gb = grads
        ma, mb = meta
        if ga is not None and ma is not None:
            ga = _fit(F, ga, ma)
        if gb is not None and mb is not None:
            gb = _fit(F, gb, mb)
        return ga, gb
    out = []
    for g, m in zip(grads, meta):
        if g is not None and m is not None:
            shape, dtype = m
            if g.shape != shape:
                g = sum_to(F, g, shape)
            if dtype is not None:
                g = F.astype(g, dtype)
        out.append(g)
    return tuple(out)


def _fit(F, g, m):
    shape, dtype = m
    if g.shape != shape:
        g = sum_to(F, g, shape)
    return g if dtype is None else F.astype(g, dtype)
