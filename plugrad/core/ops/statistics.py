"""Moments and norms: var, std, var_mean, std_mean, norm (composites of sums, with a
safe square root so the 2-norm's gradient at zero is 0, as in PyTorch)."""
from __future__ import annotations

import builtins
import math

from plugrad.core.autograd.node import OUTPUT, KeepsOutput
from plugrad.core.autograd.record import record
from plugrad.core.grad_mode import _state
from plugrad.core.ops._dims import check_float, count, normalize_dims
from plugrad.core.ops.declare import op
from plugrad.core.ops.extrema import amax, amin
from plugrad.core.ops.reduction import mean, sum
from plugrad.core.tensor import _wrap


def _correction(name, x, dim, unbiased, correction):
    """PyTorch's overloads: ``var(x, unbiased)``, ``var(x, dim, unbiased, keepdim)``,
    ``var(x, dim, correction=c)``. Returns ``(dim, correction)``."""
    check_float(name, x, "std and var only support floating point and complex dtypes")
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if correction is not None and unbiased is not None:
        raise TypeError(f"{name}(): pass either unbiased or correction, not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction


@op("var", method="var")
def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance with Bessel's correction by default (``correction=1``).

    Fewer elements than ``correction`` divide by zero: inf, or NaN for no spread, as in
    PyTorch.
    """
    dim, corr = _correction("var", x, dim, unbiased, correction)
    axes = normalize_dims(dim, x.ndim, "var")
    d = x - mean(x, axes, keepdim=True)
    return sum(d * d, axes, keepdim) / builtins.max(count(x.shape, axes) - corr, 0)


@op("std", method="std")
def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(x, dim, unbiased, keepdim, correction=correction).sqrt()


@op("var_mean")
def var_mean(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, corr = _correction("var_mean", x, dim, unbiased, correction)
    return var(x, dim, None, keepdim, correction=corr), mean(x, dim, keepdim)


@op("std_mean")
def std_mean(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, corr = _correction("std_mean", x, dim, unbiased, correction)
    return std(x, dim, None, keepdim, correction=corr), mean(x, dim, keepdim)


@op("norm", method="norm")
def norm(x, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm (``p`` = 2 / "fro" by default, 1, inf, -inf, 0 or any other number).

    The gradient of the 2-norm at zero is 0 (not NaN), as in PyTorch.
    """
    if dtype is not None:
        x = x.to(dtype)
    check_float("norm", x, "Expected a floating point or complex tensor as input")
    axes = normalize_dims(dim, x.ndim, "norm")
    if p in ("fro", 2, 2.0):
        return _safe_sqrt(sum(x * x, axes, keepdim))
    if isinstance(p, str):
        raise ValueError(f"norm(): p={p!r} is not supported (use a number, 'fro' or inf)")
    if p == 1:
        return sum(x.abs(), axes, keepdim)
    if p == math.inf:
        return amax(x.abs(), axes if axes is not None else (), keepdim)
    if p == -math.inf:
        return amin(x.abs(), axes if axes is not None else (), keepdim)
    if p == 0:
        return sum((x != 0).to(x.dtype), axes, keepdim)
    return sum(x.abs() ** p, axes, keepdim) ** (1.0 / p)


class SqrtAtZeroBackward0(KeepsOutput):
    """``g / (2 sqrt(s))``, and 0 where ``s == 0``; the zero is masked *before* dividing
    so the second derivative has no ``0 * inf`` either."""

    def grad(self, F, g, y):
        zero = F.eq(y, 0.0)
        return (F.where(zero, 0.0, F.div(g, F.mul(F.where(zero, 1.0, y), 2.0))),)


def _safe_sqrt(sq):
    k = sq._k
    r = _wrap(k.sqrt(sq._data), sq.dtype, sq.device, k)
    if sq._rg and _state.enabled:
        record(r, SqrtAtZeroBackward0(), (sq,), (OUTPUT,))
    return r
