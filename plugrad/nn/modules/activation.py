"""Activation layers: thin modules over ``nn.functional``."""
from __future__ import annotations

from plugrad.nn import functional as F
from plugrad.nn.modules.module import Module


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


# PyTorch keeps MultiheadAttention in torch.nn.modules.activation; importers find it here too.
from plugrad.nn.modules.attention import MultiheadAttention  # noqa: E402,F401
