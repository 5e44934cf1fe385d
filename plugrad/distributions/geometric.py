"""PyTorch's module path ``torch.distributions.geometric``; the code is in ``counts``."""
from plugrad.distributions.counts import Geometric

__all__ = ["Geometric"]
