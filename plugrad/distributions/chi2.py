"""PyTorch's module path ``torch.distributions.chi2``; the code is in ``gamma``."""
from plugrad.distributions.gamma import Chi2

__all__ = ["Chi2"]
