"""The volumetric layers (``Conv3d``, ``ConvTranspose3d``, ``MaxPool3d``, ``AvgPool3d``,
``LPPool3d``, ``AdaptiveAvgPool3d``, ``AdaptiveMaxPool3d``, ``BatchNorm3d``), the unpooling
layers (``MaxUnpool1d/2d/3d``) and ``ChannelShuffle``: each a thin layer over its functional
form (``plugrad.nn.functional_3d``), with PyTorch's parameters, defaults and repr."""
from __future__ import annotations

from plugrad.nn import functional as F
from plugrad.nn.modules.conv import _ConvNd
from plugrad.nn.modules.conv_transpose import _ConvTransposeNd
from plugrad.nn.modules.module import Module
from plugrad.nn.modules.normalization import _BatchNorm
from plugrad.nn.modules.pooling import (_AdaptiveAvgPoolNd, _AdaptiveMaxPoolNd, _AvgPoolNd,
                                        _LPPoolNd, _MaxPoolNd)

__all__ = ["Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "LPPool3d",
           "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "BatchNorm3d", "MaxUnpool1d",
           "MaxUnpool2d", "MaxUnpool3d", "ChannelShuffle"]


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W) inputs."""

    _n = 3

    def forward(self, input):
        return F.conv3d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C, D, H, W) or (C, D, H, W) inputs."""

    _n = 3

    def forward(self, input, output_size=None):
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class MaxPool3d(_MaxPoolNd):
    _functional = "max_pool3d"


class AvgPool3d(_AvgPoolNd):
    _functional = "avg_pool3d"


class LPPool3d(_LPPoolNd):
    _functional = "lp_pool3d"


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    _functional = "adaptive_avg_pool3d"


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    _functional = "adaptive_max_pool3d"


class BatchNorm3d(_BatchNorm):
    """Over (N, C, D, H, W) inputs."""

    _dims = (5,)


class _MaxUnpoolNd(Module):
    _functional = ""

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, input, indices, output_size=None):
        return getattr(F, self._functional)(input, indices, self.kernel_size, self.stride,
                                            self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _functional = "max_unpool1d"


class MaxUnpool2d(_MaxUnpoolNd):
    _functional = "max_unpool2d"


class MaxUnpool3d(_MaxUnpoolNd):
    _functional = "max_unpool3d"


class ChannelShuffle(Module):

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
