"""PyTorch's module path ``torch.distributions.exp_family``; the code is in ``distribution``."""
from plugrad.distributions.distribution import ExponentialFamily

__all__ = ["ExponentialFamily"]
