"""Transforms built from others along a dimension (CatTransform, StackTransform), and
CorrCholeskyTransform: unconstrained vectors to Cholesky factors of correlation matrices
(tanh to partial correlations, then signed stick-breaking along each row)."""
from __future__ import annotations

import math

import plugrad
import plugrad.nn.functional as F
from plugrad.distributions import constraints
from plugrad.distributions.transforms import Transform, _equal_by_class
from plugrad.distributions.utils import _sum_rightmost, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["CatTransform", "StackTransform", "CorrCholeskyTransform"]


class CatTransform(Transform):
    """Apply ``tseq[k]`` to the k-th slice (of ``lengths[k]``) along ``dim``."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise ValueError("CatTransform expects a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(lengths) != len(self.transforms):
            raise ValueError(f"lengths has {len(lengths)} entries for "
                             f"{len(self.transforms)} transforms")
        self.lengths = lengths
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check(self, x):
        if not -x.dim() <= self.dim < x.dim():
            raise ValueError(f"CatTransform: dim {self.dim} out of range for a tensor of "
                             f"{x.dim()} dimensions")
        if x.shape[self.dim] != self.length:
            raise ValueError(f"CatTransform: size {x.shape[self.dim]} along dim {self.dim}, "
                             f"expected the lengths' sum {self.length}")

    def _pieces(self, x):
        start = 0
        for length in self.lengths:
            yield x.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        self._check(x)
        return plugrad.cat([t(p) for t, p in zip(self.transforms, self._pieces(x))], self.dim)

    def _inverse(self, y):
        self._check(y)
        return plugrad.cat([t.inv(p) for t, p in zip(self.transforms, self._pieces(y))],
                           self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x)
        terms = []
        for t, xs, ys in zip(self.transforms, self._pieces(x), self._pieces(y)):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        if dim < 0:  # the joined dimension is a batch dimension of the Jacobian
            return plugrad.cat(terms, dim)
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Apply ``tseq[k]`` to the k-th slice along ``dim`` (each slice one index)."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise ValueError("StackTransform expects a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        if z.shape[self.dim] != len(self.transforms):
            raise ValueError(f"StackTransform: size {z.shape[self.dim]} along dim "
                             f"{self.dim}, expected {len(self.transforms)}")
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x):
        return plugrad.stack([t(s) for s, t in zip(self._slices(x), self.transforms)],
                             self.dim)

    def _inverse(self, y):
        return plugrad.stack([t.inv(s) for s, t in zip(self._slices(y), self.transforms)],
                             self.dim)

    def log_abs_det_jacobian(self, x, y):
        return plugrad.stack([t.log_abs_det_jacobian(xs, ys) for xs, ys, t in
                              zip(self._slices(x), self._slices(y), self.transforms)],
                             self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


@_equal_by_class
class CorrCholeskyTransform(Transform):
    """``D(D-1)/2`` reals to a ``D x D`` lower-triangular factor with unit-norm rows."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = plugrad.finfo(x.dtype).eps
        x = x.tanh().clamp(min=-1 + eps, max=1 - eps)  # partial correlations
        r = vec_to_tril_matrix(x, diag=-1)
        # each entry takes its share of what the row's earlier entries left of unit length
        z1m_cumprod_sqrt = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + plugrad.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * F.pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        y_cumsum = 1 - (y * y).cumsum(-1)
        y_cumsum_shifted = F.pad(y_cumsum[..., :-1], [1, 0], value=1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return ((t).log1p() - (-t).log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        N = shape[-1]
        D = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D * (D - 1) // 2 != N:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return plugrad.Size(tuple(shape[:-1]) + (D, D))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D = shape[-1]
        return plugrad.Size(tuple(shape[:-2]) + (D * (D - 1) // 2,))
