"""PyTorch's module path ``torch.distributions.log_normal``;
the code is in ``transformed_distribution``."""
from plugrad.distributions.transformed_distribution import LogNormal

__all__ = ["LogNormal"]
