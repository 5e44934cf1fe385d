"""The spatial layers (transposed convolutions, 1-D/Lp/adaptive pools, padding, resampling,
pixel shuffles, fold), gathered for ``plugrad.nn.modules``."""
from plugrad.nn.modules.conv_transpose import ConvTranspose1d, ConvTranspose2d
from plugrad.nn.modules.padding import (CircularPad1d, CircularPad2d, CircularPad3d,
                                        ConstantPad1d, ConstantPad2d, ConstantPad3d,
                                        ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                                        ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                                        ZeroPad1d, ZeroPad2d, ZeroPad3d)
from plugrad.nn.modules.pixelshuffle import Fold, PixelShuffle, PixelUnshuffle, Unfold
from plugrad.nn.modules.pooling import (AdaptiveAvgPool1d, AdaptiveMaxPool1d,
                                        AdaptiveMaxPool2d, AvgPool1d, LPPool1d, LPPool2d,
                                        MaxPool1d)
from plugrad.nn.modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "AvgPool1d", "LPPool1d",
           "LPPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveAvgPool1d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
           "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d",
           "CircularPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d",
           "ConstantPad2d", "ConstantPad3d", "Upsample", "UpsamplingNearest2d",
           "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "Fold", "Unfold"]
