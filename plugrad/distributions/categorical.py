"""PyTorch's module path ``torch.distributions.categorical``; the code is in ``discrete``."""
from plugrad.distributions.discrete import Categorical

__all__ = ["Categorical"]
