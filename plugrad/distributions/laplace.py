"""PyTorch's module path ``torch.distributions.laplace``; the code is in ``continuous``."""
from plugrad.distributions.continuous import Laplace

__all__ = ["Laplace"]
