"""PyTorch's module path ``torch.distributions.normal``; the code is in ``continuous``."""
from plugrad.distributions.continuous import Normal

__all__ = ["Normal"]
