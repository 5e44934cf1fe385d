"""PyTorch's module path ``torch.distributions.half_normal``; the code is in ``more_laws``."""
from plugrad.distributions.more_laws import HalfNormal

__all__ = ["HalfNormal"]
