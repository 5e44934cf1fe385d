"""PyTorch's module path ``torch.distributions.negative_binomial``;
the code is in ``multinomial``."""
from plugrad.distributions.multinomial import NegativeBinomial

__all__ = ["NegativeBinomial"]
