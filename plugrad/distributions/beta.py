"""PyTorch's module path ``torch.distributions.beta``; the code is in ``gamma``."""
from plugrad.distributions.gamma import Beta

__all__ = ["Beta"]
