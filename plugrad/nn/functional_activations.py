"""More activations of ``torch.nn.functional``: selu, celu, prelu, rrelu, the hard and
shrink families, threshold, softmin, and the ``F.<name>_`` in-place spellings.

Each is a composition of public ops written so that its gradient at the kinks is the one
PyTorch's kernel gives (``derivatives.yaml``): a ``where`` picks the branch, so the gradient
at a boundary is the branch PyTorch's backward picks there (hardswish ``x/3 + 1/2`` on
``(-3, 3)``, hardsigmoid 0 at ±3, the shrinks 0 at ±lambda, threshold 0 at the threshold).
The exponential branches see ``min(x, 0)`` only, so the unused branch never overflows into
a NaN gradient. The last node takes PyTorch's name (``present_as``).
"""
from __future__ import annotations

import math

import plugrad
from plugrad.core.ops.prelu import prelu_kernel as _prelu_kernel
from plugrad.core.autograd.constant_grads import records as _records
from plugrad.core.dtypes import checked_scalar as _checked_scalar
from plugrad.core.errors import OpError as _OpError
from plugrad.core.autograd.node import present_as as _named
from plugrad.core.ops.declare import functional_namespace as _functional_namespace
from plugrad.nn._dtypes import expect_dtype as _expect

__all__ = ["selu", "selu_", "celu", "celu_", "prelu", "rrelu", "rrelu_", "hardswish",
           "hardsigmoid", "hardshrink", "softshrink", "tanhshrink", "threshold", "threshold_",
           "softmin", "elu_", "hardtanh_", "leaky_relu_"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _apply(x, fn, inplace: bool, node_name: str):
    """``fn(x)`` named as PyTorch's node, or written into ``x`` (computed from a copy where
    autograd records, so backward keeps the input it saved, as PyTorch's in-place forms).
    PyTorch's backward of each is one op of ``x``: its gradients record ``x``."""
    if not inplace:
        return _named(_records(fn(x), x), node_name)
    tracked = x.requires_grad and plugrad.is_grad_enabled()
    src = x.clone() if tracked else x
    return x.copy_(_records(fn(src), src))


def _negative_exp(x, alpha: float, inv_scale: float):
    """``alpha * (exp(x * inv_scale) - 1)`` of ``min(x, 0)``: finite everywhere."""
    return (x.clamp_max(0.0) * inv_scale).expm1() * alpha


def selu(input, inplace: bool = False):
    _expect("selu", input)
    # ``scale * elu(x, alpha)``: the core's elu node has PyTorch's rule (slope
    # ``alpha scale`` at 0 but second derivative 0 there, NaN passing ``g``)
    return _apply(input, lambda t: _functional_namespace()["elu"](t, _SELU_ALPHA) * _SELU_SCALE,
                  inplace, "EluBackward0")


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha: float = 1.0, inplace: bool = False):
    _expect("celu", input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu: alpha must not be 0")
    # the exponential below 0 only: both branches have slope 1 at 0, and PyTorch's second
    # derivative there is 0 (the linear one's); a NaN takes the linear branch, whose
    # gradient is ``g`` (PyTorch's ``x <= 0`` test is false), not the clamped exponential's 0
    return _apply(input, lambda t: plugrad.where(t < 0, _negative_exp(t, alpha, 1.0 / alpha),
                                                 t), inplace, "CeluBackward0")


def celu_(input, alpha: float = 1.0):
    return celu(input, alpha, inplace=True)


def prelu(input, weight):
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` has one entry or one per
    channel (dim 1; inputs of fewer than 2 dims have one channel)."""
    _expect("prelu", input)
    n = weight.numel()
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    if n != 1:
        if input.ndim == 0:
            raise RuntimeError(f"Not allow zero-dim input tensor when weight has {n} "
                               f"elements.")
        channels = input.shape[1] if input.ndim >= 2 else 1
        if channels != n:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
        w = weight.reshape((n,) + (1,) * (input.ndim - 2))
    else:
        w = weight.reshape(())
    return _prelu_kernel(input, w)


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False):
    """Leaky ReLU whose negative slope is drawn from ``U(lower, upper)`` per element in
    training, and is ``(lower + upper) / 2`` otherwise."""
    _expect("rrelu", input)
    if training:
        with plugrad.no_grad():
            r = plugrad.rand(tuple(input.shape), dtype=input.dtype, device=input.device)
            slope = plugrad.where(input > 0, 1.0, r * (upper - lower) + lower)
        return _apply(input, lambda t: t * slope, inplace, "RreluWithNoiseBackward0")
    s = (lower + upper) / 2
    return _apply(input, lambda t: plugrad.where(t > 0, t, t * s), inplace,
                  "RreluWithNoiseBackward0")


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):
    return rrelu(input, lower, upper, training, inplace=True)


def hardswish(input, inplace: bool = False):
    """``x * relu6(x + 3) / 6``; gradient 0 up to -3, ``x/3 + 1/2`` on ``(-3, 3)``, 1 from 3
    on (PyTorch's kernel). The quadratic piece is of ``x`` clamped to ``[-3, 3]``: where
    ``where`` does not pick it, its gradient is then ``0 * finite`` (at ``x = inf`` it was
    ``0 * inf``: NaN where PyTorch's is 1)."""
    _expect("hardswish", input)

    def piecewise(t):
        c = t.clamp(-3.0, 3.0)
        return plugrad.where(t <= -3.0, t * 0.0, plugrad.where(t < 3.0, c * (c + 3.0) / 6.0, t))
    return _apply(input, piecewise, inplace, "HardswishBackward0")


def hardsigmoid(input, inplace: bool = False):
    """``relu6(x + 3) / 6``; gradient ``1/6`` strictly inside ``(-3, 3)``, else 0 (NaN
    included: NaN's value is NaN, its gradient 0, as PyTorch's kernels)."""
    _expect("hardsigmoid", input)

    def fn(t):
        inside = plugrad.where(t.isnan(), math.nan, t / 6.0 + 0.5)
        # constants outside (inside * 0 was NaN at ±inf)
        return plugrad.where(t <= -3.0, 0.0, plugrad.where(t >= 3.0, 1.0, inside))
    return _apply(input, fn, inplace, "HardsigmoidBackward0")


def hardshrink(input, lambd: float = 0.5):
    _expect("hardshrink", input)
    inside = (input >= -lambd) & (input <= lambd)  # -> +0.0 (as PyTorch), not input * 0
    return _named(_records(input.where(~inside, 0.0), input), "HardshrinkBackward0")


def softshrink(input, lambd: float = 0.5):
    _expect("softshrink", input)
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _named(_records(plugrad.where(input > lambd, input - lambd, plugrad.where(
        input < -lambd, input + lambd, input * 0.0)), input), "SoftshrinkBackward0")


def tanhshrink(input):
    _expect("tanhshrink", input, ints=True)
    return input - input.tanh()


_FLOAT_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float"}


def _checked_float(name: str, v, dtype_name: str) -> float:
    """``v`` as PyTorch converts a scalar to a float type: a finite value beyond its range
    is an error (inf and NaN pass)."""
    v = float(v)
    if dtype_name in _FLOAT_NAMES and math.isfinite(v) and \
            abs(v) > float(plugrad.finfo(getattr(plugrad, dtype_name)).max):
        raise _OpError(f"{name}: value cannot be converted to type "
                       f"{_FLOAT_NAMES[dtype_name]} without overflow (got {v!r})")
    return v


def _threshold_scalars(dtype, threshold, value):
    """PyTorch's conversions: both to an integer dtype (truncated, range-checked), else
    ``threshold`` to the compute type (float32 for half) and ``value`` to the dtype."""
    if not dtype.is_floating_point:
        return (_checked_scalar("threshold", threshold, dtype),
                _checked_scalar("threshold", value, dtype))
    compute = "float64" if dtype is plugrad.float64 else "float32"
    return (_checked_float("threshold", threshold, compute),
            _checked_float("threshold", value, dtype.name))


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """``value`` where ``x <= threshold``, else ``x`` (NaN stays NaN); both numbers
    converted with PyTorch's range checks (an integer input compares in its dtype:
    ``x <= int(threshold)``, never through float32)."""
    _expect("threshold", input, ints=True)
    th, v = _threshold_scalars(input.dtype, threshold, value)
    half = input.dtype in (plugrad.float16, plugrad.bfloat16)  # compared in float32
    return _apply(input, lambda t: plugrad.where((t.float() if half else t) <= th, v, t)
                  .to(t.dtype), inplace, "ThresholdBackward0")


def threshold_(input, threshold: float, value: float):
    return globals()["threshold"](input, threshold, value, inplace=True)


def softmin(input, dim=None, _stacklevel: int = 3, dtype=None):
    _expect("softmin", input)
    if dtype is not None:
        input = input.to(dtype)
    return plugrad.softmax(-input, dim)


_core = _functional_namespace()


def elu_(input, alpha: float = 1.0):
    return _core["elu"](input, alpha, inplace=True)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    return _core["hardtanh"](input, min_val, max_val, inplace=True)


def leaky_relu_(input, negative_slope: float = 0.01):
    from plugrad.nn.functional import leaky_relu  # defined beside relu there
    return leaky_relu(input, negative_slope, inplace=True)
