"""PyTorch's module path ``torch.distributions.continuous_bernoulli``;
the code is in ``bounded``."""
from plugrad.distributions.bounded import ContinuousBernoulli

__all__ = ["ContinuousBernoulli"]
