"""PyTorch's module path ``torch.distributions.dirichlet``; the code is in ``gamma``."""
from plugrad.distributions.gamma import Dirichlet

__all__ = ["Dirichlet"]
