"""Activation layers: thin modules over ``nn.functional``."""
from __future__ import annotations

import plugrad
from plugrad.nn import functional as F
from plugrad.nn.modules.module import Module
from plugrad.nn.parameter import Parameter


class _Inplace(Module):

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):

    def forward(self, x):
        return F.relu(x, self.inplace)


class ReLU6(_Inplace):

    def forward(self, x):
        return F.relu6(x, self.inplace)


class SiLU(_Inplace):

    def forward(self, x):
        return F.silu(x, self.inplace)


class Mish(_Inplace):

    def forward(self, x):
        return F.mish(x, self.inplace)


class LeakyReLU(Module):

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                           else "")


class ELU(Module):

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x):
        return F.elu(x, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GELU(Module):

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Sigmoid(Module):

    def forward(self, x):
        return x.sigmoid()


class Tanh(Module):

    def forward(self, x):
        return x.tanh()


class Softplus(Module):

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x):
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class _DimModule(Module):

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_DimModule):

    def forward(self, x):
        return F.softmax(x, self.dim)


class LogSoftmax(_DimModule):

    def forward(self, x):
        return F.log_softmax(x, self.dim)


def _inplace_str(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class Hardtanh(Module):

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value=None, max_value=None):
        super().__init__()
        self.min_val = min_val if min_value is None else min_value
        self.max_val = max_val if max_value is None else max_value
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"Hardtanh: max_val ({self.max_val}) must be greater than "
                                 f"min_val ({self.min_val})")

    def forward(self, x):
        return F.hardtanh(x, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace)}"


class SELU(_Inplace):

    def forward(self, x):
        return F.selu(x, self.inplace)


class CELU(Module):

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x):
        return F.celu(x, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class PReLU(Module):
    """Leaky ReLU with a learnt slope: one, or one per channel (``num_parameters``)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(plugrad.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with plugrad.no_grad():
            self.weight.fill_(self.init)

    def forward(self, x):
        return F.prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, x):
        return F.rrelu(x, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self.inplace)}"


class Hardswish(_Inplace):

    def forward(self, x):
        return F.hardswish(x, self.inplace)


class Hardsigmoid(_Inplace):

    def forward(self, x):
        return F.hardsigmoid(x, self.inplace)


class Hardshrink(Module):

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, x):
        return F.hardshrink(x, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):

    def forward(self, x):
        return F.softshrink(x, self.lambd)


class Tanhshrink(Module):

    def forward(self, x):
        return F.tanhshrink(x)


class Softsign(Module):

    def forward(self, x):
        return F.softsign(x)


class LogSigmoid(Module):

    def forward(self, x):
        return F.logsigmoid(x)


class Threshold(Module):

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, x):
        return F.threshold(x, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self.inplace)}"


class GLU(Module):

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.glu(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_DimModule):

    def forward(self, x):
        return F.softmin(x, self.dim)


class Softmax2d(Module):
    """Softmax over the channels of ``(N, C, H, W)`` or ``(C, H, W)`` inputs."""

    def forward(self, x):
        if x.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {x.dim()}D "
                             f"instead")
        return F.softmax(x, -3)


# PyTorch keeps MultiheadAttention in torch.nn.modules.activation; importers find it here too.
from plugrad.nn.modules.attention import MultiheadAttention  # noqa: E402,F401
