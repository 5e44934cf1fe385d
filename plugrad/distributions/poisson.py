"""PyTorch's module path ``torch.distributions.poisson``; the code is in ``counts``."""
from plugrad.distributions.counts import Poisson

__all__ = ["Poisson"]
