"""Multinomial (counts over categories in ``total_count`` draws) and NegativeBinomial
(successes before ``total_count`` failures; drawn as a gamma-Poisson mixture)."""
from __future__ import annotations

import math

import plugrad
import plugrad.nn.functional as F
from plugrad.distributions import constraints
from plugrad.distributions.counts import Binomial, _poisson_draw
from plugrad.distributions.discrete import (Categorical, _OverCategorical, _ProbsOrLogits,
                                            _expand_probs_or_logits)
from plugrad.distributions.distribution import Distribution
from plugrad.distributions.gamma import Gamma
from plugrad.distributions.utils import broadcast_all, lazy_property

__all__ = ["Multinomial", "NegativeBinomial"]

_Size = plugrad.Size


class Multinomial(_OverCategorical, Distribution):
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(Multinomial, ("_categorical",), batch_shape, _instance)
        new.total_count = self.total_count
        new._binomial = Binomial(self.total_count, probs=new._categorical.probs,
                                 validate_args=False)
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=_Size()):
        sample_shape = _Size(sample_shape)
        samples = self._categorical.sample(_Size((self.total_count,)) + sample_shape)
        order = list(range(1, samples.ndim)) + [0]  # the draws' axis last
        samples = samples.permute(*order)
        counts = F.one_hot(samples, self._categorical._num_events).sum(-2)
        return counts.to(self.probs.dtype)

    def entropy(self):
        n = plugrad.tensor(float(self.total_count), dtype=self.probs.dtype,
                           device=self.probs.device)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - (n + 1).lgamma()
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = (support + 1).lgamma()
        term2 = (binomial_probs * weights).sum(-1).sum(0)
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        logits = plugrad.where((value == 0) & (logits == -math.inf),
                               plugrad.zeros_like(logits), logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers


class NegativeBinomial(_ProbsOrLogits, Distribution):
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        batch_shape = self._set_probs_or_logits(probs, logits, total_count)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(NegativeBinomial, ("total_count",), batch_shape, _instance)
        _expand_probs_or_logits(self, new, new.batch_shape)
        return new

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / plugrad.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=_Size()):
        with plugrad.no_grad():
            rate = self._gamma.sample(sample_shape)
            return _poisson_draw(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * F.logsigmoid(-self.logits)
                                 + value * F.logsigmoid(self.logits))
        log_normalization = (-(self.total_count + value).lgamma() + (1.0 + value).lgamma()
                             + self.total_count.lgamma())
        # a zero count of zero trials has probability 1
        log_normalization = plugrad.where(self.total_count + value == 0,
                                          plugrad.zeros_like(log_normalization),
                                          log_normalization)
        return log_unnormalized_prob - log_normalization
