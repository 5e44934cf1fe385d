"""Continuous relaxations of discrete laws (Concrete / Gumbel-softmax) and the
straight-through one-hot categorical, whose draws carry gradients to the logits."""
from __future__ import annotations

import plugrad
from plugrad.distributions import constraints
from plugrad.distributions.discrete import (Categorical, OneHotCategorical, _OverCategorical,
                                            _ProbsOrLogits, _expand_probs_or_logits)
from plugrad.distributions.distribution import Distribution
from plugrad.distributions.transformed_distribution import TransformedDistribution
from plugrad.distributions.transforms import ExpTransform, SigmoidTransform
from plugrad.distributions.utils import broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli", "ExpRelaxedCategorical",
           "RelaxedOneHotCategorical", "OneHotCategoricalStraightThrough"]

_Size = plugrad.Size


def _uniform(shape, like):
    return plugrad.rand(tuple(shape), dtype=like.dtype, device=like.device)


class LogitRelaxedBernoulli(_ProbsOrLogits, Distribution):
    """The logit of a relaxed Bernoulli draw at ``temperature`` (Maddison et al., 2017)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        batch_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = _Size(batch_shape)
        new.temperature = self.temperature
        _expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(new, batch_shape)

    def rsample(self, sample_shape=_Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(tuple(shape)))
        uniforms = clamp_probs(_uniform(shape, probs))
        return (uniforms.log() - (-uniforms).log1p() + probs.log()
                - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        t = self.temperature
        log_t = t.log() if isinstance(t, plugrad.Tensor) else plugrad.tensor(float(t)).log()
        return log_t + diff - 2 * diff.exp().log1p()


class _RelaxedViews:
    """RelaxedBernoulli's and RelaxedOneHotCategorical's parameters: their base law's."""

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedBernoulli(_RelaxedViews, TransformedDistribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)


class ExpRelaxedCategorical(_OverCategorical, Distribution):
    """The log of a relaxed one-hot categorical (Gumbel-softmax) draw."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(ExpRelaxedCategorical, ("_categorical",), batch_shape, _instance)
        new.temperature = self.temperature
        return new

    def rsample(self, sample_shape=_Size()):
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(_uniform(shape, self.logits))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        t = self.temperature
        t = t if isinstance(t, plugrad.Tensor) else plugrad.tensor(float(t), dtype=logits.dtype,
                                                                    device=logits.device)
        log_scale = plugrad.full_like(t, float(K)).lgamma() - t.log() * (-(K - 1))
        score = logits - value * t
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_RelaxedViews, TransformedDistribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """One-hot draws whose gradient is that of the probabilities (Bengio et al., 2013)."""
    has_rsample = True

    def rsample(self, sample_shape=_Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
