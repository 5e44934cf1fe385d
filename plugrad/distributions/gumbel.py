"""PyTorch's module path ``torch.distributions.gumbel``; the code is in ``more_laws``."""
from plugrad.distributions.more_laws import Gumbel

__all__ = ["Gumbel"]
