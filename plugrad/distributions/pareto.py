"""PyTorch's module path ``torch.distributions.pareto``; the code is in ``more_laws``."""
from plugrad.distributions.more_laws import Pareto

__all__ = ["Pareto"]
