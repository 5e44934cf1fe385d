"""PyTorch's module path ``torch.distributions.exponential``; the code is in ``continuous``."""
from plugrad.distributions.continuous import Exponential

__all__ = ["Exponential"]
