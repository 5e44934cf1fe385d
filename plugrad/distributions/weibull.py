"""PyTorch's module path ``torch.distributions.weibull``; the code is in ``more_laws``."""
from plugrad.distributions.more_laws import Weibull

__all__ = ["Weibull"]
