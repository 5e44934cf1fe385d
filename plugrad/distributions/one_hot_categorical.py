"""PyTorch's module path ``torch.distributions.one_hot_categorical``; the code is in
``discrete`` and ``relaxed``."""
from plugrad.distributions.discrete import OneHotCategorical
from plugrad.distributions.relaxed import OneHotCategoricalStraightThrough

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]
