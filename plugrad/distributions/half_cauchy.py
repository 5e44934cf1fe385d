"""PyTorch's module path ``torch.distributions.half_cauchy``; the code is in ``more_laws``."""
from plugrad.distributions.more_laws import HalfCauchy

__all__ = ["HalfCauchy"]
