"""PyTorch's module path ``torch.distributions.kumaraswamy``;
the code is in ``bounded``."""
from plugrad.distributions.bounded import Kumaraswamy

__all__ = ["Kumaraswamy"]
