"""GeneralizedPareto(loc, scale, concentration): the law of threshold excesses. Shape
``concentration`` (xi) 0 is the exponential limit, handled by its own formulas."""
from __future__ import annotations

import math
from numbers import Number

import plugrad
from plugrad.distributions import constraints
from plugrad.distributions.distribution import Distribution
from plugrad.distributions.utils import broadcast_all

__all__ = ["GeneralizedPareto"]

_Size = plugrad.Size


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, Number) for v in (loc, scale, concentration)):
            batch_shape = _Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, ("loc", "scale", "concentration"),
                                   batch_shape, _instance)

    def _xi(self):
        """``(xi == 0, xi with 1 where it is 0)``: the limit and a divisor safe for both."""
        eq_zero = self.concentration.abs() <= 1e-8  # isclose(xi, 0) at PyTorch's tolerances
        return eq_zero, plugrad.where(eq_zero, plugrad.ones_like(self.concentration),
                                      self.concentration)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def rsample(self, sample_shape=_Size()):
        shape = tuple(self._extended_shape(sample_shape))
        u = plugrad.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, xi = self._xi()
        power = 1 / xi + plugrad.ones_like(z)
        # power 0 (xi = -1) is the uniform law: no log1p term even where it is -inf
        nonzero = plugrad.where(power == 0, power, power * (xi * z).log1p())
        return -self.scale.log() - plugrad.where(eq_zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, xi = self._xi()
        return plugrad.where(eq_zero, -z, -(xi * z).log1p() / xi)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        eq_zero, xi = self._xi()
        log_u = (-value).log1p()
        nonzero = self.loc + self.scale / xi * (-xi * log_u).expm1()
        return plugrad.where(eq_zero, self.loc - self.scale * log_u, nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        xi = plugrad.where(valid, self.concentration, plugrad.full_like(self.concentration, 0.5))
        result = self.loc + self.scale / (1 - xi)
        return plugrad.where(valid, result, plugrad.full_like(result, math.nan))

    @property
    def variance(self):
        valid = self.concentration < 0.5
        xi = plugrad.where(valid, self.concentration,
                           plugrad.full_like(self.concentration, 0.25))
        result = self.scale ** 2 / ((1 - xi) ** 2 * (1 - 2 * xi))
        return plugrad.where(valid, result, plugrad.full_like(result, math.nan))

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = plugrad.where(self.concentration < 0, lower - self.scale / self.concentration,
                              plugrad.full_like(lower, math.inf))
        return constraints.interval(lower, upper)
