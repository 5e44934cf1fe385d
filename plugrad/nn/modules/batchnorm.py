"""``torch.nn.modules.batchnorm`` at PyTorch's path (with ``_BatchNorm``, which programs
subclass; the layers live in ``normalization``)."""
from plugrad.nn.modules.normalization import BatchNorm1d, BatchNorm2d, _BatchNorm  # noqa: F401

_NormBase = _BatchNorm
__all__ = ["BatchNorm1d", "BatchNorm2d"]
