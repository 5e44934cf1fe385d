"""Laws on the unit interval: ContinuousBernoulli (Loaiza-Ganem and Cunningham, 2019) and
Kumaraswamy (a Beta look-alike with a closed-form CDF, drawn by inverting it)."""
from __future__ import annotations

import math

import plugrad
import plugrad.nn.functional as F
from plugrad.distributions import constraints
from plugrad.distributions.continuous import Uniform
from plugrad.distributions.discrete import _ProbsOrLogits, _expand_probs_or_logits
from plugrad.distributions.distribution import ExponentialFamily
from plugrad.distributions.transformed_distribution import TransformedDistribution
from plugrad.distributions.transforms import AffineTransform, PowerTransform
from plugrad.distributions.utils import (broadcast_all, clamp_probs, euler_constant,
                                         lazy_property, logits_to_probs)

__all__ = ["ContinuousBernoulli", "Kumaraswamy"]

_Size = plugrad.Size


class ContinuousBernoulli(_ProbsOrLogits, ExponentialFamily):
    """Density ``C(p) p**x (1-p)**(1-x)`` on [0, 1]. Near ``p = 1/2`` (inside ``lims``) the
    closed forms divide 0 by 0, so there they are replaced by their Taylor series."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        batch_shape = self._set_probs_or_logits(probs, logits)
        if probs is not None:
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = _Size(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(new, batch_shape)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _stable(self):
        """Where the closed forms are used (``probs`` outside ``lims``)."""
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """``probs`` where stable, a harmless stand-in where the series is used instead."""
        return plugrad.where(self._stable(), self.probs,
                             plugrad.full_like(self.probs, self._lims[0]))

    def _log_odds_gap(self, cut):
        return (-cut).log1p() - cut.log()  # log(1 - p) - log(p)

    def _cont_bern_log_norm(self):
        cut = self._cut_probs()
        below = plugrad.where(cut <= 0.5, cut, plugrad.zeros_like(cut))
        above = plugrad.where(cut >= 0.5, cut, plugrad.ones_like(cut))
        log_abs_1m2p = plugrad.where(cut <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        log_norm = self._log_odds_gap(cut).abs().log() - log_abs_1m2p
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return plugrad.where(self._stable(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / self._log_odds_gap(cut)
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return plugrad.where(self._stable(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        vs = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
              + 1.0 / self._log_odds_gap(cut).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return plugrad.where(self._stable(), vs, taylor)

    def sample(self, sample_shape=_Size()):
        with plugrad.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_Size()):
        shape = tuple(self._extended_shape(sample_shape))
        u = plugrad.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-F.binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = plugrad.where(self._stable(), cdfs, value)
        return plugrad.where(value <= 0.0, plugrad.zeros_like(value),
                             plugrad.where(value >= 1.0, plugrad.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        inverted = (((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p())
                    / (cut.log() - (-cut).log1p()))
        return plugrad.where(self._stable(), inverted, value)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0


def _moments(a, b, n):
    """E[X**n] of Kumaraswamy(a, b): b B(1 + n/a, b)."""
    arg1 = 1 + n / a
    return b * (arg1.lgamma() + b.lgamma() - (arg1 + b).lgamma()).exp()


class Kumaraswamy(TransformedDistribution):
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        base_dist = Uniform(plugrad.zeros_like(self.concentration0),
                            plugrad.ones_like(self.concentration0),
                            validate_args=validate_args)
        # X = (1 - (1 - U) ** (1/b)) ** (1/a), with U and 1 - U alike
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(_Size(batch_shape))
        new.concentration0 = self.concentration0.expand(_Size(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        """``((a-1)/(ab-1))**(1/a)`` where ``a, b >= 1`` (else nan). PyTorch 2.13's formula
        gives nan for every parameter; this is the law's mode."""
        a, b = self.concentration1, self.concentration0
        inside = (a >= 1) & (b >= 1) & ((a > 1) | (b > 1))
        ratio = (a - 1) / (a * b - 1).clamp(min=plugrad.finfo(a.dtype).tiny)
        mode = ratio.clamp(min=0) ** a.reciprocal()
        return plugrad.where(inside, mode, plugrad.full_like(mode, math.nan))

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = (self.concentration0 + 1).digamma() + euler_constant
        return t0 + t1 * H0 - self.concentration1.log() - self.concentration0.log()
