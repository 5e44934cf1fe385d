"""PyTorch's module path ``torch.distributions.inverse_gamma``; the code is in ``more_laws``."""
from plugrad.distributions.more_laws import InverseGamma

__all__ = ["InverseGamma"]
