"""PyTorch's module path ``torch.distributions.bernoulli``; the code is in ``discrete``."""
from plugrad.distributions.discrete import Bernoulli

__all__ = ["Bernoulli"]
