"""PyTorch's module path ``torch.distributions.mixture_same_family``;
the code is in ``independent``."""
from plugrad.distributions.independent import MixtureSameFamily

__all__ = ["MixtureSameFamily"]
