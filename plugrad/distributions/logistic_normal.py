"""PyTorch's module path ``torch.distributions.logistic_normal``; the code is in
``more_laws``."""
from plugrad.distributions.more_laws import LogisticNormal

__all__ = ["LogisticNormal"]
