"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): the law of ``X^T X`` for
``df`` Gaussian rows. Draws by Bartlett's decomposition (chi-square diagonal, normal lower
part), so they reparameterise through the gamma sampler's implicit gradient."""
from __future__ import annotations

import math
from numbers import Number

import plugrad
from plugrad.distributions import constraints
from plugrad.distributions.distribution import ExponentialFamily
from plugrad.distributions.gamma import Chi2
from plugrad.distributions.multivariate_normal import (_FromScaleTril, _expand_covariances,
                                                       _one_matrix, _scale_tril_of)
from plugrad.distributions.utils import broadcast_shapes

__all__ = ["Wishart"]

_Size = plugrad.Size
_LOG_2 = math.log(2)


def _mvlgamma(x, p):
    """``log`` of the multivariate gamma function ``Gamma_p(x)``."""
    half = plugrad.arange(p, dtype=x.dtype, device=x.device) / 2
    return p * (p - 1) / 4 * math.log(math.pi) + (x.unsqueeze(-1) - half).lgamma().sum(-1)


def _mvdigamma(x, p):
    half = plugrad.arange(p, dtype=x.dtype, device=x.device) / 2
    return (x.unsqueeze(-1) - half).digamma().sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=plugrad.finfo(x.dtype).eps)


class Wishart(_FromScaleTril, ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        name, param = _one_matrix(covariance_matrix, precision_matrix, scale_tril)
        if param.dim() < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            df = plugrad.tensor(float(df), dtype=param.dtype, device=param.device)
        batch_shape = broadcast_shapes(param.shape[:-2], df.shape)
        event_shape = _Size(param.shape[-2:])
        p = event_shape[-1]
        if bool((df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{p - 1}.")
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        self.df = df.expand(tuple(batch_shape))
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._unbroadcasted_scale_tril = _scale_tril_of(name, param)
        # chi-square degrees df, df - 1, ..., df - p + 1 of Bartlett's diagonal
        steps = plugrad.arange(p, dtype=self.df.dtype, device=self.df.device)
        self._dist_chi2 = Chi2(df=self.df.unsqueeze(-1) - steps.expand(tuple(batch_shape)
                                                                        + (-1,)))

    @property
    def arg_constraints(self):
        p = self._event_shape[-1]
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(p - 1)}

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = _Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        _expand_covariances(self, new, cov_shape)
        p = self.event_shape[-1]
        steps = plugrad.arange(p, dtype=new.df.dtype, device=new.df.device)
        new._dist_chi2 = Chi2(df=new.df.unsqueeze(-1) - steps.expand(tuple(batch_shape)
                                                                      + (-1,)))
        return self._expanded(new, batch_shape)

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    def _df_matrix(self):
        return self.df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = plugrad.where(factor <= 0, plugrad.full_like(factor, math.nan), factor)
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def rsample(self, sample_shape=_Size()):
        sample_shape = _Size(sample_shape)
        shape = tuple(self._extended_shape(sample_shape))
        p = self._event_shape[-1]
        diagonal = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt())
        rows, cols = plugrad.tril_indices(p, p, offset=-1, device=self.df.device)
        lower = plugrad.zeros(shape, dtype=self.df.dtype, device=self.df.device)
        lower[..., rows, cols] = plugrad.randn(shape[:-2] + (p * (p - 1) // 2,),
                                               dtype=self.df.dtype, device=self.df.device)
        noise = plugrad.diag_embed(diagonal) + lower
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        half_log_det = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # tr((L L^T)^-1 X) through the whole of L, as PyTorch's cholesky_solve
        # differentiates it (the gradient reaches L's structurally zero upper triangle too)
        z = plugrad.linalg.solve(L @ L.mT, value)
        trace = z.diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + half_log_det) - _mvlgamma(nu / 2, p)
                + (nu - (p + 1)) / 2 * plugrad.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det) + _mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)
