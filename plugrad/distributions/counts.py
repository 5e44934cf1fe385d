"""Counting laws: Binomial, Geometric, Poisson.

Binomial draws count Bernoulli trials in chunks; Poisson draws use inversion for small rates
and Hörmann's transformed rejection (PTRS) from 10 up, both vectorised loops on plugrad's
random stream.
"""
from __future__ import annotations

from numbers import Number

import plugrad
import plugrad.nn.functional as F
from plugrad.distributions import constraints
from plugrad.distributions.discrete import (_LazyBinary, _ProbsOrLogits, _along_batch,
                                           _expand_probs_or_logits, _one_of)
from plugrad.distributions.distribution import Distribution, ExponentialFamily
from plugrad.distributions.utils import broadcast_all

__all__ = ["Binomial", "Geometric", "Poisson"]

_Size = plugrad.Size


def _clamp_by_zero(x):
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


_BINOMIAL_CHUNK = 256


def _binomial_draw(count, probs):
    """Counts of successes in ``count`` Bernoulli(``probs``) trials, in chunks of trials."""
    n = count.detach().to(plugrad.float64)
    p = probs.detach().to(plugrad.float64)
    total = plugrad.zeros(tuple(p.shape), dtype=plugrad.float64, device=p.device)
    top = int(n.max()) if n.numel() else 0
    for start in range(0, top, _BINOMIAL_CHUNK):
        width = min(_BINOMIAL_CHUNK, top - start)
        trial = plugrad.arange(start, start + width, dtype=plugrad.float64, device=p.device)
        u = plugrad.rand(tuple(p.shape) + (width,), dtype=plugrad.float64, device=p.device)
        hit = (u < p.unsqueeze(-1)) & (trial < n.unsqueeze(-1))
        total = total + hit.to(plugrad.float64).sum(-1)
    return total.to(probs.dtype)


class Binomial(_ProbsOrLogits, Distribution):
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        batch_shape = self._set_probs_or_logits(probs, logits, total_count)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(Binomial, ("total_count",), batch_shape, _instance)
        _expand_probs_or_logits(self, new, new.batch_shape)
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=_Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with plugrad.no_grad():
            return _binomial_draw(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = (self.total_count + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (self.total_count - value + 1).lgamma()
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * (-self.logits.abs()).exp().log1p()
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = plugrad.arange(1 + total_count, dtype=self._param.dtype,
                                device=self._param.device)
        return _along_batch(self, values, expand)


class Geometric(_LazyBinary, Distribution):
    """Failures before the first success, each trial succeeding with ``probs``."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        probs_or_logits = probs if probs is not None else logits
        if isinstance(probs_or_logits, Number):
            batch_shape = _Size()
        else:
            batch_shape = (self.probs if probs is not None else self.logits).size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                invalid_value = value[~valid]
                raise ValueError(
                    "Expected parameter probs "
                    f"({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} "
                    f"to be positive but found invalid values:\n{invalid_value}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = _Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return plugrad.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=_Size()):
        shape = tuple(self._extended_shape(sample_shape))
        tiny = plugrad.finfo(self.probs.dtype).tiny
        with plugrad.no_grad():
            u = plugrad.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # a sure success (probs == 1) has log-probability 0 at value 0, not nan
        probs = plugrad.where((probs == 1) & (value == 0), plugrad.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs


def _poisson_draw(rate):
    lam = rate.detach().to(plugrad.float64)
    shape, dev = tuple(lam.shape), lam.device
    out = plugrad.zeros(shape, dtype=plugrad.float64, device=dev)
    small = lam < 10
    # inversion by products of uniforms: count until the product falls below e**-lam
    if bool(small.any()):
        limit = (-plugrad.where(small, lam, plugrad.zeros_like(lam))).exp()
        prod = plugrad.ones(shape, dtype=plugrad.float64, device=dev)
        count = plugrad.zeros(shape, dtype=plugrad.float64, device=dev)
        active = small.clone()
        while bool(active.any()):
            prod = prod * plugrad.rand(shape, dtype=plugrad.float64, device=dev)
            active = active & (prod > limit)
            count = count + active.to(plugrad.float64)
        out = plugrad.where(small, count, out)
    big = ~small
    if bool(big.any()):  # PTRS, Hörmann (1993)
        lb = plugrad.where(big, lam, plugrad.full_like(lam, 10.0))
        slam, loglam = lb.sqrt(), lb.log()
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        done = small.clone()
        while not bool(done.all()):
            u = plugrad.rand(shape, dtype=plugrad.float64, device=dev) - 0.5
            v = plugrad.rand(shape, dtype=plugrad.float64, device=dev)
            us = 0.5 - u.abs()
            k = ((2 * a / us + b) * u + lb + 0.43).floor()
            quick = (us >= 0.07) & (v <= vr)
            bad = (k < 0) | ((us < 0.013) & (v > us))
            log_lhs = v.log() + inv_alpha.log() - (a / (us * us) + b).log()
            log_rhs = -lb + k * loglam - (k.clamp(min=0) + 1).lgamma()
            accept = quick | (~bad & (log_lhs <= log_rhs))
            new = accept & ~done
            out = plugrad.where(new, k, out)
            done = done | accept
    return out.to(rate.dtype)


class Poisson(ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = _Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, ("rate",), batch_shape, _instance)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=_Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with plugrad.no_grad():
            return _poisson_draw(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return plugrad.xlogy(value, rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()
