"""Densities, moments, cdf/icdf and their gradients against torch.distributions (float64)."""
import math

import numpy as np
import pytest

import plugrad
import plugrad.distributions as D

from .helpers import RNG, close, host, pos, real, simplex, spd, to_plugrad, to_torch, unit, \
    value_pair

torch = pytest.importorskip("torch")
TD = torch.distributions

S = (2, 3)  # batch shape of most cases: small, so the pure-Python backend stays quick
MOMENTS = ("mean", "variance", "stddev", "mode")


def _tf(d):
    return [d.transforms.AffineTransform(0.5, 2.0), d.transforms.TanhTransform()]


# name -> (build(D, **params), params, log_prob value, extra methods)
CASES = {
    "Normal": (lambda d, loc, scale: d.Normal(loc, scale), dict(loc=real(*S), scale=pos(*S)),
               real(4, *S), MOMENTS + ("entropy", "cdf", "icdf")),
    "Normal-scalar": (lambda d, loc: d.Normal(loc, 2.0), dict(loc=real()), real(5),
                      MOMENTS + ("entropy", "cdf")),
    "Uniform": (lambda d, low, width: d.Uniform(low, low + width),
                dict(low=np.zeros(S), width=np.full(S, 2.0)), pos(*S, low=0.1, high=1.9),
                ("mean", "variance", "stddev", "entropy", "cdf", "icdf")),
    "Laplace": (lambda d, loc, scale: d.Laplace(loc, scale), dict(loc=real(*S), scale=pos(*S)),
                real(4, *S), MOMENTS + ("entropy", "cdf", "icdf")),
    "Cauchy": (lambda d, loc, scale: d.Cauchy(loc, scale), dict(loc=real(*S), scale=pos(*S)),
               real(4, *S), MOMENTS + ("entropy", "cdf", "icdf")),
    "Exponential": (lambda d, rate: d.Exponential(rate), dict(rate=pos(*S)), pos(4, *S),
                    MOMENTS + ("entropy", "cdf", "icdf")),
    "Gamma": (lambda d, c, r: d.Gamma(c, r), dict(c=pos(*S, low=0.3), r=pos(*S)),
              pos(4, *S, low=0.05), MOMENTS + ("entropy",)),
    "Chi2": (lambda d, df: d.Chi2(df), dict(df=pos(*S, high=6)), pos(4, *S),
             MOMENTS + ("entropy",)),
    "Beta": (lambda d, a, b: d.Beta(a, b), dict(a=pos(*S, low=1.1), b=pos(*S, low=1.1)),
             unit(4, *S), MOMENTS + ("entropy",)),
    "Dirichlet": (lambda d, c: d.Dirichlet(c), dict(c=pos(2, 4, low=1.1)), simplex(3, 2, 4),
                  MOMENTS + ("entropy",)),
    "StudentT": (lambda d, df, loc, scale: d.StudentT(df, loc, scale),
                 dict(df=pos(*S, low=2.5, high=8), loc=real(*S), scale=pos(*S)), real(4, *S),
                 MOMENTS + ("entropy",)),
    "LogNormal": (lambda d, loc, scale: d.LogNormal(loc, scale),
                  dict(loc=real(*S), scale=pos(*S, high=1.5)), pos(4, *S),
                  MOMENTS + ("entropy", "cdf", "icdf")),
    "Bernoulli-probs": (lambda d, p: d.Bernoulli(probs=p), dict(p=unit(*S)),
                        np.array([0.0, 1.0, 1.0, 0.0])[:, None, None] * np.ones(S),
                        ("mean", "variance", "entropy")),
    "Bernoulli-logits": (lambda d, lg: d.Bernoulli(logits=lg), dict(lg=real(*S)),
                         np.ones((3,) + S), ("mean", "variance", "entropy")),
    "Categorical-probs": (lambda d, p: d.Categorical(probs=p), dict(p=simplex(2, 5)),
                          np.array([[0, 4], [3, 1], [2, 2]]), ("mode", "entropy")),
    "Categorical-logits": (lambda d, lg: d.Categorical(logits=lg), dict(lg=real(2, 5)),
                           np.array([[0, 4], [3, 1]]), ("mode", "entropy")),
    "OneHotCategorical": (lambda d, lg: d.OneHotCategorical(logits=lg), dict(lg=real(2, 4)),
                          np.eye(4)[[[1, 3], [0, 0]]], ("mean", "variance", "mode", "entropy")),
    "Binomial": (lambda d, n, p: d.Binomial(n, probs=p), dict(n=np.full(S, 7.0), p=unit(*S)),
                 np.array([0.0, 3.0, 7.0])[:, None, None] * np.ones(S),
                 ("mean", "variance", "mode", "entropy")),
    "Binomial-logits": (lambda d, lg: d.Binomial(5, logits=lg), dict(lg=real(*S)),
                        np.full((2,) + S, 2.0), ("mean", "variance", "mode", "entropy")),
    "Poisson": (lambda d, rate: d.Poisson(rate), dict(rate=pos(*S, high=8)),
                np.array([0.0, 2.0, 9.0])[:, None, None] * np.ones(S),
                ("mean", "variance", "mode")),
    "Geometric": (lambda d, p: d.Geometric(probs=p), dict(p=unit(*S)),
                  np.array([0.0, 1.0, 6.0])[:, None, None] * np.ones(S),
                  ("mean", "variance", "mode", "entropy")),
    "MVN-cov": (lambda d, loc, cov: d.MultivariateNormal(loc, covariance_matrix=cov),
                dict(loc=real(2, 3), cov=spd(3)), real(4, 2, 3),
                ("mean", "variance", "mode", "entropy", "covariance_matrix",
                 "precision_matrix", "scale_tril")),
    "MVN-tril": (lambda d, loc, L: d.MultivariateNormal(loc, scale_tril=L),
                 dict(loc=real(3), L=np.linalg.cholesky(spd(3, (2,)))), real(4, 2, 3),
                 ("mean", "variance", "entropy", "covariance_matrix")),
    "MVN-precision": (lambda d, loc, P: d.MultivariateNormal(loc, precision_matrix=P),
                      dict(loc=real(3), P=spd(3)), real(2, 3),
                      ("variance", "entropy", "covariance_matrix", "scale_tril")),
    "Independent": (lambda d, loc, scale: d.Independent(d.Normal(loc, scale), 1),
                    dict(loc=real(*S), scale=pos(*S)), real(4, *S),
                    ("mean", "variance", "entropy")),
    "Mixture": (lambda d, lg, loc, scale: d.MixtureSameFamily(
                    d.Categorical(logits=lg), d.Normal(loc, scale)),
                dict(lg=real(2, 3), loc=real(2, 3), scale=pos(2, 3)), real(4, 2),
                ("mean", "variance", "cdf")),
    "Mixture-mvn": (lambda d, lg, loc, L: d.MixtureSameFamily(
                        d.Categorical(logits=lg), d.MultivariateNormal(loc, scale_tril=L)),
                    dict(lg=real(3), loc=real(3, 2), L=np.linalg.cholesky(spd(2, (3,)))),
                    real(5, 2), ("mean", "variance")),
    "Transformed": (lambda d, loc, scale: d.TransformedDistribution(d.Normal(loc, scale),
                                                                    _tf(d)),
                    dict(loc=real(*S), scale=pos(*S)), RNG.uniform(-0.9, 0.9, (4,) + S),
                    ("cdf", "icdf")),
    "Sigmoid": (lambda d, loc, scale: d.TransformedDistribution(
                    d.Normal(loc, scale), d.transforms.SigmoidTransform()),
                dict(loc=real(*S), scale=pos(*S)), unit(4, *S), ("cdf",)),
    "HalfNormal": (lambda d, scale: d.HalfNormal(scale), dict(scale=pos(*S)), pos(4, *S),
                   MOMENTS + ("entropy", "cdf", "icdf")),
    "HalfCauchy": (lambda d, scale: d.HalfCauchy(scale), dict(scale=pos(*S)), pos(4, *S),
                   MOMENTS + ("entropy", "cdf", "icdf")),
    "Gumbel": (lambda d, loc, scale: d.Gumbel(loc, scale), dict(loc=real(*S), scale=pos(*S)),
               real(4, *S), MOMENTS + ("entropy", "cdf", "icdf")),
    "Pareto": (lambda d, scale, alpha: d.Pareto(scale, alpha),
               dict(scale=pos(*S, high=1.0), alpha=pos(*S, low=2.5)), pos(4, *S, low=1.1, high=4),
               MOMENTS + ("entropy", "cdf", "icdf")),
    "Weibull": (lambda d, scale, c: d.Weibull(scale, c), dict(scale=pos(*S), c=pos(*S, low=1.1)),
                pos(4, *S), MOMENTS + ("entropy", "cdf", "icdf")),
    "InverseGamma": (lambda d, c, r: d.InverseGamma(c, r), dict(c=pos(*S, low=2.1, high=4),
                                                                 r=pos(*S)),
                     pos(4, *S), MOMENTS + ("entropy",)),
    "FisherSnedecor": (lambda d, a, b: d.FisherSnedecor(a, b),
                       dict(a=pos(*S, low=2.5, high=8), b=pos(*S, low=4.5, high=9)), pos(4, *S),
                       MOMENTS),
    "RelaxedBernoulli": (lambda d, t, lg: d.RelaxedBernoulli(t, logits=lg),
                         dict(t=np.array(0.7), lg=real(*S)), unit(4, *S), ()),
    "RelaxedOneHotCategorical": (lambda d, t, lg: d.RelaxedOneHotCategorical(t, logits=lg),
                                 dict(t=np.array(0.5), lg=real(2, 4)), simplex(3, 2, 4), ()),
    "Multinomial": (lambda d, p: d.Multinomial(6, probs=p), dict(p=simplex(2, 3)),
                    np.array([[[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]], [[0.0, 0.0, 6.0],
                                                                  [2.0, 2.0, 2.0]]]),
                    ("mean", "variance", "entropy")),
    "NegativeBinomial": (lambda d, n, p: d.NegativeBinomial(n, probs=p),
                         dict(n=pos(*S, high=6), p=unit(*S)),
                         np.array([0.0, 3.0, 11.0])[:, None, None] * np.ones(S),
                         ("mean", "variance", "mode")),
    "LowRankMVN": (lambda d, loc, W, D_: d.LowRankMultivariateNormal(loc, W, D_),
                   dict(loc=real(2, 4), W=real(4, 2), D_=pos(4)), real(3, 2, 4),
                   ("mean", "variance", "entropy", "covariance_matrix", "precision_matrix",
                    "scale_tril")),
    "LogisticNormal": (lambda d, loc, scale: d.LogisticNormal(loc, scale),
                       dict(loc=real(2, 3), scale=pos(2, 3)), simplex(3, 2, 4), ()),
    "ContinuousBernoulli": (lambda d, p: d.ContinuousBernoulli(probs=p),
                            dict(p=np.array([[0.1, 0.4995, 0.5], [0.7, 0.95, 0.3]])),
                            unit(4, *S), ("mean", "variance", "stddev", "entropy", "cdf",
                                          "icdf")),
    "ContinuousBernoulli-logits": (lambda d, lg: d.ContinuousBernoulli(logits=lg),
                                   dict(lg=real(*S)), unit(4, *S),
                                   ("mean", "variance", "entropy", "cdf", "icdf")),
    # torch 2.13's Kumaraswamy.mode is nan everywhere; test_kumaraswamy_mode checks ours
    "Kumaraswamy": (lambda d, a, b: d.Kumaraswamy(a, b), dict(a=pos(*S), b=pos(*S)),
                    unit(4, *S), ("mean", "variance", "entropy", "cdf", "icdf")),
    "VonMises": (lambda d, loc, k: d.VonMises(loc, k),
                 dict(loc=real(*S), k=np.array([[1e-3, 0.5, 3.7], [3.8, 20.0, 300.0]])),
                 RNG.uniform(-3.1, 3.1, (4,) + S), ("mean", "mode", "variance")),
    "GeneralizedPareto": (lambda d, loc, scale, xi: d.GeneralizedPareto(loc, scale, xi),
                          dict(loc=real(*S), scale=pos(*S),
                               xi=np.array([[-0.3, 0.0, 0.2], [0.4, -1.0, 0.7]])),
                          None, MOMENTS + ("entropy", "cdf", "icdf")),
    "Wishart-cov": (lambda d, df, cov: d.Wishart(df, covariance_matrix=cov),
                    dict(df=np.array([3.5, 6.0]), cov=spd(3)), np.stack([spd(3) for _ in range(2)]),
                    ("mean", "mode", "variance", "entropy")),
    "Wishart-tril": (lambda d, df, L: d.Wishart(df, scale_tril=L),
                     dict(df=np.array(4.0), L=np.linalg.cholesky(spd(2, (2,)))),
                     np.stack([spd(2) for _ in range(3)])[:, None], ("mean", "variance",
                                                                     "entropy")),
    "LKJCholesky": (lambda d, eta: d.LKJCholesky(3, eta), dict(eta=np.array([0.5, 1.0, 4.0])),
                    None, ()),
    "OneHotStraightThrough": (lambda d, lg: d.OneHotCategoricalStraightThrough(logits=lg),
                              dict(lg=real(2, 4)), np.eye(4)[[[1, 3], [0, 0]]],
                              ("mean", "variance", "entropy")),
}


_gpd = CASES["GeneralizedPareto"]
_gpd_support_value = _gpd[1]["loc"] + _gpd[1]["scale"] * np.array([[0.5, 1.0, 2.0],
                                                                    [0.3, 0.4, 3.0]])
CASES["GeneralizedPareto"] = (_gpd[0], _gpd[1], _gpd_support_value[None].repeat(4, 0), _gpd[3])

# correlation Cholesky factors for LKJCholesky's log_prob: torch's own draws (any will do)
torch.manual_seed(0)
CASES["LKJCholesky"] = CASES["LKJCholesky"][:2] + (
    TD.LKJCholesky(3, torch.ones(3, dtype=torch.float64)).sample((2,)).numpy(), ())

# torch computes Multinomial.entropy's lgamma(n + 1) on an int64 tensor, so in float32
LOOSE = {("Multinomial", "entropy"): 1e-6}


def _method(dist, name, value, unit_value):
    if name in ("cdf",):
        return dist.cdf(value)
    if name == "icdf":
        return dist.icdf(unit_value)
    if name in ("entropy",):
        return dist.entropy()
    return getattr(dist, name)


@pytest.fixture
def torch_float64():
    """torch's own constants in float64 too (its GeneralizedPareto.log_prob builds a
    default-dtype 0 and refuses float64 parameters otherwise)."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name, device, torch_float64):
    build, params, value, methods = CASES[name]
    ours_p, theirs_p = to_plugrad(params, device), to_torch(params)
    d, td = build(D, **ours_p), build(TD, **theirs_p)
    assert tuple(d.batch_shape) == tuple(td.batch_shape)
    assert tuple(d.event_shape) == tuple(td.event_shape)
    v, tv = value_pair(value, device)
    lp, tlp = d.log_prob(v), td.log_prob(tv)
    close(lp, tlp, msg="log_prob")
    loss, tloss = lp.sum(), tlp.sum()
    u = np.random.default_rng(1).uniform(0.05, 0.95, tuple(tv.shape))
    uo, ut = value_pair(u, device)
    for m in methods:
        a, ta = _method(d, m, v, uo), _method(td, m, tv, ut)
        assert tuple(a.shape) == tuple(ta.shape), m
        close(a, ta, rtol=LOOSE.get((name, m), 1e-9), msg=m)
        if a.dtype.is_floating_point and ta.requires_grad and bool(torch.isfinite(ta).all()):
            loss, tloss = loss + a.sum(), tloss + ta.sum()
    loss.backward()
    tloss.backward()
    for k in params:
        if theirs_p[k].grad is not None:
            assert ours_p[k].grad is not None, k
            close(ours_p[k].grad, theirs_p[k].grad, rtol=1e-7, atol=1e-9, msg=f"grad {k}")


@pytest.mark.parametrize("name", ["Normal", "Gamma", "Beta", "Dirichlet", "Categorical-logits",
                                  "MVN-tril", "Independent", "Bernoulli-probs", "Mixture",
                                  "Weibull", "Pareto", "Gumbel", "HalfNormal", "LowRankMVN",
                                  "Multinomial", "RelaxedOneHotCategorical", "LogNormal",
                                  "LogisticNormal"])
def test_expand_matches_torch(name, device):
    build, params, value, _ = CASES[name]
    d, td = build(D, **to_plugrad(params, device)), build(TD, **to_torch(params))
    shape = (2,) + tuple(td.batch_shape)
    e, te = d.expand(shape), td.expand(shape)
    assert tuple(e.batch_shape) == tuple(te.batch_shape) == shape
    v, tv = value_pair(value[:1], device)
    close(e.log_prob(v), te.log_prob(tv))


@pytest.mark.parametrize("name", ["Bernoulli-probs", "Categorical-probs", "OneHotCategorical",
                                  "Binomial"])
def test_enumerate_support(name, device):
    build, params, _, _ = CASES[name]
    d, td = build(D, **to_plugrad(params, device)), build(TD, **to_torch(params))
    for expand in (True, False):
        close(d.enumerate_support(expand), td.enumerate_support(expand))


KL_PAIRS = {
    "Normal": (lambda d, a, b, c, e: (d.Normal(a, b), d.Normal(c, e)),
               dict(a=real(3), b=pos(3), c=real(3), e=pos(3))),
    "Bernoulli": (lambda d, a, b: (d.Bernoulli(probs=a), d.Bernoulli(logits=b)),
                  dict(a=unit(3), b=real(3))),
    "Categorical": (lambda d, a, b: (d.Categorical(probs=a), d.Categorical(logits=b)),
                    dict(a=simplex(2, 4), b=real(2, 4))),
    "OneHotCategorical": (lambda d, a, b: (d.OneHotCategorical(logits=a),
                                           d.OneHotCategorical(logits=b)),
                          dict(a=real(2, 4), b=real(2, 4))),
    "Uniform": (lambda d, a, b: (d.Uniform(a, a + 1.0), d.Uniform(b - 1.0, b + 3.0)),
                dict(a=unit(3), b=unit(3))),
    "Beta": (lambda d, a, b, c, e: (d.Beta(a, b), d.Beta(c, e)),
             dict(a=pos(3), b=pos(3), c=pos(3), e=pos(3))),
    "Dirichlet": (lambda d, a, b: (d.Dirichlet(a), d.Dirichlet(b)),
                  dict(a=pos(2, 3), b=pos(2, 3))),
    "Gamma": (lambda d, a, b, c, e: (d.Gamma(a, b), d.Gamma(c, e)),
              dict(a=pos(3), b=pos(3), c=pos(3), e=pos(3))),
    "Exponential": (lambda d, a, b: (d.Exponential(a), d.Exponential(b)),
                    dict(a=pos(3), b=pos(3))),
    "Laplace": (lambda d, a, b, c, e: (d.Laplace(a, b), d.Laplace(c, e)),
                dict(a=real(3), b=pos(3), c=real(3), e=pos(3))),
    "Poisson": (lambda d, a, b: (d.Poisson(a), d.Poisson(b)), dict(a=pos(3), b=pos(3))),
    "Geometric": (lambda d, a, b: (d.Geometric(probs=a), d.Geometric(probs=b)),
                  dict(a=unit(3), b=unit(3))),
    "Binomial": (lambda d, a, b: (d.Binomial(6, probs=a), d.Binomial(6, probs=b)),
                 dict(a=unit(3), b=unit(3))),
    "MVN": (lambda d, a, b, c, e: (d.MultivariateNormal(a, covariance_matrix=b),
                                   d.MultivariateNormal(c, scale_tril=e)),
            dict(a=real(2, 3), b=spd(3), c=real(3), e=np.linalg.cholesky(spd(3, (2,))))),
    "Independent": (lambda d, a, b, c, e: (d.Independent(d.Normal(a, b), 1),
                                           d.Independent(d.Normal(c, e), 1)),
                    dict(a=real(2, 3), b=pos(2, 3), c=real(2, 3), e=pos(2, 3))),
    "LogNormal": (lambda d, a, b, c, e: (d.LogNormal(a, b), d.LogNormal(c, e)),
                  dict(a=real(3), b=pos(3), c=real(3), e=pos(3))),
    "Exponential-Gamma": (lambda d, a, b, c: (d.Exponential(a), d.Gamma(b, c)),
                          dict(a=pos(3), b=pos(3), c=pos(3))),
    "Gamma-Exponential": (lambda d, a, b, c: (d.Gamma(a, b), d.Exponential(c)),
                          dict(a=pos(3), b=pos(3), c=pos(3))),
    "Uniform-Normal": (lambda d, a, b, c, e: (d.Uniform(a, a + b), d.Normal(c, e)),
                       dict(a=real(3), b=pos(3), c=real(3), e=pos(3))),
    "Beta-Uniform": (lambda d, a, b, c: (d.Beta(a, b), d.Uniform(c - 1.0, 1.0 + c)),
                     dict(a=pos(3), b=pos(3), c=np.array([0.0, 0.5, -0.2]))),
    "Normal-Laplace": (lambda d, a, b, c, e: (d.Normal(a, b), d.Laplace(c, e)),
                       dict(a=real(3), b=pos(3), c=real(3), e=pos(3))),
}


@pytest.mark.parametrize("name", sorted(KL_PAIRS))
def test_kl_divergence(name, device):
    build, params = KL_PAIRS[name]
    ours_p, theirs_p = to_plugrad(params, device), to_torch(params)
    (p, q), (tp, tq) = build(D, **ours_p), build(TD, **theirs_p)
    kl, tkl = D.kl_divergence(p, q), TD.kl_divergence(tp, tq)
    close(kl, tkl, msg="kl")
    if bool(torch.isfinite(tkl).all()):
        kl.sum().backward()
        tkl.sum().backward()
        for k in params:
            if theirs_p[k].grad is not None:
                close(ours_p[k].grad, theirs_p[k].grad, rtol=1e-7, atol=1e-9, msg=k)


def test_kl_infinite_where_support_escapes(device):
    p = D.Uniform(plugrad.tensor([0.0, 0.0], device=device), plugrad.tensor([1.0, 3.0],
                                                                          device=device))
    q = D.Uniform(plugrad.tensor([0.0, 0.0], device=device), plugrad.tensor([2.0, 2.0],
                                                                          device=device))
    kl = host(D.kl_divergence(p, q))
    assert kl[0] == pytest.approx(math.log(2.0)) and kl[1] == math.inf


def test_register_kl_and_missing_pair():
    class MyNormal(D.Normal):
        pass

    with pytest.raises(NotImplementedError, match="p type Normal and q type Gamma"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Gamma(1.0, 1.0))
    # a subclass inherits its parent's rule until it registers its own
    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0))) == 0.0

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return plugrad.tensor(42.0)

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0))) == 42.0
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0))) == 0.0


def test_gamma_cdf_matches_torch(device):
    c, r, x = pos(5, low=0.3, high=20), pos(5), pos(5, low=0.01, high=15)
    ours = D.Gamma(plugrad.tensor(c, device=device), plugrad.tensor(r, device=device)).cdf(
        plugrad.tensor(x, device=device))
    close(ours, TD.Gamma(torch.tensor(c), torch.tensor(r)).cdf(torch.tensor(x)), rtol=1e-8)


def test_transform_inverses_and_jacobians(device):
    x = plugrad.tensor(real(7), device=device, requires_grad=True)
    tx = torch.tensor(host(x), requires_grad=True)
    for name, args in [("ExpTransform", ()), ("SigmoidTransform", ()), ("TanhTransform", ()),
                       ("SoftplusTransform", ()), ("AffineTransform", (0.3, -2.0))]:
        t, tt = getattr(D.transforms, name)(*args), getattr(TD.transforms, name)(*args)
        y, ty = t(x), tt(tx)
        close(y, ty, msg=name)
        close(t.inv(y), tt.inv(ty), rtol=1e-7, atol=1e-9, msg=name)
        close(t.log_abs_det_jacobian(x, y), tt.log_abs_det_jacobian(tx, ty), msg=name)
        assert t.sign == tt.sign and t.bijective == tt.bijective
    comp, tcomp = (D.transforms.ComposeTransform([D.transforms.AffineTransform(1.0, 3.0),
                                                  D.transforms.ExpTransform()]),
                   TD.transforms.ComposeTransform([TD.transforms.AffineTransform(1.0, 3.0),
                                                   TD.transforms.ExpTransform()]))
    close(comp.log_abs_det_jacobian(x, comp(x)), tcomp.log_abs_det_jacobian(tx, tcomp(tx)))
    close(comp.inv(comp(x)), tx, rtol=1e-9)


def test_event_transforms_match_torch(device):
    x = plugrad.tensor(real(2, 3, 3), device=device, requires_grad=True)
    tx = torch.tensor(host(x), requires_grad=True)
    T, TT = D.transforms, TD.transforms
    cases = [(T.StickBreakingTransform(), TT.StickBreakingTransform(), True),
             (T.SoftmaxTransform(), TT.SoftmaxTransform(), False),
             (T.LowerCholeskyTransform(), TT.LowerCholeskyTransform(), False),
             (T.PositiveDefiniteTransform(), TT.PositiveDefiniteTransform(), False),
             (T.ReshapeTransform((3, 3), (9,)), TT.ReshapeTransform((3, 3), (9,)), True),
             (T.IndependentTransform(T.ExpTransform(), 2),
              TT.IndependentTransform(TT.ExpTransform(), 2), True),
             (T.CumulativeDistributionTransform(D.Normal(plugrad.tensor(0.5, device=device),
                                                         plugrad.tensor(2.0, device=device))),
              TT.CumulativeDistributionTransform(TD.Normal(0.5, 2.0)), True)]
    for t, tt, jac in cases:
        name = type(t).__name__
        y, ty = t(x), tt(tx)
        close(y, ty, msg=name)
        close(t.inv(y), tt.inv(ty), rtol=1e-7, atol=1e-9, msg=name)
        assert tuple(t.forward_shape((2, 3, 3))) == tuple(tt.forward_shape((2, 3, 3))), name
        assert t.domain.event_dim == tt.domain.event_dim, name
        assert t.codomain.event_dim == tt.codomain.event_dim, name
        if jac:
            ld, tld = t.log_abs_det_jacobian(x, y), tt.log_abs_det_jacobian(tx, ty)
            close(ld, tld, msg=name)
            assert ld.requires_grad == tld.requires_grad, name
            if not tld.requires_grad:  # a constant (reshape): nothing to differentiate
                continue
            ld.sum().backward()
            tld.sum().backward()
            close(x.grad, tx.grad, rtol=1e-7, atol=1e-9, msg=name)
            x.grad, tx.grad = None, None


def test_biject_to_and_transform_to_match_torch(device):
    C, TC = D.constraints, TD.constraints
    u = real(2, 4)
    x, tx = plugrad.tensor(u, device=device), torch.tensor(u)
    for c, tc in [(C.simplex, TC.simplex), (C.positive, TC.positive),
                  (C.interval(-2.0, 5.0), TC.interval(-2.0, 5.0)),
                  (C.independent(C.positive, 1), TC.independent(TC.positive, 1)),
                  (C.less_than(1.5), TC.less_than(1.5)), (C.real, TC.real)]:
        for reg, treg in [(D.biject_to, TD.biject_to), (D.transform_to, TD.transform_to)]:
            t, tt = reg(c), treg(tc)
            y, ty = t(x), tt(tx)
            close(y, ty, msg=repr(c))
            assert bool(c.check(y).all())
            if t.bijective:
                close(t.log_abs_det_jacobian(x, y), tt.log_abs_det_jacobian(tx, ty),
                      msg=repr(c))
    m = real(3, 3)
    close(D.transform_to(C.positive_definite)(plugrad.tensor(m, device=device)),
          TD.transform_to(TC.positive_definite)(torch.tensor(m)))
    with pytest.raises(NotImplementedError):
        D.biject_to(C.boolean)


def test_kumaraswamy_mode(device):
    a, b = np.array([2.0, 3.0, 0.5, 1.0]), np.array([3.0, 2.0, 2.0, 1.0])
    mode = host(D.Kumaraswamy(plugrad.tensor(a, device=device),
                              plugrad.tensor(b, device=device)).mode)
    expected = ((a[:2] - 1) / (a[:2] * b[:2] - 1)) ** (1 / a[:2])
    np.testing.assert_allclose(mode[:2], expected, rtol=1e-12)
    assert np.isnan(mode[2:]).all()
    # the density is largest at the mode
    k = TD.Kumaraswamy(torch.tensor(a[:2]), torch.tensor(b[:2]))
    grid = torch.linspace(0.01, 0.99, 981).unsqueeze(-1)
    best = grid[k.log_prob(grid).argmax(0), 0].numpy()
    np.testing.assert_allclose(best, mode[:2], atol=2e-3)


def test_joint_transforms_match_torch(device):
    T, TT = D.transforms, TD.transforms
    x = plugrad.tensor(real(2, 5, 3), device=device, requires_grad=True)
    tx = torch.tensor(host(x), requires_grad=True)
    cases = [
        (T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)], dim=1, lengths=[2, 3]),
         TT.CatTransform([TT.ExpTransform(), TT.AffineTransform(1.0, 3.0)], dim=1,
                         lengths=[2, 3])),
        (T.CatTransform([T.ExpTransform(), T.SigmoidTransform()], dim=-1, lengths=[1, 2]),
         TT.CatTransform([TT.ExpTransform(), TT.SigmoidTransform()], dim=-1, lengths=[1, 2])),
        (T.StackTransform([T.ExpTransform(), T.TanhTransform(), T.AffineTransform(0.0, 2.0)],
                          dim=2),
         TT.StackTransform([TT.ExpTransform(), TT.TanhTransform(),
                            TT.AffineTransform(0.0, 2.0)], dim=2)),
        (T.CorrCholeskyTransform(), TT.CorrCholeskyTransform()),
    ]
    for t, tt in cases:
        name = type(t).__name__
        y, ty = t(x), tt(tx)
        close(y, ty, msg=name)
        close(t.inv(y), tt.inv(ty), rtol=1e-6, atol=1e-9, msg=name)
        ld, tld = t.log_abs_det_jacobian(x, y), tt.log_abs_det_jacobian(tx, ty)
        close(ld, tld, msg=name)
        ld.sum().backward()
        tld.sum().backward()
        close(x.grad, tx.grad, rtol=1e-7, atol=1e-9, msg=name)
        x.grad, tx.grad = None, None
        assert bool(t.codomain.check(y).all()) == bool(tt.codomain.check(ty).all()), name
    L = D.biject_to(D.constraints.corr_cholesky)(plugrad.tensor(real(6), device=device))
    assert tuple(L.shape) == (4, 4) and bool(D.constraints.corr_cholesky.check(L))
