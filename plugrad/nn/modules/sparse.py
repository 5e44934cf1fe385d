"""``torch.nn.modules.sparse`` at PyTorch's path (``Embedding`` lives in ``misc``)."""
from plugrad.nn.modules.misc import Embedding

__all__ = ["Embedding"]
