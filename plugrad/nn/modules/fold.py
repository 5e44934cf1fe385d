"""``torch.nn.modules.fold`` at PyTorch's path (the layers live in ``pixelshuffle``)."""
from plugrad.nn.modules.pixelshuffle import Fold, Unfold

__all__ = ["Fold", "Unfold"]
