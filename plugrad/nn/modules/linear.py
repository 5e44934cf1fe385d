"""Affine layers: ``Identity``, ``Linear``, ``Bilinear``."""
from __future__ import annotations

import math

import plugrad
from plugrad.nn import functional as F
from plugrad.nn import init
from plugrad.nn.modules.module import Module
from plugrad.nn.parameter import Parameter


def _factory(device, dtype) -> dict:
    return {"device": device, "dtype": dtype}


class Identity(Module):
    """Returns its input (a placeholder that keeps a model's structure)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x W^T + b``, W of shape (out_features, in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(plugrad.empty(out_features, in_features, **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(plugrad.empty(out_features, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init._default_(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y_k = x1^T A_k x2 + b_k``."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(plugrad.empty(out_features, in1_features, in2_features,
                                              **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(plugrad.empty(out_features, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for attention's output projection (it shows in ``repr``)."""
