"""Moments and norms: var, std, var_mean, std_mean, norm (composites of sums, with a
safe square root so the 2-norm's gradient at zero is 0, as in PyTorch)."""
from __future__ import annotations

from plugrad.core.errors import ArgumentError

import builtins
import math

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.grad_ops import expand_back
from plugrad.core.autograd.node import OUTPUT, KeepsOutput, Node
from plugrad.core.autograd.record import record
from plugrad.core.grad_mode import _state
from plugrad.core.grad_mode import no_grad as _no_grad
from plugrad.core.ops._dims import check_float, count, normalize_dims
from plugrad.core.ops._opmath import half_in_float32
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


#: dtype the moments are accumulated in (PyTorch's CPU accumulation type), where the
#: backend has it: float32 data of 1e30 has a finite std
_ACC = {"float16": "float32", "bfloat16": "float32", "float32": "float64"}


class VarBackward0(Node):
    """PyTorch's ``var_backward``: ``(2 / dof) g (x - mean)``, not a gradient through the
    mean (whose sum is 0 in exact arithmetic, but ``inf - inf`` where squares overflow).
    A full reduction with ``dof <= 0`` gives ``g * (nan where x == mean, else inf)``."""

    def grad(self, F, g, x):
        return (_var_grad(self, F, g, x),)


class StdBackward0(KeepsOutput):
    """PyTorch's ``std_backward``: ``g / (2 std)``, 0 where ``std == 0`` (constant inputs),
    then :class:`VarBackward0`'s rule. The zero is masked before dividing, so the second
    derivative has no ``0 * inf`` either."""

    def grad(self, F, g, x, y):
        zero = F.eq(y, 0.0)
        gv = F.where(zero, 0.0, F.div(g, F.mul(F.where(zero, 1.0, y), 2.0)))
        return (_var_grad(self, F, gv, x),)


def _var_grad(node, F, g, x):
    shape, axes, dof = node.shape, node.axes, node.dof
    g = expand_back(F, g, shape, axes, node.keepdim)
    n = count(shape, axes)
    m = F.sum(x, axes, True)
    if n != 1:
        m = F.mul(m, 1.0 / n) if n else F.mul(m, math.nan)
    if axes is None and dof <= 0:
        inf = F.full(tuple(shape), math.inf, F.dtype_of(g), node.device_index)
        return F.mul(g, F.where(F.eq(x, m), math.nan, inf))
    return F.mul(F.mul(g, 2.0 / dof if dof else math.inf), F.sub(x, m))


#: var_mean / std_mean run PyTorch's one-pass Welford reduction elementwise over a reduced
#: slice of at most this many elements when the two-pass formula could differ from it
#: (non-finite or huge inputs); longer slices keep the two-pass sums (torch's own threads
#: split those into partial Welford states anyway)
_WELFORD_MAX = 1024


def _needs_welford(k, data, n) -> bool:
    """Whether the two-pass moments can differ from Welford's beyond rounding: a NaN or
    infinite element, or squares of deviations that may overflow the accumulation."""
    if not 0 < n <= _WELFORD_MAX:
        return False
    big = math.sqrt(_MAX.get(k.dtype_of(data), 3.4e38) / (4.0 * n))
    top = float(k.to_numpy(k.max(k.abs(data), None, False)))
    return not top <= big  # (NaN compares False)


_MAX = {"float64": 1.7976931348623157e308, "float32": 3.4028234663852886e38,
        "float16": 65504.0}


def _welford(k, data, axes, keepdim, corr, root):
    """PyTorch's ``WelfordOps`` (its CPU ``var_mean`` / ``std_mean``), one reduced element
    at a time in order: ``delta = x - mean; mean += delta / n; m2 += delta (x - mean)``;
    ``m2 / (n - correction)`` (``/ 0`` when that is not positive). Returns (moment, mean)."""
    shape = tuple(data.shape)
    ndim = len(shape)
    axes = tuple(range(ndim)) if axes is None else tuple(axes)
    keep = [i for i in range(ndim) if i not in axes]
    lead = tuple(shape[i] for i in keep)
    n = count(shape, axes)
    flat = k.reshape(k.permute(data, tuple(keep) + axes), lead + (n,))
    dt = k.dtype_of(data)
    mean = k.full(lead, 0.0, dt, None)
    m2 = k.full(lead, 0.0, dt, None)
    head = tuple(slice(0, s, 1) for s in lead)
    for i in range(n):
        xi = k.reshape(k.slice(flat, head + (slice(i, i + 1, 1),)), lead)
        delta = k.sub(xi, mean)
        mean = k.add(mean, k.div(delta, float(i + 1)))
        m2 = k.add(m2, k.mul(delta, k.sub(xi, mean)))
    out = k.div(m2, float(n - corr) if n > corr else 0.0)
    if root:
        out = k.sqrt(out)
    out_shape = tuple(1 if i in axes else s for i, s in enumerate(shape)) if keepdim else lead
    return k.reshape(out, out_shape), k.reshape(mean, out_shape)


def _moments(name, x, dim, unbiased, keepdim, correction, root: bool, with_mean=False):
    """var (or std, ``root``) as one node; computed at the accumulation dtype. With
    ``with_mean`` (var_mean, std_mean): also Welford's mean array where Welford ran, else
    None (the caller's ``mean`` agrees with the two-pass result there)."""
    dim, corr = _correction(name, x, dim, unbiased, correction)
    axes = normalize_dims(dim, x.ndim, name)
    k = x._k
    shape = tuple(x._data.shape)
    acc = _ACC.get(x.dtype.name)
    data = x._data
    if acc is not None and acc in k.dtypes:
        data = k.astype(data, acc)
    n = count(shape, axes)
    dof = n - corr
    welford_mean = None
    if with_mean and _needs_welford(k, data, n):
        if "float64" in k.dtypes:  # (torch's accumulation type: double)
            data = k.astype(data, "float64")
        out, welford_mean = _welford(k, data, axes, keepdim, corr, root)
    else:
        m = k.sum(data, axes, True)
        m = k.div(m, float(n)) if n else k.mul(m, math.nan)
        d = k.sub(data, m)
        out = k.sum(k.mul(d, d), axes, keepdim)
        out = k.div(out, float(dof)) if dof > 0 else k.div(out, 0.0)
        if root:
            out = k.sqrt(out)
    if k.dtype_of(out) != x.dtype.name:
        out = k.astype(out, x.dtype.name)
    r = _wrap(out, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = StdBackward0() if root else VarBackward0()
        node.shape, node.axes, node.keepdim, node.dof = shape, axes, keepdim, dof
        node.device_index = x.device.index
        record(r, node, (x,), (x, OUTPUT) if root else (x,))
    return (r, welford_mean) if with_mean else r


@op("var", method="var")
@half_in_float32
def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance with Bessel's correction by default (``correction=1``).

    Fewer elements than ``correction`` divide by zero: inf, or NaN for no spread, as in
    PyTorch.
    """
    return _moments("var", x, dim, unbiased, keepdim, correction, False)


@op("std", method="std")
@half_in_float32
def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation; its gradient is 0 where it is 0 (PyTorch's convention)."""
    return _moments("std", x, dim, unbiased, keepdim, correction, True)


def _moment_and_mean(name, x, dim, unbiased, keepdim, correction, root):
    """PyTorch's ``var_mean`` / ``std_mean``: one Welford reduction gives both, so at
    non-finite or huge inputs its mean is Welford's (NaN once an inf is followed by another
    element), not ``mean``'s; the gradients are ``var``'s (or ``std``'s) and ``mean``'s."""
    dim, corr = _correction(name, x, dim, unbiased, correction)
    up = x.to(_dt.float32) if x.dtype.itemsize == 2 else x  # (half: as var and std)
    r, welford_mean = _moments(name, up, dim, None, keepdim, corr, root, with_mean=True)
    if up is not x:
        r = r.to(x.dtype)
    m = mean(x, dim, keepdim)
    if welford_mean is not None:
        m._data = x._k.astype(welford_mean, x.dtype.name)
    return r, m


@op("var_mean")
def var_mean(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moment_and_mean("var_mean", x, dim, unbiased, keepdim, correction, False)


@op("std_mean")
def std_mean(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moment_and_mean("std_mean", x, dim, unbiased, keepdim, correction, True)


@op("norm", method="norm")
def norm(x, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm (``p`` = 2 / "fro" by default, 1, inf, -inf, 0 or any other number).

    PyTorch's conventions: a reduction over one element is ``|x|`` (no overflow of
    ``|x| ** p``); float16/bfloat16 accumulate in float32; the gradient of the 2-norm at
    zero is 0 and for ``p < 1`` it is 0 where ``x`` is 0; ``p = 0`` counts the nonzeros
    (a result that requires grad, with no gradient).
    """
    if dtype is not None:
        x = x.to(dtype)
    check_float("norm", x, "Expected a floating point or complex tensor as input")
    if p is None or p == "fro":  # p=None: the 2-norm (PyTorch)
        p = 2
    if isinstance(p, str):
        raise ArgumentError(f"norm(): p={p!r} is not supported (use a number, 'fro' or inf)")
    axes = normalize_dims(dim, x.ndim, "norm")
    if x.dtype.itemsize == 2:  # float16 / bfloat16: computed in float32, rounded once
        return _pnorm(x.float(), p, axes, keepdim).to(x.dtype)
    return _pnorm(x, p, axes, keepdim)


def _pnorm(x, p, axes, keepdim):
    if p != 0 and count(x._data.shape, axes) == 1:
        return sum(x.abs(), axes, keepdim)
    if p == 2:  # (its node is PyTorch's rule: g * (x / y), 0 where y == 0)
        with _no_grad():
            y = _safe_sqrt(sum(x * x, axes, keepdim))
        if x._rg and _state.enabled:
            node = NormBackward1()
            node.p, node.axes, node.keepdim = 2.0, axes, keepdim
            record(y, node, (x,), (x, OUTPUT))
        return y
    if p == 1:
        return sum(x.abs(), axes, keepdim)
    if p == math.inf:
        return amax(x.abs(), axes if axes is not None else (), keepdim)
    if p == -math.inf:
        return amin(x.abs(), axes if axes is not None else (), keepdim)
    with _no_grad():
        y = sum((x != 0).to(x.dtype), axes, keepdim) if p == 0 else \
            sum(x.abs() ** p, axes, keepdim) ** (1.0 / p)
    if x._rg and _state.enabled:
        node = NormBackward1()
        node.p, node.axes, node.keepdim = float(p), axes, keepdim
        record(y, node, (x,), (x, OUTPUT))
    return y


class NormBackward1(KeepsOutput):
    """PyTorch's ``norm_backward`` for a number ``p`` other than 1 and inf: None for
    ``p = 0``; ``sgn(x) |x|^(p-1) g y^(1-p)`` masked to 0 where ``x == 0`` for ``p < 1``;
    else ``x |x|^(p-2) g / y^(p-1)`` masked to 0 where ``y == 0`` (``g (x / y)`` for 2)."""

    def grad(self, F, g, x, y):
        p = self.p
        if p == 0:
            return (None,)
        shape = tuple(x.shape)
        yk = expand_back(F, y, shape, self.axes, self.keepdim)
        gk = expand_back(F, g, shape, self.axes, self.keepdim)
        if p == 2:  # g * (x / y): its second derivative meets no overflowing x * x
            return (F.mul(gk, F.where(F.eq(yk, 0.0), 0.0, F.div(x, yk))),)
        ax = F.abs(x)
        if p < 1:
            s = F.where(F.eq(x, 0.0), 0.0, F.mul(F.sign(x), F.pow(ax, p - 1.0)))
            return (F.mul(F.mul(s, gk), F.pow(yk, 1.0 - p)),)
        s = F.mul(F.sign(x), F.pow(ax, p - 1.0)) if p < 2 else F.mul(x, F.pow(ax, p - 2.0))
        scale = F.where(F.eq(yk, 0.0), 0.0, F.div(gk, F.pow(yk, p - 1.0)))
        return (F.mul(s, scale),)


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
