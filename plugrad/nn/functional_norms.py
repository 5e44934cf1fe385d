"""Group, instance, RMS and local-response normalisation (``torch.nn.functional``).

Compositions of public Tensor ops (means, rsqrt, products), so they are differentiable
(twice) on every backend without kernels of their own. Statistics are biased, as
PyTorch's; instance norm's running variance is updated with the unbiased one, as
``batch_norm`` does for each instance.
"""
from __future__ import annotations

import plugrad
from plugrad.core.autograd.constant_grads import records as _records
from plugrad.core.autograd.node import present_as as _named
from plugrad.nn._dtypes import expect_dtype as _expect

__all__ = ["group_norm", "instance_norm", "rms_norm", "local_response_norm"]

#: ``std::numeric_limits<opmath_t>::epsilon()``: half types compute in float32
_EPS = {"float16": 2.0 ** -23, "bfloat16": 2.0 ** -23, "float32": 2.0 ** -23,
        "float64": 2.0 ** -52}


def _check_channels(op: str, x, **tensors) -> None:
    c = x.shape[1]
    for name, t in tensors.items():
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(f"{op}: expected {name} to be a vector of size equal to the "
                               f"number of channels in input ({c}), but got {name} of shape "
                               f"{list(t.shape)} and input of shape {list(x.shape)}")


def _opmath(x):
    """Half tensors are normalised in float32 (PyTorch's opmath: their variance overflows
    half), the result rounded once."""
    return x.float() if x.dtype in (plugrad.float16, plugrad.bfloat16) else x


def _scale_shift(x, mean, rstd, weight, bias, view):
    """PyTorch's kernels' ``x * a + b``, ``a = rstd * weight`` and ``b = bias - mean * a``
    per channel (``view`` puts those on ``x``'s dims; ``mean``/``rstd`` already do)."""
    a = rstd if weight is None else rstd * weight.to(x.dtype).reshape(view)
    b = -(mean * a) if bias is None else bias.to(x.dtype).reshape(view) - mean * a
    return x * a + b


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Normalise each of ``num_groups`` channel groups of each sample over its channels and
    spatial positions; then a per-channel affine map."""
    _expect("group_norm", input)
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    per = [n * c // num_groups, num_groups] + list(input.shape[2:])
    count = 1
    for s in per[:1] + per[2:]:
        count *= s
    if count == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {per}")
    _check_channels("group_norm", input, weight=weight, bias=bias)
    x = _opmath(input)
    xg = x.reshape(n, num_groups, -1)
    mean = xg.mean(-1, keepdim=True)
    var = (xg - mean).square().mean(-1, keepdim=True)
    # per (sample, channel): the group's statistics repeated over its channels
    cg = c // num_groups
    mean = mean.expand(n, num_groups, cg).reshape(n, c)
    rstd = (var + eps).rsqrt().expand(n, num_groups, cg).reshape(n, c)
    view = (1, c) + (1,) * (input.ndim - 2)
    stat = (n, c) + (1,) * (input.ndim - 2)
    y = _scale_shift(x, mean.reshape(stat), rstd.reshape(stat), weight, bias, view)
    return _named(y.to(input.dtype), "NativeGroupNormBackward0")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5):
    """Normalise each channel of each sample over its spatial positions (or with the
    running statistics when ``use_input_stats`` is False)."""
    _expect("instance_norm", input)
    if input.ndim < 2:
        raise ValueError(f"instance_norm: expected at least 2-D input (N, C, ...), got "
                         f"{input.ndim}-D input of shape {list(input.shape)}")
    _check_channels("instance_norm", input, weight=weight, bias=bias,
                    running_mean=running_mean, running_var=running_var)
    axes = tuple(range(2, input.ndim))
    x = _opmath(input)
    view = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if use_input_stats:
        spatial = 1
        for s in input.shape[2:]:
            spatial *= s
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {list(input.shape)}")
        mean = x.mean(axes, keepdim=True)
        var = (x - mean).square().mean(axes, keepdim=True)
        if running_mean is not None or running_var is not None:
            with plugrad.no_grad():
                c = input.shape[1]
                if running_mean is not None:
                    batch_mean = mean.detach().reshape(-1, c).mean(0)
                    running_mean.mul_(1 - momentum).add_(
                        (batch_mean * momentum).to(running_mean.dtype))
                if running_var is not None:
                    unbiased = var.detach().reshape(-1, c) * (spatial / (spatial - 1))
                    running_var.mul_(1 - momentum).add_(
                        (unbiased.mean(0) * momentum).to(running_var.dtype))
        rstd = (var + eps).rsqrt()
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("instance_norm: Expected running_mean and running_var to be "
                               "defined when use_input_stats is false")
        mean = running_mean.to(x.dtype).reshape(view)
        rstd = (running_var.to(x.dtype).reshape(view) + eps).rsqrt()
    # PyTorch's is batch_norm: one op of input and weight whose gradients record them, and
    # its x * alpha + beta
    y = _scale_shift(x, mean, rstd, weight, bias, view).to(input.dtype)
    return _records(y, input, weight)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims;
    ``eps`` defaults to the machine epsilon of the computing dtype (float32 for halves)."""
    _expect("rms_norm", input)
    if isinstance(normalized_shape, int):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        "of ints, not int")
    shape = tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(input.shape[input.ndim - k:]) != shape or input.ndim < k:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"rms_norm: Expected weight to be of same shape as "
                           f"normalized_shape, but got weight of shape {list(weight.shape)} "
                           f"and normalized_shape = {list(shape)}")
    if eps is None:
        eps = _EPS.get(input.dtype.name, 2.0 ** -23)
    x = input.float() if input.dtype in (plugrad.float16, plugrad.bfloat16) else input
    axes = tuple(range(input.ndim - k, input.ndim))
    y = (x * (x.square().mean(axes, keepdim=True) + eps).rsqrt()).to(input.dtype)
    return y * weight if weight is not None else y


def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0):
    """``x / (k + alpha * mean of x**2 over a window of `size` channels) ** beta``; the
    window is zero-padded (``size // 2`` before, ``(size - 1) // 2`` after) and always
    divided by ``size``, as PyTorch's average pooling of the squares (an int64 input's
    in integer division: its int64 average pool kernel)."""
    if input.dtype != plugrad.int64:
        _expect("local_response_norm", input)
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          "
                         f"input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    c = input.shape[1]
    before, after = size // 2, (size - 1) // 2
    rest = tuple(input.shape[2:])
    parts = [sq]
    if before:
        parts.insert(0, plugrad.zeros((input.shape[0], before) + rest, dtype=input.dtype,
                                      device=input.device))
    if after:
        parts.append(plugrad.zeros((input.shape[0], after) + rest, dtype=input.dtype,
                                   device=input.device))
    padded = plugrad.cat(parts, 1) if len(parts) > 1 else sq
    window = padded.narrow(1, 0, c)
    for j in range(1, size):
        window = window + padded.narrow(1, j, c)
    if input.dtype.is_floating_point:
        div = (window * (alpha / size) + k).pow(beta)
    else:
        div = (window.div(size, rounding_mode="trunc") * alpha + k).pow(beta)
    return input / div
