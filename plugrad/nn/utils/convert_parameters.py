"""Flatten parameters into one vector and back (for line searches, second-order methods)."""
from __future__ import annotations

import plugrad
from plugrad import Tensor


def _check_same_device(params) -> None:
    devices = {p.device for p in params}
    if len(devices) > 1:
        raise TypeError(f"Found parameters on different devices: {sorted(map(str, devices))}")


def parameters_to_vector(parameters) -> Tensor:
    """All parameters, flattened and concatenated in order (differentiable)."""
    params = list(parameters)
    _check_same_device(params)
    return plugrad.cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of ``vec`` into the parameters' data."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.numel() != total:
        raise ValueError(f"vector_to_parameters: vector has {vec.numel()} elements, the "
                         f"parameters need {total}")
    offset = 0
    for p in params:
        n = p.numel()
        p.data = vec[offset:offset + n].reshape(tuple(p.shape)).detach().clone()
        offset += n
