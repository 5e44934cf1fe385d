"""``torch.nn.modules.dropout`` at PyTorch's path (the layers live in ``misc``)."""
from plugrad.nn.modules.misc import Dropout

__all__ = ["Dropout"]
