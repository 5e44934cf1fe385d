"""PyTorch's module path ``torch.distributions.one_hot_categorical``; the code is in ``discrete``."""
from plugrad.distributions.discrete import OneHotCategorical

__all__ = ["OneHotCategorical"]
