"""Backends: plugins that carry out array primitives on one kind of device.

Nothing here imports ``plugrad.core``: a backend never sees Tensors or autograd.
"""
from plugrad.backends.contract import CONTRACT_VERSION, Backend

__all__ = ["Backend", "CONTRACT_VERSION"]
