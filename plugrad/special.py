"""``plugrad.special``: PyTorch's ``torch.special`` names for the math ops (most are aliases of
``plugrad.*`` functions; ``xlog1py``, ``ndtr``, ``entr`` and ``multigammaln`` are composed
here or live in :mod:`plugrad.core.ops.transcendental`)."""
from __future__ import annotations

import math

from plugrad.core.api import (digamma, erf, erfc, erfinv, exp2, expm1, lgamma, log1p,
                              log_softmax, logit, logsumexp, polygamma, round, sigmoid, sinc,
                              softmax, xlogy)
from plugrad.core.ops.math_more import bessel_i as _bessel_i
from plugrad.core.ops.transcendental import xlog1py

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln",
           "log1p", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "polygamma",
           "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "i0", "i0e", "i1", "i1e",
           "erfcx", "log_ndtr", "ndtri"]

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


# ---------------------------------------------------------------------- more (issue 15, round 2)
def i0(input):
    """The modified Bessel function of the first kind of order 0 (``plugrad.i0``)."""
    return _bessel_i(input, 0, False)


def i0e(input):
    """``exp(-|x|) i0(x)``, computed without overflow for large ``|x|``."""
    return _bessel_i(input, 0, True)


def i1(input):
    """The modified Bessel function of the first kind of order 1."""
    return _bessel_i(input, 1, False)


def i1e(input):
    """``exp(-|x|) i1(x)``, computed without overflow for large ``|x|``."""
    return _bessel_i(input, 1, True)


def erfcx(input):
    """The scaled complementary error function ``exp(x**2) erfc(x)``: direct up to 25, the
    asymptotic series above (where ``erfc`` underflows)."""
    x = input if input.dtype.is_floating_point else input.float()
    big = x > 25.0
    xs = x.where(~big, 0.0)
    direct = (xs * xs).exp() * erfc(xs)
    xl = x.where(big, 26.0)
    z = 1.0 / (2.0 * xl * xl)
    series = 1.0 - z + 3.0 * z * z - 15.0 * z ** 3 + 105.0 * z ** 4
    return direct.where(~big, series / (xl * math.sqrt(math.pi)))


def log_ndtr(input):
    """``log(ndtr(x))``: from ``erfc`` (accurate in the lower tail) down to -20, the
    asymptotic expansion below, ``log1p(-ndtr(-x))`` above 5."""
    x = input if input.dtype.is_floating_point else input.float()
    low, high = x < -20.0, x > 5.0
    mid = x.where(~(low | high), 0.0)
    out = (erfc(mid * -math.sqrt(0.5)) * 0.5).log()
    xh = x.where(high, 6.0)
    upper = (-(erfc(xh * math.sqrt(0.5)) * 0.5)).log1p()
    xl = x.where(low, -21.0)
    r = 1.0 / (xl * xl)
    lower = -0.5 * xl * xl - (-xl).log() - 0.5 * math.log(2 * math.pi) + \
        (1.0 - r + 3.0 * r * r - 15.0 * r ** 3).log()
    return out.where(~high, upper).where(~low, lower)


def ndtri(input):
    """The inverse of the standard normal CDF, ``sqrt(2) erfinv(2p - 1)`` (0 and 1 give
    ``-inf`` and ``inf``)."""
    p = input if input.dtype.is_floating_point else input.float()
    return erfinv(p * 2.0 - 1.0) * math.sqrt(2.0)
