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
