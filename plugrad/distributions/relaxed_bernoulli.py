"""PyTorch's module path ``torch.distributions.relaxed_bernoulli``; the code is in ``relaxed``."""
from plugrad.distributions.relaxed import LogitRelaxedBernoulli, RelaxedBernoulli

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]
