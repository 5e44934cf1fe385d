"""``torch.nn.modules.instancenorm`` at PyTorch's path (the layers live in
``normalization``)."""
from plugrad.nn.modules.normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
