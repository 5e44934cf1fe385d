"""Pooling layers: ``MaxPool1d/2d``, ``AvgPool1d/2d``, ``LPPool1d/2d``,
``AdaptiveMaxPool1d/2d``, ``AdaptiveAvgPool1d/2d``."""
from __future__ import annotations

from plugrad.nn import functional as F
from plugrad.nn.modules.module import Module


class _MaxPoolNd(Module):
    """``MaxPool1d``/``MaxPool2d``: one layer over the functional form it names."""

    _functional = ""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return getattr(F, self._functional)(
            input, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    _functional = "max_pool2d"


class _AvgPoolNd(Module):
    """``AvgPool2d``/``AvgPool3d``: one layer over the functional form it names."""

    _functional = ""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return getattr(F, self._functional)(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    _functional = "avg_pool2d"


class _AdaptiveAvgPoolNd(Module):
    """``AdaptiveAvgPool1d/2d/3d``: one layer over the functional form it names."""

    _functional = ""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return getattr(F, self._functional)(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _functional = "adaptive_avg_pool2d"


class MaxPool1d(_MaxPoolNd):
    _functional = "max_pool1d"


def _single(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class AvgPool1d(Module):

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _LPPoolNd(Module):
    """``LPPool1d/2d/3d``: one layer over the functional form it names."""

    _functional = ""

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):
        return getattr(F, self._functional)(input, float(self.norm_type), self.kernel_size,
                                            self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    _functional = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    _functional = "lp_pool2d"


class _AdaptiveMaxPoolNd(Module):
    """``AdaptiveMaxPool1d/2d/3d``: one layer over the functional form it names."""

    _functional = ""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return getattr(F, self._functional)(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _functional = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _functional = "adaptive_max_pool2d"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    _functional = "adaptive_avg_pool1d"
