"""``torch.nn.modules.flatten`` at PyTorch's path (the layers live in ``misc``)."""
from plugrad.nn.modules.misc import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
