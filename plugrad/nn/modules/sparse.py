"""``torch.nn.modules.sparse`` at PyTorch's path (the layers live in ``misc``)."""
from plugrad.nn.modules.misc import Embedding, EmbeddingBag

__all__ = ["Embedding", "EmbeddingBag"]
