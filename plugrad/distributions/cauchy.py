"""PyTorch's module path ``torch.distributions.cauchy``; the code is in ``continuous``."""
from plugrad.distributions.continuous import Cauchy

__all__ = ["Cauchy"]
