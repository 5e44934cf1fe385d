"""``plugrad.special``: PyTorch's ``torch.special`` names for the math ops (most are aliases of
``plugrad.*`` functions; ``xlog1py``, ``ndtr``, ``entr`` and ``multigammaln`` are composed
here or live in :mod:`plugrad.core.ops.transcendental`)."""
from __future__ import annotations

import math

from plugrad.core.api import (digamma, erf, erfc, erfinv, exp2, expm1, lgamma, log1p,
                              log_softmax, logit, logsumexp, polygamma, round, sigmoid, sinc,
                              softmax, xlogy)
from plugrad.core.ops.transcendental import xlog1py

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln",
           "log1p", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "polygamma",
           "psi", "round", "sinc", "softmax", "xlog1py", "xlogy"]

expit = sigmoid
gammaln = lgamma
psi = digamma


def ndtr(input):
    """The standard normal CDF, ``erfc(-x / sqrt 2) / 2`` (accurate in the lower tail)."""
    x = input if input.dtype.is_floating_point else input.float()
    return erfc(x * -math.sqrt(0.5)) * 0.5


def entr(input):
    """``-x log x``: 0 at 0, ``-inf`` below 0 (NaN stays NaN)."""
    x = input if input.dtype.is_floating_point else input.float()
    out = (-xlogy(x, x)).where(x != 0, 0.0)  # +0.0 at 0, as PyTorch
    return out.where(~(x < 0), -math.inf)


def multigammaln(input, p: int):
    """The log of the multivariate gamma function of dimension ``p``."""
    if p < 1:
        raise RuntimeError(f"multigammaln: p has to be greater than or equal to 1 (got {p})")
    x = input
    out = lgamma(x)
    for i in range(1, p):
        out = out + lgamma(x - i / 2)
    return out + p * (p - 1) / 4 * math.log(math.pi)
