"""Argument and sample validation: PyTorch's ValueErrors (same text), and the switches."""
import numpy as np
import pytest

import plugrad
import plugrad.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions


def _message(fn):
    with pytest.raises(ValueError) as info:
        fn()
    return str(info.value)


def _same_error(ours, theirs):
    """Our message equals torch's up to the library's name and the tensor's printout."""
    mine = _message(ours).replace("plugrad.Size", "torch.Size")
    want = _message(theirs)
    assert mine.split("\n")[0] == want.split("\n")[0]
    return mine


@pytest.mark.parametrize("build", [
    lambda m, t: m.Normal(t([0.0, 1.0]), t([-1.0, 1.0])),
    lambda m, t: m.Normal(t([float("nan")]), t([1.0])),
    lambda m, t: m.Gamma(t([1.0, 2.0]), t([0.0, 1.0])),
    lambda m, t: m.Beta(t([1.0]), t([-2.0])),
    lambda m, t: m.Bernoulli(probs=t([0.5, 1.5])),
    lambda m, t: m.Categorical(probs=t([[0.5, -0.5]])),
    lambda m, t: m.Dirichlet(t([1.0, 0.0])),
    lambda m, t: m.Exponential(t([-1.0])),
    lambda m, t: m.Poisson(t([-1.0])),
    lambda m, t: m.Binomial(t([2.5]), probs=t([0.5])),
    lambda m, t: m.MultivariateNormal(t([0.0, 0.0]), covariance_matrix=t([[1.0, 2.0],
                                                                          [2.0, 1.0]])),
    lambda m, t: m.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 0.0], [1.0, -1.0]])),
    lambda m, t: m.LogNormal(t([0.0]), t([0.0])),
    lambda m, t: m.StudentT(t([-1.0])),
    lambda m, t: m.Uniform(t([1.0]), t([0.0])),
], ids=["normal-scale", "normal-nan", "gamma-rate", "beta", "bernoulli", "categorical",
        "dirichlet", "exponential", "poisson", "binomial-count", "mvn-cov", "mvn-tril",
        "lognormal", "studentt", "uniform-order"])
def test_bad_parameters_raise_torchs_error(build):
    msg = _same_error(lambda: build(D, plugrad.tensor), lambda: build(TD, torch.tensor))
    assert msg.startswith("Expected parameter ")


@pytest.mark.parametrize("case", [
    (lambda m: m.Normal(0.0, 1.0), [float("nan")]),
    (lambda m: m.Exponential(1.0), -1.0),
    (lambda m: m.Gamma(2.0, 1.0), [-0.5, 1.0]),
    (lambda m: m.Beta(2.0, 2.0), [1.5]),
    (lambda m: m.Bernoulli(0.3), [0.5]),
    (lambda m: m.Poisson(2.0), [1.5]),
    (lambda m: m.Dirichlet(m_tensor(m, [1.0, 2.0])), [0.7, 0.7]),
], ids=["normal", "exponential", "gamma", "beta", "bernoulli", "poisson", "dirichlet"])
def test_value_outside_support_raises_torchs_error(case):
    build, value = case
    msg = _same_error(lambda: build(D).log_prob(plugrad.tensor(value)),
                      lambda: build(TD).log_prob(torch.tensor(value)))
    assert "to be within the support" in msg


def m_tensor(m, v):
    return plugrad.tensor(v) if m is D else torch.tensor(v)


def test_shape_errors():
    d = D.Normal(plugrad.zeros(3), 1.0)
    with pytest.raises(ValueError, match="not broadcastable with batch_shape"):
        d.log_prob(plugrad.zeros(2))
    mvn = D.MultivariateNormal(plugrad.zeros(3), plugrad.eye(3))
    with pytest.raises(ValueError, match="right-most size of value must match event_shape"):
        mvn.log_prob(plugrad.zeros(2))
    with pytest.raises(ValueError, match="must be a Tensor"):
        d.log_prob(0.5)


@pytest.mark.parametrize("ours,theirs", [
    (lambda: D.Categorical(), lambda: TD.Categorical()),
    (lambda: D.Bernoulli(probs=plugrad.tensor(0.5), logits=plugrad.tensor(0.0)),
     lambda: TD.Bernoulli(probs=torch.tensor(0.5), logits=torch.tensor(0.0))),
    (lambda: D.Categorical(probs=plugrad.tensor(1.0)),
     lambda: TD.Categorical(probs=torch.tensor(1.0))),
    (lambda: D.MultivariateNormal(plugrad.zeros(2), plugrad.eye(2), scale_tril=plugrad.eye(2)),
     lambda: TD.MultivariateNormal(torch.zeros(2), torch.eye(2), scale_tril=torch.eye(2))),
    (lambda: D.MultivariateNormal(plugrad.tensor(0.0), plugrad.eye(2)),
     lambda: TD.MultivariateNormal(torch.tensor(0.0), torch.eye(2))),
    (lambda: D.MultivariateNormal(plugrad.zeros(2), scale_tril=plugrad.ones(2)),
     lambda: TD.MultivariateNormal(torch.zeros(2), scale_tril=torch.ones(2))),
    (lambda: D.Independent(D.Normal(plugrad.zeros(2), 1.0), 2),
     lambda: TD.Independent(TD.Normal(torch.zeros(2), 1.0), 2)),
    (lambda: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(plugrad.zeros(2), 1.0)),
     lambda: TD.MixtureSameFamily(TD.Normal(0.0, 1.0), TD.Normal(torch.zeros(2), 1.0))),
    (lambda: D.MixtureSameFamily(D.Categorical(logits=plugrad.zeros(3)),
                                 D.Normal(plugrad.zeros(2), 1.0)),
     lambda: TD.MixtureSameFamily(TD.Categorical(logits=torch.zeros(3)),
                                  TD.Normal(torch.zeros(2), 1.0))),
    (lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
     lambda: TD.TransformedDistribution(TD.Normal(0.0, 1.0), "exp")),
], ids=["categorical-neither", "bernoulli-both", "categorical-0d", "mvn-two", "mvn-0d-loc",
        "mvn-1d-tril", "independent", "mixture-type", "mixture-count", "transformed"])
def test_construction_errors(ours, theirs):
    _same_error(ours, theirs)


def test_validation_switches():
    bad = plugrad.tensor([-1.0])
    D.Normal(0.0, bad, validate_args=False)  # no check when asked not to
    D.Normal(0.0, 1.0, validate_args=False).log_prob(plugrad.tensor([float("nan")]))
    assert D.Distribution._validate_args is True
    D.Distribution.set_default_validate_args(False)
    try:
        d = D.Exponential(bad)
        assert not d._validate_args
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Exponential(bad)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_expand_keeps_validation_and_repr():
    d = D.Normal(plugrad.zeros(3), 1.0).expand((2, 3))
    assert d._validate_args
    with pytest.raises(ValueError, match="within the support"):
        d.log_prob(plugrad.tensor([float("nan")] * 3))
    assert repr(D.Normal(plugrad.zeros(2), 1.0)) == "Normal(loc: plugrad.Size([2]), " \
                                                     "scale: plugrad.Size([2]))"
    assert repr(TD.Normal(torch.zeros(2), 1.0)) == "Normal(loc: torch.Size([2]), " \
                                                   "scale: torch.Size([2]))"


def test_constraints_match_torch():
    C, TC = D.constraints, TD.constraints
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 2.5, float("nan")])
    for name in ("real", "positive", "nonnegative", "unit_interval", "boolean",
                 "nonnegative_integer", "positive_integer"):
        ours = getattr(C, name).check(plugrad.tensor(x))
        theirs = getattr(TC, name).check(torch.tensor(x))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=name)
        assert repr(getattr(C, name)) == repr(getattr(TC, name))
    for args in [(C.interval(0.0, 2.0), TC.interval(0.0, 2.0)),
                 (C.half_open_interval(0.0, 2.0), TC.half_open_interval(0.0, 2.0)),
                 (C.greater_than(0.5), TC.greater_than(0.5)),
                 (C.less_than(1.0), TC.less_than(1.0)),
                 (C.integer_interval(0, 2), TC.integer_interval(0, 2))]:
        np.testing.assert_array_equal(args[0].check(plugrad.tensor(x)).numpy(),
                                      args[1].check(torch.tensor(x)).numpy())
        assert repr(args[0]) == repr(args[1])
    m = np.array([[[1.0, 0.0], [0.3, 2.0]], [[1.0, 0.2], [0.3, 2.0]], [[-1.0, 0.0], [0.3, 2.0]]])
    for name in ("lower_cholesky", "lower_triangular", "positive_definite", "simplex",
                 "real_vector", "one_hot"):
        ours = getattr(C, name).check(plugrad.tensor(m))
        theirs = getattr(TC, name).check(torch.tensor(m))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=name)
        assert getattr(C, name).event_dim == getattr(TC, name).event_dim
    assert D.Uniform(0.0, 1.0).support.check(plugrad.tensor(1.0)).item()
    assert C.is_dependent(D.Uniform(0.0, 1.0).support) is False
    assert C.is_dependent(C.dependent)


def test_every_torch_name_and_module_exists():
    import importlib
    import pkgutil
    missing = sorted(set(TD.__all__) - set(D.__all__))
    assert missing == []
    modules = {m.name for m in pkgutil.iter_modules(TD.__path__)}
    for name in modules:
        importlib.import_module(f"plugrad.distributions.{name}")
    for name in dir(TD.constraints):
        if not name.startswith("_") and name not in ("Any", "Callable", "torch"):
            assert hasattr(D.constraints, name), name


def test_mixture_support_with_parameter_dependent_components():
    """Uniform components: a value is valid where it lies in every component's interval."""
    def build(m, t):
        return m.MixtureSameFamily(m.Categorical(logits=t([[0.0, 0.0], [0.0, 0.0]])),
                                   m.Uniform(t([[0.0, 1.0], [0.0, 2.0]]),
                                             t([[3.0, 4.0], [5.0, 6.0]])))
    ours, theirs = build(D, plugrad.tensor), build(TD, torch.tensor)
    v = [[1.5, 2.5], [0.5, 5.5], [3.5, 4.0]]
    np.testing.assert_array_equal(ours.support.check(plugrad.tensor(v)).numpy(),
                                  theirs.support.check(torch.tensor(v)).numpy())
    assert repr(ours.support).startswith("MixtureSameFamilyConstraint(")
    _same_error(lambda: ours.log_prob(plugrad.tensor([0.5, 1.0])),
                lambda: theirs.log_prob(torch.tensor([0.5, 1.0])))
