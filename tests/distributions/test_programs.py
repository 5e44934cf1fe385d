"""A PyTorch program using torch.distributions, run unmodified on torch and on plugrad.

The program's values do not depend on the random stream (draws only feed shapes and
support checks), so the two runs must print the same numbers.
"""
import json
import subprocess
import sys

import numpy as np
import pytest

from tests.programs.conftest import run_plugrad

pytest.importorskip("torch")

PROGRAM = '''
import json
import torch
import torch.nn as nn
import torch.distributions as dist
from torch.distributions import Normal, Independent, kl_divergence, constraints
from torch.distributions.categorical import Categorical
from torch.distributions.normal import Normal as Normal2
from torch.distributions.mixture_same_family import MixtureSameFamily
from torch.distributions.multivariate_normal import MultivariateNormal
from torch.distributions.transforms import TanhTransform, AffineTransform
from torch.distributions.transformed_distribution import TransformedDistribution
from torch.distributions.utils import probs_to_logits

torch.set_default_dtype(torch.float64)
out = {"same_class": Normal is Normal2}
# VAE-style step: encoder outputs -> Independent Normal posterior, KL to a standard prior
mu = torch.tensor([[0.3, -1.2, 0.5], [1.0, 0.1, -0.4]], requires_grad=True)
log_sigma = torch.tensor([[-0.5, 0.2, 0.0], [0.3, -0.1, 0.4]], requires_grad=True)
q = Independent(Normal(mu, log_sigma.exp()), 1)
prior = Independent(Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1)
z = q.rsample((4,))
x = torch.tensor([0.2, 0.4, -0.3])
loss = kl_divergence(q, prior).sum() - q.log_prob(x).sum()
loss.backward()
out["vae"] = [loss.item(), mu.grad.flatten().tolist(), log_sigma.grad.flatten().tolist(),
              list(z.shape)]
# REINFORCE: a policy's Categorical over actions
policy = nn.Linear(3, 4)
with torch.no_grad():
    policy.weight.copy_(torch.arange(12.0).reshape(4, 3) / 10 - 0.5)
    policy.bias.copy_(torch.tensor([0.1, -0.2, 0.3, 0.0]))
states = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3]])
pi = Categorical(logits=policy(states))
actions = torch.tensor([3, 1])
returns = torch.tensor([1.0, -0.5])
pg = -(pi.log_prob(actions) * returns).sum() - 0.01 * pi.entropy().sum()
pg.backward()
a = pi.sample((5,))
out["reinforce"] = [pg.item(), policy.weight.grad.flatten().tolist(),
                    list(a.shape), bool(((a >= 0) & (a < 4)).all())]
# a Gaussian mixture's negative log-likelihood
logits = torch.tensor([0.2, -0.3, 0.5], requires_grad=True)
means = torch.tensor([[-1.0, 0.0], [0.5, 1.0], [2.0, -1.0]], requires_grad=True)
gmm = MixtureSameFamily(Categorical(logits=logits),
                        Independent(Normal(means, torch.full((3, 2), 0.8)), 1))
data = torch.tensor([[0.0, 0.5], [1.8, -0.9], [-1.2, 0.1], [0.4, 0.9]])
nll = -gmm.log_prob(data).mean()
nll.backward()
out["gmm"] = [nll.item(), logits.grad.tolist(), means.grad.flatten().tolist(),
              list(gmm.sample((6,)).shape)]
# a squashed-Gaussian policy (SAC), MVN, the gamma family and a transform
loc = torch.tensor([0.1, -0.3], requires_grad=True)
squashed = TransformedDistribution(Normal(loc, torch.tensor([0.5, 0.9])),
                                   [TanhTransform(), AffineTransform(0.0, 2.0)])
lp = squashed.log_prob(torch.tensor([0.4, -1.1])).sum()
lp.backward()
mvn = MultivariateNormal(torch.zeros(2), covariance_matrix=torch.tensor([[2.0, 0.3],
                                                                        [0.3, 0.5]]))
out["misc"] = [lp.item(), loc.grad.tolist(),
               mvn.log_prob(torch.tensor([0.3, -0.2])).item(), mvn.entropy().item(),
               dist.Gamma(2.0, 3.0).log_prob(torch.tensor(0.7)).item(),
               dist.Beta(2.0, 5.0).entropy().item(),
               dist.Dirichlet(torch.tensor([1.0, 2.0, 3.0])).log_prob(
                   torch.tensor([0.2, 0.3, 0.5])).item(),
               dist.Poisson(3.0).log_prob(torch.tensor(2.0)).item(),
               probs_to_logits(torch.tensor([0.25, 0.75])).tolist(),
               bool(constraints.positive.check(torch.tensor(1.0))),
               dist.transform_to(constraints.positive)(torch.tensor(0.0)).item()]
print(json.dumps(out))
'''


# edge cases of everyday use: dtypes of draws, int values, reprs, error text (first line)
EDGES = '''
import json, torch
D = torch.distributions
out = {}
def rec(name, f):
    try:
        v = f()
        if isinstance(v, torch.Tensor):
            v = [str(v.dtype), list(v.shape), [round(float(x), 6) for x in v.detach().reshape(-1).tolist()]]
        out[name] = v if isinstance(v, (str, list, int, float, bool)) else repr(v)
    except Exception as e:
        out[name] = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
rec("normal_int_value", lambda: D.Normal(torch.zeros(3), 1.).log_prob(torch.tensor([1, 2, 3])))
rec("cat_unnorm", lambda: D.Categorical(torch.tensor([1., 3.])).log_prob(torch.tensor(1)))
rec("cat_float_value", lambda: D.Categorical(logits=torch.zeros(3)).log_prob(torch.tensor([0., 2.])))
rec("cat_sample_dtype", lambda: str(D.Categorical(logits=torch.zeros(3)).sample().dtype))
rec("bern_sample_dtype", lambda: str(D.Bernoulli(0.3).sample().dtype))
rec("poisson_sample_dtype", lambda: str(D.Poisson(torch.tensor(3.)).sample().dtype))
rec("binom_sample_dtype", lambda: str(D.Binomial(5, torch.tensor(0.3)).sample().dtype))
rec("normal_scalar_shapes", lambda: [list(D.Normal(0., 1.).batch_shape), str(D.Normal(0., 1.).loc.dtype)])
rec("normal_f64_scalar", lambda: D.Normal(torch.tensor(0., dtype=torch.float64), 1.).scale)
rec("mvn_batch", lambda: D.MultivariateNormal(torch.zeros(2, 3), torch.eye(3)).log_prob(torch.ones(3)))
rec("indep_repr", lambda: repr(D.Independent(D.Normal(torch.zeros(2), 1.), 1)))
rec("mix_repr", lambda: repr(D.MixtureSameFamily(D.Categorical(torch.ones(2)), D.Normal(torch.zeros(2), 1.))))
rec("uniform_outside", lambda: D.Uniform(0., 1., validate_args=False).log_prob(torch.tensor([2.])))
rec("uniform_validate", lambda: D.Uniform(0., 1.).log_prob(torch.tensor([2.])))
rec("uniform_badlow", lambda: D.Uniform(torch.tensor([1.]), torch.tensor([0.])))
rec("expon_cdf_neg", lambda: D.Exponential(1., validate_args=False).cdf(torch.tensor([-1.])))
rec("gamma_logprob_zero", lambda: D.Gamma(1., 1.).log_prob(torch.tensor([0.])))
rec("beta_mode", lambda: D.Beta(torch.tensor([0.5, 2.]), torch.tensor([0.5, 3.])).mode)
rec("dir_mode", lambda: D.Dirichlet(torch.tensor([[0.5, 0.7], [2., 3.]])).mode)
rec("bern_mode", lambda: D.Bernoulli(torch.tensor([0.2, 0.5, 0.9])).mode)
rec("geom_logits", lambda: D.Geometric(logits=torch.tensor([0.3])).log_prob(torch.tensor([2.])))
rec("geom_probs1", lambda: D.Geometric(probs=torch.tensor([1.0])).log_prob(torch.tensor([0.])))
rec("bin_inhomog_entropy", lambda: D.Binomial(torch.tensor([2., 3.]), torch.tensor([0.5, 0.5])).entropy())
rec("cat_enumerate", lambda: D.Categorical(logits=torch.zeros(2, 3)).enumerate_support().shape.__repr__())
rec("lognormal_repr", lambda: repr(D.LogNormal(0., 1.)))
rec("td_batch", lambda: [list(D.TransformedDistribution(D.Normal(torch.zeros(3), 1.), [D.transforms.AffineTransform(torch.zeros(2, 3), 1.)]).batch_shape)])
rec("kl_normal_scalar", lambda: D.kl_divergence(D.Normal(0., 1.), D.Normal(1., 2.)))
rec("normal_perplexity", lambda: D.Normal(0., 1.).perplexity())
rec("studentt_default", lambda: D.StudentT(3.).log_prob(torch.tensor(0.5)))
rec("cauchy_mean", lambda: D.Cauchy(0., 1.).mean)
rec("onehot_sample", lambda: D.OneHotCategorical(torch.tensor([0., 1.])).sample())
rec("multinomial_logprob_int", lambda: D.Multinomial(3, torch.tensor([0.2, 0.8])).log_prob(torch.tensor([1, 2])))
rec("lowrank_repr", lambda: repr(D.LowRankMultivariateNormal(torch.zeros(2), torch.ones(2, 1), torch.ones(2))))
print(json.dumps(out))
'''


def _numbers(obj):
    if isinstance(obj, (list, tuple)):
        return [v for o in obj for v in _numbers(o)]
    if isinstance(obj, dict):
        return [v for k in sorted(obj) for v in _numbers(obj[k])]
    return [float(obj)]


@pytest.fixture(scope="module")
def torch_output(tmp_path_factory):
    """The program's output under real torch (once for both devices)."""
    prog = tmp_path_factory.mktemp("torch") / "prog.py"
    prog.write_text(PROGRAM)
    theirs = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                            timeout=120)
    assert theirs.returncode == 0, theirs.stderr
    return theirs


@pytest.mark.parametrize("device", ["cpu", "ref"])
def test_program_agrees_with_torch(tmp_path, device, torch_output):
    theirs = torch_output
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    ours = run_plugrad(["run", "--device", device, str(prog)], tmp_path)
    assert ours.returncode == 0, ours.stderr
    a = json.loads(ours.stdout.strip().splitlines()[-1])
    b = json.loads(theirs.stdout.strip().splitlines()[-1])
    assert sorted(a) == sorted(b)
    np.testing.assert_allclose(_numbers(a), _numbers(b), rtol=1e-10, atol=1e-12)


def test_edge_cases_agree_with_torch(tmp_path):
    """Every entry (a value's dtype, shape and digits, a repr, or an error's type and first
    line) is the same on plugrad as on torch."""
    prog = tmp_path / "edges.py"
    prog.write_text(EDGES)
    theirs = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                            timeout=120)
    assert theirs.returncode == 0, theirs.stderr
    ours = run_plugrad(["run", "--device", "cpu", str(prog)], tmp_path)
    assert ours.returncode == 0, ours.stderr
    a = json.loads(ours.stdout.strip().splitlines()[-1])
    b = json.loads(theirs.stdout.strip().splitlines()[-1])
    assert {k: v for k, v in a.items() if v != b[k]} == {}
