"""LKJCholesky(dim, concentration): Cholesky factors of LKJ-distributed correlation
matrices (Lewandowski, Kurowicka and Joe, 2009), drawn by the onion method: row ``i`` is a
uniform direction scaled by the square root of a Beta draw, the diagonal closes it.

PyTorch 2.13 draws row i's squared norm from Beta(i - 1/2, ...) where the onion method has
Beta(i/2, ...), so its correlations beyond the second row do not have the LKJ marginal
(for dim 3, eta 1 their variance is 0.30, not 0.25); plugrad follows the paper. The
densities (``log_prob``) agree."""
from __future__ import annotations

import math

import plugrad
from plugrad.distributions import constraints
from plugrad.distributions.distribution import Distribution
from plugrad.distributions.gamma import Beta
from plugrad.distributions.utils import broadcast_all
from plugrad.distributions.wishart import _mvlgamma

__all__ = ["LKJCholesky"]

_Size = plugrad.Size


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = _Size((dim, dim))
        # the squared norm of row i (i >= 1) is Beta(i/2, eta + (dim - 1 - i)/2)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = plugrad.arange(self.dim - 1, dtype=self.concentration.dtype,
                                device=self.concentration.device)
        offset = plugrad.cat([plugrad.zeros_like(offset[:1]), offset])
        self._beta = Beta(0.5 * offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = _Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        return self._expanded(new, batch_shape)

    def sample(self, sample_shape=_Size()):
        with plugrad.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = tuple(self._extended_shape(sample_shape))
            u_normal = plugrad.randn(shape, dtype=y.dtype, device=y.device).tril(-1)
            norms = plugrad.linalg.vector_norm(u_normal, dim=-1, keepdim=True)
            # row 0 is all zeros below the diagonal: its direction is 0, not 0/0
            first_row = plugrad.arange(self.dim, device=y.device).reshape(-1, 1) == 0
            u_sphere = plugrad.where(first_row, plugrad.zeros_like(u_normal),
                                     u_normal / norms.clamp(min=plugrad.finfo(y.dtype).tiny))
            w = y.sqrt() * u_sphere
            tiny = plugrad.finfo(w.dtype).tiny
            diag = (1 - (w ** 2).sum(-1)).clamp(min=tiny).sqrt()
            return w + plugrad.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = plugrad.arange(2, self.dim + 1, dtype=self.concentration.dtype,
                               device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = _mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized - (pi_constant + numerator - denominator)
