"""PyTorch's module path ``torch.distributions.uniform``; the code is in ``continuous``."""
from plugrad.distributions.continuous import Uniform

__all__ = ["Uniform"]
