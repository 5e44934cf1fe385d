"""VonMises, the circular normal: density ``exp(k cos(x - loc)) / (2 pi I0(k))`` on
``[-pi, pi)``. Bessel functions use Abramowitz and Stegun's polynomial approximations
(9.8.1-9.8.4, as PyTorch does, so values agree); draws use Best and Fisher's rejection
sampler as a vectorised loop in float64."""
from __future__ import annotations

import math
import plugrad
from plugrad.distributions import constraints
from plugrad.distributions.distribution import Distribution
from plugrad.distributions.utils import broadcast_all

__all__ = ["VonMises"]

_Size = plugrad.Size

# A&S 9.8.1-9.8.4: I0, I1 for x < 3.75 in t = (x/3.75)**2, and sqrt(x) e**-x I for larger
# x in t = 3.75/x
_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
          [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411])
_LARGE = ([0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
           0.02635537, -0.01647633, 0.00392377],
          [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
           -0.02895312, 0.01787654, -0.00420059])


def _horner(y, coef):
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_bessel_i(x, order=0):
    """``log I_order(x)`` for ``x > 0`` and order 0 or 1."""
    if order not in (0, 1):
        raise ValueError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) ** 2
    small = _horner(y, _SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _horner(3.75 / x, _LARGE[order]).log()
    return plugrad.where(x < 3.75, small, large)


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        super().__init__(batch_shape, _Size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, ("loc", "concentration"), batch_shape, _instance)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * (value - self.loc).cos()
        return log_prob - math.log(2 * math.pi) - _log_bessel_i(self.concentration, order=0)

    def _proposal_r(self):
        kappa = self.concentration.detach().to(plugrad.float64)
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho ** 2) / (2 * rho)
        return plugrad.where(kappa < 1e-5, 1 / kappa + kappa, r)  # its limit for small kappa

    def sample(self, sample_shape=_Size()):
        shape = tuple(self._extended_shape(sample_shape))
        dev = self.loc.device
        with plugrad.no_grad():
            loc = self.loc.to(plugrad.float64).expand(shape)
            kappa = self.concentration.to(plugrad.float64).expand(shape)
            r = self._proposal_r().expand(shape)
            x = plugrad.zeros(shape, dtype=plugrad.float64, device=dev)
            done = plugrad.zeros(shape, dtype=plugrad.bool, device=dev)
            while not bool(done.all()):
                u = plugrad.rand((3,) + shape, dtype=plugrad.float64, device=dev)
                u1, u2, u3 = u[0], u[1], u[2]
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                angle = (u3 - 0.5).sign() * f.clamp(min=-1.0, max=1.0).acos()
                x = plugrad.where(accept & ~done, angle, x)
                done = done | accept
            x = (x + math.pi + loc) % (2 * math.pi) - math.pi
            return x.to(self.loc.dtype)

    @property
    def mean(self):
        """The circular mean: ``loc``."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        """The circular variance ``1 - I1(k) / I0(k)``."""
        return 1 - (_log_bessel_i(self.concentration, order=1)
                    - _log_bessel_i(self.concentration, order=0)).exp()

