"""Transposed convolutions: ``ConvTranspose1d``, ``ConvTranspose2d`` (PyTorch's weight
``(in_channels, out_channels / groups, *kernel_size)``, init, and ``output_size=``)."""
from __future__ import annotations

import plugrad
from plugrad.nn import functional as F
from plugrad.nn.modules.conv import _ConvNd, _ntuple
from plugrad.nn.modules.module import Module
from plugrad.nn.parameter import Parameter


class _ConvTransposeNd(_ConvNd):
    """Shared parameters, ``output_size`` handling and repr of the transposed convolutions."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        Module.__init__(self)
        n, name = self._n, type(self).__name__
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        if isinstance(padding, str):
            raise TypeError(f"{name}: padding must be an int or a tuple of ints, got "
                            f"{padding!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _ntuple(kernel_size, n), _ntuple(stride, n)
        self.padding, self.dilation = _ntuple(padding, n), _ntuple(dilation, n)
        self.output_padding, self.padding_mode = _ntuple(output_padding, n), padding_mode
        self.transposed = True
        factory = {"device": device, "dtype": dtype}
        self.weight = Parameter(plugrad.empty(in_channels, out_channels // groups,
                                              *self.kernel_size, **factory))
        if bias:
            self.bias = Parameter(plugrad.empty(out_channels, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = super().extra_repr()
        if self.output_padding != (0,) * self._n:
            at = s.find(", groups=")
            at = at if at >= 0 else (s.find(", bias=False") if ", bias=False" in s else len(s))
            s = s[:at] + f", output_padding={self.output_padding}" + s[at:]
        return s

    def _output_padding(self, x, output_size):
        """``output_padding`` that makes the output ``output_size`` (PyTorch's rule)."""
        n = self._n
        if output_size is None:
            return self.output_padding
        lead = 2 if x.ndim == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {x.ndim}D input, output_size must have "
                             f"{n} or {lead + n} elements (got {len(output_size)})")
        lo = [(x.shape[lead + d] - 1) * self.stride[d] - 2 * self.padding[d]
              + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        hi = [m + s - 1 for m, s in zip(lo, self.stride)]
        for size, a, b in zip(output_size, lo, hi):
            if size < a or size > b:
                raise ValueError(f"requested an output size of {output_size}, but valid "
                                 f"sizes range from {lo} to {hi} (for an input of "
                                 f"{list(x.shape[lead:])})")
        return tuple(int(s) - m for s, m in zip(output_size, lo))


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C, L) or (C, L) inputs."""

    _n = 1

    def forward(self, input, output_size=None):
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C, H, W) or (C, H, W) inputs."""

    def forward(self, input, output_size=None):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)
