"""Numerical helpers PyTorch has at the top level: ``cov``/``corrcoef``, ``trapezoid``
(``trapz``, ``cumulative_trapezoid``), ``vander``, ``addmv``/``addr``/``addbmm``,
``chain_matmul``, ``dist``, ``renorm``, ``isin``, ``histogram`` and the ``*_norm`` legacy
spellings (the window functions are in :mod:`~plugrad.core.ops.windows`).

Compositions of differentiable ops: their gradients are the composed ops' rules (``vander``
is a cumulative product, as PyTorch's, so the gradient at 0 is finite).
"""
from __future__ import annotations

import math
import warnings

from plugrad.core import dtypes as _dt
from plugrad.core.errors import broadcast_shapes
from plugrad.core.factories import tensor, zeros
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import input_meta, record
from plugrad.core.grad_mode import _state as _grad_state
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops._dims import return_type
from plugrad.core.ops.declare import op
from plugrad.core.ops.join import cat
from plugrad.core.ops.linalg import matmul
from plugrad.core.ops.linalg_extra import matrix_norm, multi_dot, vector_norm
from plugrad.core.tensor import Tensor, _wrap_dim

_histogram_result = return_type("histogram", "hist", "bin_edges")
builtins_range = range  # histogram's ``range=`` argument hides the builtin


def _float(x):
    return x if x.dtype.is_floating_point else x.to(_dt.get_default_dtype())


def _no_bool(name, *xs):
    for x in xs:
        if isinstance(x, Tensor) and x.dtype is _dt.bool_:
            raise RuntimeError(f"{name}: not implemented for 'Bool' tensors")


# ---------------------------------------------------------------------- statistics
@op("cov", method="cov")
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance of the rows (variables) over the columns (observations), weighted by
    integer frequencies and/or observation weights, as ``numpy.cov``."""
    _no_bool("cov", input)
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    # (PyTorch's order of steps: an integer input is summed in int64, wrapping as there,
    # before the true division makes the mean a float)
    x = input.reshape(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.dtype.is_floating_point:
            raise RuntimeError("cov(): expected fweights to have integral dtype")
        w = fweights
    if aweights is not None:
        if not aweights.dtype.is_floating_point:
            raise RuntimeError("cov(): expected aweights to have floating point dtype")
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.sum(1) / n
        w_sum = _float(x).new_full((), float(n))
        norm = w_sum - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    if bool(norm <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.")
        norm = norm.clamp_min(0.0)
    xm = x - avg.unsqueeze(1)
    xw = xm if w is None else xm * w
    c = matmul(xw, xm.transpose(0, 1)) / norm
    return c.squeeze() if input.ndim < 2 or x.shape[0] == 1 else c


@op("corrcoef", method="corrcoef")
def corrcoef(input):
    """Pearson correlation coefficients of the rows, clipped to [-1, 1]."""
    _no_bool("corrcoef", input)
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal().sqrt()
    c = c / d.unsqueeze(1) / d.unsqueeze(0)
    return c.clamp(-1.0, 1.0)


# ---------------------------------------------------------------------- integration
# PyTorch's formulas, term for term (Integration.cpp), so that special values (inf - inf),
# integer wrap-around and the result dtype come out as there: a constant spacing is
# ``(y.sum() - (y[0] + y[-1]) * 0.5) * dx``; sample points are ``(dx * (l + r)).sum() / 2``.
def _trapz_dx(y, x, dim, name):
    """``x``'s differences along ``dim``, viewed to broadcast against ``y``'s."""
    if x.dtype is _dt.bool_ or y.dtype is _dt.bool_:
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           f"supported")
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[dim] = x.shape[0]
        x = x.reshape(shape)
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    n = x.shape[dim]
    return x.narrow(dim, min(1, n), max(n - 1, 0)) - x.narrow(dim, 0, max(n - 1, 0))


def _scalar_dx(name, y, dx):
    if y.dtype is _dt.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return 1.0 if dx is None else float(dx)


def _halves(y, dim):
    n = y.shape[dim]
    return y.narrow(dim, 0, max(n - 1, 0)), y.narrow(dim, min(1, n), max(n - 1, 0))


@op("trapezoid")
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim`` (sample points ``x``, or spacing ``dx``)."""
    if y.ndim == 0:
        raise IndexError(f"trapezoid: Dimension specified as {dim} but tensor has no "
                         f"dimensions")
    dim = _wrap_dim(dim, y.ndim, "trapezoid")
    if x is not None and not isinstance(x, Tensor):
        dx, x = x, None
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: both "
                        "`x` and `dx` were given")
    if y.shape[dim] == 0:  # numpy's 0 for no samples
        return y.new_zeros(y.shape[:dim] + y.shape[dim + 1:])
    if x is None:
        step = _scalar_dx("trapezoid", y, dx)
        ends = (y.select(dim, 0) + y.select(dim, -1)) * 0.5
        return (y.sum(dim) - ends) * step
    left, right = _halves(y, dim)
    return (_trapz_dx(y, x, dim, "trapezoid") * (left + right)).sum(dim) / 2.0


@op("trapz")
def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


@op("cumulative_trapezoid")
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal rule along ``dim`` (one fewer element than ``y`` there)."""
    if y.ndim == 0:
        raise IndexError(f"cumulative_trapezoid: Dimension specified as {dim} but tensor has no "
                         f"dimensions")
    dim = _wrap_dim(dim, y.ndim, "cumulative_trapezoid")
    if x is not None and not isinstance(x, Tensor):
        dx, x = x, None
    left, right = _halves(y, dim)
    if x is None:
        step = _scalar_dx("cumulative_trapezoid", y, dx)
        return (step / 2.0 * (left + right)).cumsum(dim)
    return (_trapz_dx(y, x, dim, "cumulative_trapezoid") * (left + right) / 2.0).cumsum(dim)


# ---------------------------------------------------------------------- products
@op("vander")
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-d tensor: columns ``x**(N-1), ..., x**0`` (or
    increasing), made by a cumulative product, as PyTorch's."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = _dt.promote_types(x.dtype, _dt.int64)
    if n == 0:
        return x.new_zeros((x.shape[0], 0), dtype=dt)
    ones = x.new_ones((x.shape[0], 1), dtype=dt)
    if n == 1:
        out = ones
    else:
        cols = x.to(dt).unsqueeze(1).expand(x.shape[0], n - 1)
        out = cat([ones, cols.cumprod(1)], 1)
    return out if increasing else out.flip(1)


def _integral_scales(name, input, beta, alpha):
    """PyTorch casts ``beta``/``alpha`` to an integral result's dtype (0.5 becomes 0) in
    addmv and addbmm; addr refuses them."""
    if input.dtype.is_floating_point:
        return beta, alpha
    if name == "addr":
        for label, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float):
                raise RuntimeError(f"addr: For integral input tensors, argument {label} must "
                                   f"not be a floating point number.")
        return beta, alpha
    return tuple(int(v) if isinstance(v, float) and input.dtype is not _dt.bool_ else v
                 for v in (beta, alpha))


def _scaled_sum(name, input, product, beta, alpha):
    beta, alpha = _integral_scales(name, input, beta, alpha)
    out = product if alpha == 1 else product * alpha
    if beta == 0:  # input ignored, its NaN and infinities included
        return out.expand(_broadcast(name, input.shape, out.shape)).clone()
    return out + (input if beta == 1 else input * beta)


def _broadcast(name, a, b):
    return broadcast_shapes(name, a, b)


@op("addmv", method="addmv", inplace="addmv_")
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)`` (``input`` ignored, NaN included, if beta is 0)."""
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    _no_bool("addmv", input, mat, vec)
    return _scaled_sum("addmv", input, matmul(mat, vec), beta, alpha)


@op("addr", method="addr", inplace="addr_")
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D"
                           if vec1.ndim != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    if vec1.dtype is _dt.bool_ and vec2.dtype is _dt.bool_ and input.dtype is _dt.bool_:
        # PyTorch's logical form (bitwise with the bool scalars: logical_and takes Tensors)
        out = vec1.unsqueeze(1).logical_and(vec2.unsqueeze(0)).bitwise_and(bool(alpha))
        return out.logical_or(input.bitwise_and(bool(beta)))
    floats = vec1.dtype is vec2.dtype is input.dtype and input.dtype.is_floating_point
    if not floats or not (input._rg or vec1._rg or vec2._rg) or not _grad_state.enabled:
        return _addr_values(input, vec1, vec2, beta, alpha)
    with no_grad():
        r = _addr_values(input, vec1, vec2, beta, alpha)
    node = AddrBackward0()
    node.beta, node.alpha = _integral_scales("addr", input, beta, alpha)
    record(r, node, (input, vec1, vec2), (vec1 if vec2._rg else None,
                                          vec2 if vec1._rg else None))
    node.meta = input_meta(r, (input, None, None))
    return r


def _addr_values(input, vec1, vec2, beta, alpha):
    """PyTorch's kernel's order: ``beta * input + (alpha * vec1) * vec2``."""
    b, a = _integral_scales("addr", input, beta, alpha)
    return _scaled_sum("addr", input, (vec1 if a == 1 else vec1 * a).unsqueeze(1)
                       * vec2.unsqueeze(0), b, 1)


class AddrBackward0(Node):
    """PyTorch's rules: ``input`` gets ``g * beta`` (``g`` for beta 1), ``vec1``
    ``(g @ vec2) * alpha`` and ``vec2`` ``(g^T @ vec1) * alpha``: alpha last (the composed
    product scaled ``g`` first, which overflows where PyTorch's does not)."""

    def grad(self, F, g, v1, v2):
        gx = (g if self.beta == 1 else F.mul(g, self.beta)) if self.next[0] else None
        g1 = F.mul(_mv(F, g, v2), self.alpha) if self.next[1] else None
        g2 = F.mul(_mv(F, F.permute(g, (1, 0)), v1), self.alpha) if self.next[2] else None
        return gx, g1, g2


def _mv(F, m, v):
    """``m @ v`` with the 2-D ``matmul`` kernel."""
    return F.reshape(F.matmul(m, F.reshape(v, (v.shape[0], 1))), (m.shape[0],))


@op("addbmm", method="addbmm", inplace="addbmm_")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``."""
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor" if batch1.ndim != 3 else
                           "batch2 must be a 3D tensor")
    _no_bool("addbmm", input, batch1, batch2)
    if input.dtype in (_dt.float16, _dt.bfloat16):  # each step in float32, rounded once
        out = None
        for b in range(batch1.shape[0]):
            acc = input if out is None else out
            step = addmm_like(acc.to(_dt.float32), batch1[b].to(_dt.float32),
                              batch2[b].to(_dt.float32), beta if out is None else 1, alpha)
            out = step.to(input.dtype)
        if out is not None:
            return out
    prods = matmul(batch1, batch2)
    if prods.shape[0] == 0:
        return _scaled_sum("addbmm", input, prods.new_zeros(prods.shape[1:]), beta, alpha)
    # PyTorch's order: input and the first product, then one product at a time (where
    # infinities meet, the order decides between inf and nan); the dtype stays
    out = _scaled_sum("addbmm", input, prods[0], beta, alpha)
    alpha = _integral_scales("addbmm", input, beta, alpha)[1]
    for b in range(1, prods.shape[0]):
        out = out + (prods[b] if alpha == 1 else prods[b] * alpha)
    return out


def addmm_like(input, m1, m2, beta, alpha):
    """``beta * input + alpha * (m1 @ m2)`` (one of addbmm's steps)."""
    return _scaled_sum("addbmm", input, matmul(m1, m2), beta, alpha)


@op("chain_matmul")
def chain_matmul(*matrices):
    """The product of the matrices (deprecated in PyTorch for ``linalg.multi_dot``)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead", UserWarning)
    _no_bool("chain_matmul", *matrices)
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(list(matrices))


# ---------------------------------------------------------------------- norms
@op("dist", method="dist")
def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (all elements)."""
    return vector_norm(input - other, p)


@op("renorm", method="renorm", inplace="renorm_")
def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to it."""
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (p = {p})")
    axis = _wrap_dim(dim, input.ndim, "renorm")
    others = tuple(d for d in range(input.ndim) if d != axis)
    half = input.dtype in (_dt.float16, _dt.bfloat16)  # norms in float32, as PyTorch's
    x = input.to(_dt.float32) if half else input

    def norm(t):
        return vector_norm(t, p, others, keepdim=True) if others else t.abs()
    with no_grad():
        big = norm(x) > maxnorm
    # the slices left as they are (a NaN norm among them) take no part in the norm's
    # gradient: PyTorch's rule gives them g itself, where 0 * d(norm) would be nan
    norms = norm(x.where(big, 1.0))
    factor = (maxnorm / (norms + 1e-7)).where(big, 1.0)
    return (x * factor).to(input.dtype) if half else x * factor


@op("frobenius_norm")
def frobenius_norm(input, dim, keepdim=False):
    return vector_norm(input, 2, dim, keepdim)


@op("nuclear_norm")
def nuclear_norm(input, dim=(-2, -1), keepdim=False):
    return matrix_norm(input, "nuc", dim, keepdim)


@op("norm_except_dim")
def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm over every dim but ``dim`` (kept as size 1), as weight norm uses;
    ``dim=-1`` is the norm of the whole tensor."""
    if dim == -1:
        return vector_norm(v, pow)
    axis = _wrap_dim(dim, v.ndim, "norm_except_dim")
    others = tuple(d for d in range(v.ndim) if d != axis)
    return vector_norm(v, pow, others, keepdim=True)


# ---------------------------------------------------------------------- membership, bins
@op("isin")
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of ``elements`` is among ``test_elements`` (either may be a number)."""
    if not isinstance(elements, Tensor):
        elements = test_elements.new_tensor(elements)
    if not isinstance(test_elements, Tensor):
        test_elements = elements.new_tensor(test_elements)
    _no_bool("isin", elements, test_elements)
    found = (elements.unsqueeze(-1) == test_elements.reshape(-1)).any(-1) \
        if test_elements.numel() else elements.new_zeros(elements.shape, dtype=_dt.bool_)
    return found.logical_not() if invert else found


@op("histogram", method="histogram")
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """Counts (or ``weight`` sums) of ``input`` in ``bins`` equal bins over ``range`` (the
    data's min and max by default), or in the bins a 1-d tensor of edges gives; the last bin
    includes its right edge. Returns ``(hist, bin_edges)``."""
    if input.dtype.name not in ("float32", "float64"):
        raise RuntimeError(f"histogram: not implemented for '{input.dtype.name}' input "
                           f"(float32 and float64 only, as in PyTorch)")
    x = input.reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins.to(input.dtype)
    else:
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.numel():
            lo, hi = float(x.min()), float(x.max())
        else:
            lo, hi = 0.0, 0.0
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"histogram: dimension 0's range [{lo:g}, {hi:g}] is not finite")
        if lo > hi:
            raise RuntimeError(f"histogram: min should not exceed max, but got min {lo:g} "
                               f"max {hi:g}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5  # numpy's and PyTorch's widening of an empty range
        step = (hi - lo) / bins  # PyTorch's linspace: from both ends towards the middle
        vals = [lo + step * i if i < (bins + 1) // 2 else hi - step * (bins - i)
                for i in builtins_range(bins + 1)]
        edges = tensor(vals, dtype=input.dtype, device=input.device)
    nb = edges.shape[0] - 1
    lo_e, hi_e = edges[0], edges[-1]
    inside = (x >= lo_e).logical_and(x <= hi_e)
    pos = (x.unsqueeze(1) >= edges[1:-1].unsqueeze(0)).sum(1) if nb > 1 else \
        x.new_zeros(x.shape, dtype=_dt.int64)
    w = x.new_ones(x.shape) if weight is None else weight.reshape(-1).to(input.dtype)
    w = w.where(inside, 0.0)
    hist = zeros((nb,), dtype=input.dtype, device=input.device).scatter_add(
        0, pos.clamp(0, nb - 1), w)
    if density:
        widths = edges.diff()
        hist = hist / (hist.sum() * widths)
    return _histogram_result(hist.detach(), edges)
