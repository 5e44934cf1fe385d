"""MultivariateNormal, parameterised by covariance, precision or a lower Cholesky factor.

Everything goes through the (unbroadcast) Cholesky factor ``L``: draws are ``loc + L eps``,
densities solve ``L z = x - loc`` (triangular solve), so gradients reach every parameter.
"""
from __future__ import annotations

import math

import plugrad
from plugrad.distributions import constraints
from plugrad.distributions.distribution import Distribution
from plugrad.distributions.utils import broadcast_shapes, lazy_property

__all__ = ["MultivariateNormal"]

_Size = plugrad.Size


def _batch_mv(bmat, bvec):
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """``x^T (L L^T)^-1 x`` over broadcast batches."""
    z = plugrad.linalg.solve_triangular(bL, bx.unsqueeze(-1), upper=False).squeeze(-1)
    return z.pow(2).sum(-1)


def _eye_like(m):
    return plugrad.eye(m.shape[-1], dtype=m.dtype, device=m.device)


def _precision_to_scale_tril(P):
    """Lower ``L`` with ``L L^T = P^-1``: the Cholesky factor of the flipped precision."""
    Lf = plugrad.linalg.cholesky(plugrad.flip(P, (-2, -1)))
    L_inv = plugrad.transpose(plugrad.flip(Lf, (-2, -1)), -2, -1)
    Id = _eye_like(P)
    return plugrad.linalg.solve_triangular(L_inv, Id, upper=False)


def _half_log_det(L):
    return L.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _one_matrix(covariance_matrix, precision_matrix, scale_tril):
    """The one matrix parameter given, as ``(name, matrix)``."""
    if (covariance_matrix is not None) + (scale_tril is not None) + (
            precision_matrix is not None) != 1:
        raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                         "scale_tril may be specified.")
    given = {"scale_tril": scale_tril, "covariance_matrix": covariance_matrix,
             "precision_matrix": precision_matrix}
    return next((k, v) for k, v in given.items() if v is not None)


def _scale_tril_of(name, matrix):
    """The lower Cholesky factor ``L`` of the matrix parameter given: itself, of ``L L^T``,
    or of the inverse of a precision matrix."""
    if name == "scale_tril":
        return matrix
    if name == "covariance_matrix":
        return plugrad.linalg.cholesky(matrix)
    return _precision_to_scale_tril(matrix)


class _FromScaleTril:
    """MultivariateNormal's and Wishart's three matrix views of the factor they keep
    (``_unbroadcasted_scale_tril``), each at ``_matrix_shape()``, made on first use."""

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        L_inv = plugrad.linalg.solve_triangular(L, _eye_like(L), upper=False)
        return (L_inv.mT @ L_inv).expand(self._matrix_shape())

def _expand_covariances(self, new, cov_shape):
    """The matrix parameters (of the three, those given or already computed) viewed at
    ``cov_shape``: shared by MultivariateNormal and Wishart."""
    for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
        if name in self.__dict__:
            setattr(new, name, self.__dict__[name].expand(cov_shape))


class MultivariateNormal(_FromScaleTril, Distribution):
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        name, matrix = _one_matrix(covariance_matrix, precision_matrix, scale_tril)
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(name, matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = _Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        _expand_covariances(self, new, loc_shape + tuple(self.event_shape))
        return self._expanded(new, batch_shape)

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=_Size()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = plugrad.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
