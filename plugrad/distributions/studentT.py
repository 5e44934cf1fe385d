"""PyTorch's module path ``torch.distributions.studentT``; the code is in ``gamma``."""
from plugrad.distributions.gamma import StudentT

__all__ = ["StudentT"]
