"""PyTorch's module path ``torch.distributions.binomial``; the code is in ``counts``."""
from plugrad.distributions.counts import Binomial

__all__ = ["Binomial"]
