"""``torch.distributions`` for plugrad: probability laws built from plugrad's tensor ops.

Names, signatures, defaults, validation and semantics follow PyTorch 2.13. Every density,
entropy and reparameterised draw is composed of public differentiable ops, so gradients and
every backend come for free; draws use plugrad's random stream (``manual_seed`` repeats them).
"""
from plugrad.distributions import constraints, transforms
from plugrad.distributions.bounded import ContinuousBernoulli, Kumaraswamy
from plugrad.distributions.constraint_registry import biject_to, transform_to
from plugrad.distributions.continuous import Cauchy, Exponential, Laplace, Normal, Uniform
from plugrad.distributions.counts import Binomial, Geometric, Poisson
from plugrad.distributions.discrete import Bernoulli, Categorical, OneHotCategorical
from plugrad.distributions.distribution import Distribution, ExponentialFamily
from plugrad.distributions.generalized_pareto import GeneralizedPareto
from plugrad.distributions.gamma import Beta, Chi2, Dirichlet, Gamma, StudentT
from plugrad.distributions.independent import Independent, MixtureSameFamily
from plugrad.distributions.kl import kl_divergence, register_kl
from plugrad.distributions.lkj_cholesky import LKJCholesky
from plugrad.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from plugrad.distributions.more_laws import (FisherSnedecor, Gumbel, HalfCauchy, HalfNormal,
                                             InverseGamma, LogisticNormal, Pareto, Weibull)
from plugrad.distributions.multinomial import Multinomial, NegativeBinomial
from plugrad.distributions.multivariate_normal import MultivariateNormal
from plugrad.distributions.relaxed import (ExpRelaxedCategorical, LogitRelaxedBernoulli,
                                           OneHotCategoricalStraightThrough, RelaxedBernoulli,
                                           RelaxedOneHotCategorical)
from plugrad.distributions.transformed_distribution import LogNormal, TransformedDistribution
from plugrad.distributions.von_mises import VonMises
from plugrad.distributions.wishart import Wishart
from plugrad.distributions.transforms import (
    AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform,
    CumulativeDistributionTransform, StackTransform,
    ExpTransform, IndependentTransform, LowerCholeskyTransform, PositiveDefiniteTransform,
    PowerTransform, ReshapeTransform, SigmoidTransform, SoftmaxTransform, SoftplusTransform,
    StickBreakingTransform, TanhTransform, Transform, identity_transform)

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet",
           "Distribution", "Exponential", "ExponentialFamily", "Gamma", "Geometric",
           "Independent", "Laplace", "LogNormal", "MixtureSameFamily", "MultivariateNormal",
           "Normal", "OneHotCategorical", "Poisson", "StudentT", "TransformedDistribution",
           "Uniform", "kl_divergence", "register_kl", "AbsTransform", "AffineTransform",
           "ComposeTransform", "ExpTransform", "PowerTransform", "SigmoidTransform",
           "SoftplusTransform", "TanhTransform", "Transform", "identity_transform",
           "constraints", "transforms", "biject_to", "transform_to", "FisherSnedecor", "Gumbel",
           "HalfCauchy", "HalfNormal", "InverseGamma", "LowRankMultivariateNormal",
           "Multinomial", "NegativeBinomial", "OneHotCategoricalStraightThrough", "Pareto",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "Weibull", "LogisticNormal",
           "CumulativeDistributionTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "ReshapeTransform", "SoftmaxTransform",
           "StickBreakingTransform", "ContinuousBernoulli", "Kumaraswamy", "VonMises",
           "GeneralizedPareto", "Wishart", "LKJCholesky", "CatTransform",
           "CorrCholeskyTransform", "StackTransform"]
