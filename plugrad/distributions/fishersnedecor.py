"""PyTorch's module path ``torch.distributions.fishersnedecor``; the code is in ``more_laws``."""
from plugrad.distributions.more_laws import FisherSnedecor

__all__ = ["FisherSnedecor"]
