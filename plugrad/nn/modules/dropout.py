"""``torch.nn.modules.dropout`` at PyTorch's path (the layers live in ``misc``)."""
from plugrad.nn.modules.misc import (AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d,
                                     FeatureAlphaDropout)

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]
