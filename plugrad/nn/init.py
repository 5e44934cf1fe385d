"""``plugrad.nn.init``: in-place initialisers, PyTorch's formulas and defaults, run under
``no_grad`` so that initialising a Parameter is not recorded."""
from __future__ import annotations

import math

import plugrad

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
           "trunc_normal_", "orthogonal_", "dirac_"]


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for an activation (PyTorch's table)."""
    linear_fns = {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d", "sigmoid"}
    if nonlinearity in linear_fns:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = tensor[0][0].numel() if tensor.dim() > 2 else 1
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    with plugrad.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    with plugrad.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val: float):
    with plugrad.no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with plugrad.no_grad():
        return tensor.copy_(plugrad.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor, groups: int = 1):
    """Identity-preserving conv weights: channel i of each group passes straight through."""
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per_group = tensor.size(0) // groups
    n = min(out_per_group, tensor.size(1))
    with plugrad.no_grad():
        tensor.zero_()
        centre = tuple(s // 2 for s in tensor.shape[2:])
        for g in range(groups):
            for d in range(n):
                tensor[(g * out_per_group + d, d) + centre] = 1.0
    return tensor


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None):
    if 0 in tensor.shape:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None):
    if 0 in tensor.shape:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def _default_(weight, bias) -> None:
    """PyTorch's default initialisation of Linear and Conv layers: Kaiming-uniform with
    ``a=sqrt(5)`` for the weight, ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` for the bias (left
    at zero when the weight has no inputs)."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        if fan_in:
            bound = 1 / math.sqrt(fan_in)
            uniform_(bias, -bound, bound)


def trunc_normal_(tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None):
    """Normal(mean, std) conditioned on [a, b]: samples outside are redrawn (rejection), and
    after 100 rounds (only for a window far in a tail) any left are clamped."""
    with plugrad.no_grad():
        x = plugrad.randn(tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device,
                          generator=generator) * std + mean
        for _ in range(100):
            bad = (x - (a + b) / 2).abs() > (b - a) / 2  # outside [a, b]
            if not bool(bad.any()):
                break
            fresh = plugrad.randn(tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device,
                                  generator=generator) * std + mean
            x = plugrad.where(bad, fresh, x)
        return tensor.copy_(x.clamp(a, b))


def orthogonal_(tensor, gain: float = 1.0, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal sample (on the host)."""
    import numpy as np
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    rows, cols = tensor.size(0), tensor.numel() // tensor.size(0)
    flat = plugrad.randn(rows, cols, dtype=plugrad.float64, generator=generator).numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with plugrad.no_grad():
        return tensor.copy_(plugrad.tensor(q.reshape(tuple(tensor.shape)) * gain,
                                           dtype=tensor.dtype, device=tensor.device))
