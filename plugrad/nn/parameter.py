"""``Parameter``: a tensor that a ``Module`` registers as learnable when assigned to it."""
from __future__ import annotations

import copy

import plugrad
from plugrad import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad and shares the array of the tensor it wraps."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = plugrad.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter: expected a Tensor, got {type(data).__name__}")
        t = data.detach()  # shares the array (and version counter), outside any graph
        t.__class__ = cls
        t.requires_grad_(requires_grad)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass  # all set up in __new__ (Tensor.__init__ is the legacy constructor)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = Parameter(self.detach().clone(), self.requires_grad)
        if self.grad is not None:
            out.grad = self.grad.detach().clone()
        out.__dict__.update(copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = out
        return out


class Buffer:
    """``nn.Buffer(t)``: marks a tensor to become a buffer when assigned to a Module attribute
    (as in PyTorch, what it returns is a plain tensor carrying the mark)."""

    def __new__(cls, data=None, *, persistent=True):
        t = (plugrad.empty(0) if data is None else data).detach()
        t._is_buffer = True
        t._buffer_persistent = persistent
        return t
