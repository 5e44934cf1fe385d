"""Draws: shapes, support, repeatability under manual_seed, sample statistics, and the
gradients reparameterised draws carry (checked against torch's implicit-reparameterisation
identity ``dx/dtheta = -(dF/dtheta) / p(x)`` at the same draw)."""
import math

import numpy as np
import pytest

import plugrad
import plugrad.distributions as D

from .helpers import close, host, pos, real, simplex, spd, unit

torch = pytest.importorskip("torch")
TD = torch.distributions


def _t(a, device, grad=False):
    return plugrad.tensor(np.asarray(a, dtype=np.float64), dtype=plugrad.float64,
                          device=device, requires_grad=grad)


def _laws(device):
    t = lambda a: _t(a, device)  # noqa: E731
    low = real(3)  # high above low whatever the shared generator drew before
    return {
        "Normal": D.Normal(t(real(2, 3)), t(pos(2, 3))),
        "Uniform": D.Uniform(t(low), t(low + np.abs(real(3)) + 0.5)),
        "Laplace": D.Laplace(t(real(3)), t(pos(3))),
        "Cauchy": D.Cauchy(t(real(3)), t(pos(3))),
        "Exponential": D.Exponential(t(pos(3))),
        "Gamma": D.Gamma(t([0.3, 1.0, 7.0]), t(pos(3))),
        "Chi2": D.Chi2(t(pos(3))),
        "Beta": D.Beta(t(pos(3)), t(pos(3))),
        "Dirichlet": D.Dirichlet(t(pos(2, 4))),
        "StudentT": D.StudentT(t(pos(3, low=3)), t(real(3)), t(pos(3))),
        "LogNormal": D.LogNormal(t(real(3)), t(pos(3, high=1))),
        "Bernoulli": D.Bernoulli(probs=t(unit(3))),
        "Categorical": D.Categorical(logits=t(real(2, 5))),
        "OneHotCategorical": D.OneHotCategorical(probs=t(simplex(2, 4))),
        "Binomial": D.Binomial(t([3.0, 10.0, 0.0]), probs=t(unit(3))),
        "Poisson": D.Poisson(t([0.0, 0.7, 30.0])),
        "Geometric": D.Geometric(probs=t(unit(3))),
        "MultivariateNormal": D.MultivariateNormal(t(real(2, 3)), covariance_matrix=t(spd(3))),
        "Independent": D.Independent(D.Normal(t(real(2, 3)), t(pos(2, 3))), 2),
        "MixtureSameFamily": D.MixtureSameFamily(D.Categorical(logits=t(real(2, 3))),
                                                 D.Normal(t(real(2, 3)), t(pos(2, 3)))),
        "Tanh": D.TransformedDistribution(D.Normal(t(real(3)), t(pos(3))),
                                          [D.transforms.TanhTransform()]),
        "HalfNormal": D.HalfNormal(t(pos(3))),
        "HalfCauchy": D.HalfCauchy(t(pos(3))),
        "Gumbel": D.Gumbel(t(real(3)), t(pos(3))),
        "Pareto": D.Pareto(t(pos(3)), t(pos(3))),
        "Weibull": D.Weibull(t(pos(3)), t(pos(3))),
        "InverseGamma": D.InverseGamma(t(pos(3)), t(pos(3))),
        "FisherSnedecor": D.FisherSnedecor(t(pos(3)), t(pos(3))),
        "RelaxedBernoulli": D.RelaxedBernoulli(t(0.5), probs=t(unit(3))),
        "RelaxedOneHotCategorical": D.RelaxedOneHotCategorical(t(0.5), logits=t(real(2, 4))),
        "Multinomial": D.Multinomial(7, probs=t(simplex(2, 3))),
        "NegativeBinomial": D.NegativeBinomial(t(pos(3)), probs=t(unit(3))),
        "LowRankMultivariateNormal": D.LowRankMultivariateNormal(t(real(2, 4)), t(real(4, 2)),
                                                                 t(pos(4))),
        "ContinuousBernoulli": D.ContinuousBernoulli(probs=t([0.2, 0.5, 0.9])),
        "Kumaraswamy": D.Kumaraswamy(t(pos(3)), t(pos(3))),
        "LogisticNormal": D.LogisticNormal(t(real(2, 3)), t(pos(2, 3))),
        "GeneralizedPareto": D.GeneralizedPareto(t(real(3)), t(pos(3)), t([-0.4, 0.0, 0.3])),
        "Wishart": D.Wishart(t([3.0, 5.0]), covariance_matrix=t(spd(3))),
        "LKJCholesky": D.LKJCholesky(4, t([0.5, 2.0])),
        "VonMises": D.VonMises(t(real(3)), t([0.01, 2.0, 50.0])),
        "OneHotCategoricalStraightThrough": D.OneHotCategoricalStraightThrough(
            logits=t(real(2, 3))),
    }


@pytest.mark.parametrize("name", sorted(_laws("cpu")))
def test_shapes_support_and_seed(name, device):
    d = _laws(device)[name]
    expected = (4, 2) + tuple(d.batch_shape) + tuple(d.event_shape)
    plugrad.manual_seed(11)
    x = d.sample((4, 2))
    assert tuple(x.shape) == expected and not x.requires_grad
    assert x.device.type == device
    assert bool(d.support.check(x).all()), name
    assert tuple(d.sample().shape) == tuple(d.batch_shape) + tuple(d.event_shape)
    plugrad.manual_seed(11)
    np.testing.assert_array_equal(host(d.sample((4, 2))), host(x))
    torch_flag = getattr(TD, type(d).__name__).has_rsample
    if isinstance(torch_flag, bool):  # else a property of the instance (Independent)
        assert d.has_rsample == torch_flag
    if d.has_rsample:
        assert tuple(d.rsample((3,)).shape) == (3,) + expected[2:]
    assert tuple(d.log_prob(x).shape) == (4, 2) + tuple(d.batch_shape)


def _n(device, cpu=40000, ref=1500):
    return cpu if device == "cpu" else ref


# (law from device, mean, variance) of scalar-batch laws; moments are the law's own formulas,
# which test_vs_torch holds equal to torch's
STAT_LAWS = {
    "Normal": lambda t: D.Normal(t(1.5), t(0.7)),
    "Uniform": lambda t: D.Uniform(t(-1.0), t(3.0)),
    "Laplace": lambda t: D.Laplace(t(0.5), t(2.0)),
    "Exponential": lambda t: D.Exponential(t(1.7)),
    "Gamma-small": lambda t: D.Gamma(t(0.4), t(2.0)),
    "Gamma": lambda t: D.Gamma(t(3.0), t(0.5)),
    "Gamma-large": lambda t: D.Gamma(t(40.0), t(1.0)),
    "Chi2": lambda t: D.Chi2(t(5.0)),
    "Beta": lambda t: D.Beta(t(0.6), t(2.5)),
    "StudentT": lambda t: D.StudentT(t(9.0), t(1.0), t(2.0)),
    "LogNormal": lambda t: D.LogNormal(t(0.2), t(0.4)),
    "Bernoulli": lambda t: D.Bernoulli(probs=t(0.3)),
    "Binomial": lambda t: D.Binomial(t(12.0), probs=t(0.35)),
    "Binomial-chunks": lambda t: D.Binomial(t(300.0), probs=t(0.2)),
    "Poisson-small": lambda t: D.Poisson(t(3.5)),
    "Poisson-large": lambda t: D.Poisson(t(60.0)),
    "Geometric": lambda t: D.Geometric(probs=t(0.25)),
    "HalfNormal": lambda t: D.HalfNormal(t(1.5)),
    "Gumbel": lambda t: D.Gumbel(t(0.5), t(2.0)),
    "Weibull": lambda t: D.Weibull(t(2.0), t(1.5)),
    "Pareto": lambda t: D.Pareto(t(1.0), t(9.0)),
    "InverseGamma": lambda t: D.InverseGamma(t(9.0), t(2.0)),
    "FisherSnedecor": lambda t: D.FisherSnedecor(t(8.0), t(20.0)),
    "NegativeBinomial": lambda t: D.NegativeBinomial(t(4.0), probs=t(0.4)),
    "ContinuousBernoulli": lambda t: D.ContinuousBernoulli(probs=t(0.8)),
    "Kumaraswamy": lambda t: D.Kumaraswamy(t(2.0), t(3.0)),
    "GeneralizedPareto": lambda t: D.GeneralizedPareto(t(1.0), t(2.0), t(-0.2)),
    "GeneralizedPareto-exp": lambda t: D.GeneralizedPareto(t(0.0), t(1.5), t(0.0)),
}


@pytest.mark.parametrize("name", sorted(STAT_LAWS))
def test_sample_moments(name, device):
    d = STAT_LAWS[name](lambda a: _t(a, device))
    n = _n(device)
    x = host(d.sample((n,)))
    mean, var = float(d.mean), float(d.variance)
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / n), (x.mean(), mean)
    assert abs(x.var() - var) < 8 / math.sqrt(n) * var, (x.var(), var)


@pytest.mark.parametrize("name", ["Poisson-small", "Poisson-large", "Binomial"])
def test_discrete_frequencies_match_pmf(name, device):
    d = STAT_LAWS[name](lambda a: _t(a, device))
    n = _n(device)
    x = host(d.sample((n,)))
    ks = np.arange(int(x.max()) + 1, dtype=np.float64)
    pmf = np.exp(host(d.log_prob(_t(ks, device))))
    freq = np.bincount(x.astype(int), minlength=len(ks)) / n
    assert np.all(np.abs(freq - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / n) + 2 / n)


def test_categorical_mvn_dirichlet_mixture_statistics(device):
    n = _n(device, 30000, 1500)
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    c = host(D.Categorical(probs=_t(probs, device)).sample((n,))).astype(int)
    assert np.all(np.abs(np.bincount(c, minlength=4) / n - probs) < 5 * np.sqrt(probs / n))
    cov = spd(2)
    m = host(D.MultivariateNormal(_t([1.0, -2.0], device), covariance_matrix=_t(cov, device))
             .sample((n,)))
    assert np.all(np.abs(m.mean(0) - [1.0, -2.0]) < 5 * np.sqrt(np.diag(cov) / n))
    np.testing.assert_allclose(np.cov(m.T), cov, rtol=8 / math.sqrt(n), atol=8 / math.sqrt(n))
    alpha = np.array([0.5, 2.0, 4.0])
    dsamp = host(D.Dirichlet(_t(alpha, device)).sample((n,)))
    np.testing.assert_allclose(dsamp.sum(-1), 1.0, rtol=1e-12)
    assert np.all(np.abs(dsamp.mean(0) - alpha / alpha.sum()) < 5 * dsamp.std(0) / math.sqrt(n))
    mix = D.MixtureSameFamily(D.Categorical(probs=_t([0.3, 0.7], device)),
                              D.Normal(_t([-2.0, 3.0], device), _t([0.5, 1.0], device)))
    s = host(mix.sample((n,)))
    assert abs(s.mean() - float(mix.mean)) < 5 * math.sqrt(float(mix.variance) / n)
    lr = D.LowRankMultivariateNormal(_t([0.5, 0.0, -1.0], device), _t(real(3, 1), device),
                                     _t([0.5, 1.0, 2.0], device))
    lrs = host(lr.sample((n,)))
    lcov = host(lr.covariance_matrix)
    np.testing.assert_allclose(np.cov(lrs.T), lcov, rtol=8 / math.sqrt(n), atol=8 / math.sqrt(n))
    mn = host(D.Multinomial(9, probs=_t(probs, device)).sample((n,)))
    assert np.all(mn.sum(-1) == 9)
    assert np.all(np.abs(mn.mean(0) - 9 * probs) < 5 * np.sqrt(9 * probs * (1 - probs) / n))
    cauchy = host(D.Cauchy(_t(1.0, device), _t(2.0, device)).sample((n,)))
    assert abs(np.mean(np.abs(cauchy - 1.0) < 2.0) - 0.5) < 5 * math.sqrt(0.25 / n)


# laws whose draw is a monotone function of one uniform: the pathwise gradient of the draw
# must be torch's implicit one, -(dF/dtheta)/p(x), at the same x
IMPLICIT = {
    "Normal": (lambda d, a, b: d.Normal(a, b), (real(3), pos(3))),
    "Laplace": (lambda d, a, b: d.Laplace(a, b), (real(3), pos(3))),
    "Cauchy": (lambda d, a, b: d.Cauchy(a, b), (real(3), pos(3))),
    "Exponential": (lambda d, a: d.Exponential(a), (pos(3),)),
    "Uniform": (lambda d, a, b: d.Uniform(a, a + b), (real(3), pos(3))),
    "LogNormal": (lambda d, a, b: d.LogNormal(a, b), (real(3), pos(3))),
    "HalfNormal": (lambda d, b: d.HalfNormal(b), (pos(3),)),
    "Gumbel": (lambda d, a, b: d.Gumbel(a, b), (real(3), pos(3))),
    "Weibull": (lambda d, a, b: d.Weibull(a, b), (pos(3), pos(3))),
    "Pareto": (lambda d, a, b: d.Pareto(a, b), (pos(3), pos(3))),
    "ContinuousBernoulli": (lambda d, p: d.ContinuousBernoulli(probs=p),
                            (np.array([0.2, 0.7, 0.9]),)),
    "Kumaraswamy": (lambda d, a, b: d.Kumaraswamy(a, b), (pos(3), pos(3))),
    "Tanh": (lambda d, a, b: d.TransformedDistribution(
        d.Normal(a, b), [d.transforms.AffineTransform(0.2, 0.5), d.transforms.TanhTransform()]),
        (real(3), pos(3))),
}


@pytest.mark.parametrize("name", sorted(IMPLICIT))
def test_rsample_gradient_is_torchs_implicit_gradient(name, device):
    build, arrays = IMPLICIT[name]
    ours = [_t(a, device, grad=True) for a in arrays]
    x = build(D, *ours).rsample()
    x.sum().backward()
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    td = build(TD, *theirs)
    tx = torch.tensor(host(x))
    grads = torch.autograd.grad(td.cdf(tx).sum(), theirs)
    density = td.log_prob(tx).exp()
    for o, g in zip(ours, grads):
        close(o.grad, -g / density, rtol=1e-7, atol=1e-10)


def test_gamma_rsample_gradient(device):
    conc, rate = np.array([0.2, 1.0, 3.5, 50.0]), np.array([1.0, 2.0, 0.5, 1.5])
    c, r = _t(conc, device, grad=True), _t(rate, device, grad=True)
    x = D.Gamma(c, r).rsample()
    x.sum().backward()
    xs = host(x)
    close(r.grad, torch.tensor(-xs / rate), rtol=1e-10)  # x = standard_gamma(c) / rate
    tc, z = torch.tensor(conc), torch.tensor(xs * rate)
    h = 1e-6  # d standard_gamma / dc = -(dP/dc) / p, from torch's incomplete gamma
    dP = (torch.special.gammainc(tc + h, z) - torch.special.gammainc(tc - h, z)) / (2 * h)
    density = TD.Gamma(tc, 1.0).log_prob(z).exp()
    close(c.grad, -dP / density / torch.tensor(rate), rtol=1e-5)
    # torch's own approximation of the same derivative agrees to its accuracy (~1e-5)
    close(c.grad, torch._standard_gamma_grad(tc, z) / torch.tensor(rate), rtol=1e-3)


def test_mvn_rsample_gradient_is_pathwise(device):
    loc, L = _t(real(3), device, grad=True), _t(np.linalg.cholesky(spd(3)), device, grad=True)
    x = D.MultivariateNormal(loc, scale_tril=L).rsample((5,))
    w = real(5, 3)
    (x * _t(w, device)).sum().backward()
    eps = np.linalg.solve(host(L), (host(x) - host(loc)).T).T  # the standard normals drawn
    close(loc.grad, torch.tensor(w.sum(0)), rtol=1e-10)
    # as in torch, the whole matrix takes part in L @ eps, so its upper triangle has gradients
    close(L.grad, torch.tensor(w.T @ eps), rtol=1e-8, atol=1e-10)


# laws drawn from several random numbers (normalised gammas, normal over chi-square):
# the gradient of a Monte-Carlo mean estimates the gradient of the exact expectation
EXPECTATION = {
    "Beta": (lambda d, a, b: d.Beta(a, b), (np.array([0.7, 2.0]), np.array([1.5, 3.0])),
             lambda dist: dist.mean, lambda x: x),
    "Dirichlet": (lambda d, a: d.Dirichlet(a), (np.array([0.8, 2.0, 3.0]),),
                  lambda dist: dist.mean[0], lambda x: x[..., 0]),
    "StudentT": (lambda d, df, s: d.StudentT(df, 0.5, s), (np.array([6.0]), np.array([1.5])),
                 lambda dist: dist.variance + dist.mean ** 2, lambda x: x ** 2),
    "Chi2": (lambda d, df: d.Chi2(df), (np.array([0.8, 4.0]),), lambda dist: dist.variance,
             lambda x: (x - x.detach().mean(0)) ** 2),
    "Wishart": (lambda d, df, L: d.Wishart(df, scale_tril=L),
                (np.array(4.5), np.array([[1.2, 0.0], [0.4, 0.8]])),
                lambda dist: dist.mean, lambda x: x),
}


@pytest.mark.parametrize("name", sorted(EXPECTATION))
def test_rsample_gradient_estimates_expectation_gradient(name, device):
    build, arrays, exact, f = EXPECTATION[name]
    n = _n(device, 20000, 1000)
    ours = [_t(a, device, grad=True) for a in arrays]
    f(build(D, *ours).rsample((n,))).mean(0).sum().backward()
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    grads = torch.autograd.grad(exact(build(TD, *theirs)).sum(), theirs)
    for o, g in zip(ours, grads):
        np.testing.assert_allclose(host(o.grad), g.numpy(), rtol=12 / math.sqrt(n),
                                   atol=2 / math.sqrt(n))


def test_straight_through_gradient_is_the_probabilities(device):
    logits = real(2, 4)
    lg = _t(logits, device, grad=True)
    w = real(3, 2, 4)
    x = D.OneHotCategoricalStraightThrough(logits=lg).rsample((3,))
    assert bool(D.constraints.one_hot.check(x.detach()).all())
    (x * _t(w, device)).sum().backward()
    tl = torch.tensor(logits, requires_grad=True)
    (TD.OneHotCategorical(logits=tl).probs * torch.tensor(w).sum(0)).sum().backward()
    close(lg.grad, tl.grad, rtol=1e-10)


@pytest.mark.parametrize("kappa", [0.3, 4.0, 60.0])
def test_von_mises_circular_moments(kappa, device):
    n = _n(device, 40000, 2000)
    d = D.VonMises(_t(2.5, device), _t(kappa, device))
    x = host(d.sample((n,)))
    assert x.min() >= -math.pi and x.max() < math.pi
    resultant = np.mean(np.exp(1j * x))
    circ_var = float(d.variance)
    assert abs((1 - abs(resultant)) - circ_var) < 6 / math.sqrt(n) * max(circ_var, 0.05)
    assert abs(np.angle(resultant * np.exp(-2.5j))) < 6 / math.sqrt(n * max(1 - circ_var,
                                                                             1e-3)) * 2


@pytest.mark.parametrize("eta,dim", [(0.5, 3), (1.0, 3), (3.0, 3), (1.5, 4)])
def test_lkj_correlations_have_the_lkj_marginal(eta, dim, device):
    """Each correlation of LKJ(dim, eta) is 2 Beta(b, b) - 1 with b = eta - 1 + dim/2 (every
    pair alike; torch 2.13's draws miss this beyond the second row, see lkj_cholesky.py)."""
    n = _n(device, 20000, 1000)
    L = host(D.LKJCholesky(dim, _t(eta, device)).sample((n,)))
    corr = L @ np.swapaxes(L, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, rtol=1e-10)
    b = eta - 1 + dim / 2
    var = 4 * b * b / ((2 * b) ** 2 * (2 * b + 1))  # variance of 2 Beta(b, b) - 1
    for i, j in [(i, j) for i in range(1, dim) for j in range(i)]:
        r = corr[:, i, j]
        assert abs(r.mean()) < 5 * math.sqrt(var / n)
        assert abs(r.var() - var) < 8 / math.sqrt(n) * var
