"""Discrete laws over categories: Bernoulli, Categorical, OneHotCategorical.

A law given by ``probs`` or by ``logits`` (exactly one) computes the other lazily, as
PyTorch does.
"""
from __future__ import annotations

import math

import plugrad
import plugrad.nn.functional as F
from plugrad.distributions import constraints
from plugrad.distributions.distribution import Distribution, ExponentialFamily
from plugrad.distributions.utils import (broadcast_all, lazy_property, logits_to_probs,
                                         probs_to_logits)

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical"]

_Size = plugrad.Size


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class _LazyBinary:
    """A binary event's ``logits`` from its ``probs``, or the other way, on first use."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)


class _ProbsOrLogits(_LazyBinary):
    """The laws given one binary event's ``probs`` or ``logits`` (not both): the one given is
    kept, also as ``_param``, and the other derived on first use."""

    def _set_probs_or_logits(self, probs, logits, total_count=None):
        """Store the given parameter (broadcast with ``total_count``, which then takes its
        dtype, where there is one); return the batch shape."""
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        if total_count is None:
            (param,) = broadcast_all(given)
        else:
            total_count, param = broadcast_all(total_count, given)
            self.total_count = total_count.to(param.dtype)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        return param.size()

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def param_shape(self):
        return self._param.size()


class _OverCategorical:
    """The laws built on a ``Categorical`` (kept as ``_categorical``: OneHotCategorical,
    Multinomial, ExpRelaxedCategorical) take its parameters as theirs."""

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape


def _along_batch(self, values, expand):
    """``enumerate_support``'s ending: the support's values (a 1-d tensor) down the first
    dimension, broadcast over the batch dimensions (``expand``) or of size 1 there."""
    values = values.view((-1,) + (1,) * len(self._batch_shape))
    if expand:
        values = values.expand((-1,) + tuple(self._batch_shape))
    return values


def _expand_probs_or_logits(self, new, shape):
    if "probs" in self.__dict__:
        new.probs = self.probs.expand(shape)
        new._param = new.probs
    if "logits" in self.__dict__:
        new.logits = self.logits.expand(shape)
        new._param = new.logits


class Bernoulli(_ProbsOrLogits, ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = _Size(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return plugrad.where(self.probs == 0.5, plugrad.full_like(mode, math.nan), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=_Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with plugrad.no_grad():
            return plugrad.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value.to(logits.dtype),
                                                   reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = plugrad.arange(2, dtype=self._param.dtype, device=self._param.device)
        return _along_batch(self, values, expand)

    @property
    def _natural_params(self):
        return (plugrad.logit(self.probs),)

    def _log_normalizer(self, x):
        return x.exp().log1p()


class Categorical(Distribution):
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndim > 1 else _Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = _Size(batch_shape)
        _expand_probs_or_logits(self, new, tuple(batch_shape) + (self._num_events,))
        new._num_events = self._num_events
        return self._expanded(new, batch_shape)

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return plugrad.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                            device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return plugrad.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                            device=self.probs.device)

    def sample(self, sample_shape=_Size()):
        sample_shape = _Size(sample_shape)
        with plugrad.no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = plugrad.multinomial(probs_2d, sample_shape.numel(), True).T
            return samples_2d.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = plugrad.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = plugrad.finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = plugrad.arange(self._num_events, dtype=plugrad.int64,
                                device=self._param.device)
        return _along_batch(self, values, expand)


class OneHotCategorical(_OverCategorical, Distribution):
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(OneHotCategorical, ("_categorical",), batch_shape, _instance)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=_Size()):
        probs = self._categorical.probs
        num_events = self._categorical._num_events
        indices = self._categorical.sample(sample_shape)
        return F.one_hot(indices, num_events).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = plugrad.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values
