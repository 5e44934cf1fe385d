"""``torch.autograd.function`` at PyTorch's path (``Function``, ``FunctionCtx``, ...)."""
from plugrad.core.autograd.function import Function, FunctionCtx, once_differentiable

__all__ = ["Function", "FunctionCtx", "once_differentiable"]
