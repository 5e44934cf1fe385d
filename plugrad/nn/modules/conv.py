"""Convolutions: ``Conv1d``, ``Conv2d`` (stride, padding incl. 'same'/'valid', dilation,
groups, bias; zero padding)."""
from __future__ import annotations


import plugrad
from plugrad.nn import functional as F
from plugrad.nn import init
from plugrad.nn.modules.module import Module
from plugrad.nn.parameter import Parameter


def _ntuple(v, n: int) -> tuple:
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    if len(v) != n:
        raise ValueError(f"expected an int or {n} ints, got {v}")
    return v


class _ConvNd(Module):
    """Shared parameters, initialisation and repr of the convolutions."""

    _n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        n = self._n
        name = type(self).__name__
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        if padding_mode != "zeros":
            raise NotImplementedError(f"{name}: padding_mode {padding_mode!r} is not "
                                      f"supported (only 'zeros')")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: Invalid padding string {padding!r}, should be one "
                                 f"of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError(f"{name}: padding='same' is not supported for strided "
                                 f"convolutions")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _ntuple(kernel_size, n), _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation, self.padding_mode = _ntuple(dilation, n), padding_mode
        factory = {"device": device, "dtype": dtype}
        self.weight = Parameter(plugrad.empty(out_channels, in_channels // groups,
                                              *self.kernel_size, **factory))
        if bias:
            self.bias = Parameter(plugrad.empty(out_channels, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init._default_(self.weight, self.bias)

    def extra_repr(self) -> str:
        n = self._n
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) else \
                f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) or (C, L) inputs."""

    _n = 1

    def forward(self, input):
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) or (C, H, W) inputs."""

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

# PyTorch keeps the transposed convolutions in this module too (torch.nn.modules.conv.X)
from plugrad.nn.modules.conv_transpose import ConvTranspose1d, ConvTranspose2d  # noqa: E402,F401
