"""Activations with a node of their own: relu, softmax, log_softmax, gelu, silu, hardtanh, elu.

Each keeps what PyTorch's keeps (relu and the softmax family their output, gelu its
input), so an in-place change of the input after the op is not an error where PyTorch's
is not either.
"""
from __future__ import annotations

from plugrad.core import autocast as _ac
from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import OUTPUT, KeepsOutput, Node
from plugrad.core.autograd.record import record
from plugrad.core.errors import DTypeError, DTypeNotImplementedError, c_dtype_name
from plugrad.core.grad_mode import _state
from plugrad.core.ops._bounds import clamp_data
from plugrad.core.ops._opmath import half_kernel, half_node
from plugrad.core.ops.declare import op
from plugrad.core.tensor import _wrap, _wrap_dim



# ====================================================================== relu
class ReluBackward0(KeepsOutput):
    """PyTorch's ``threshold_backward``: 0 where the output is <= 0 (so the gradient at 0
    is 0), else ``g`` (a NaN passes it)."""

    records_inputs = True  # create_graph: its gradients record its inputs (PyTorch)

    def grad(self, F, g, y):
        return (F.where(F.le(y, 0.0), 0.0, g),)


@op("relu", method="relu", inplace="relu_")
def relu(x):
    """``max(x, 0)`` (NaN stays NaN, -0.0 stays -0.0: PyTorch's clamp rule)."""
    if x.dtype is _dt.bool_:
        raise DTypeError("relu: Boolean inputs not supported for relu")
    k = x._k
    r = _wrap(clamp_data(k, x._data, 0, None, x.dtype.is_floating_point), x.dtype, x.device, k)
    if x._rg and _state.enabled:
        record(r, ReluBackward0(), (x,), (OUTPUT,))
    return r


# ====================================================================== softmax family
@half_node
class SoftmaxBackward0(KeepsOutput):

    records_inputs = True  # create_graph: its gradients record its inputs (PyTorch)

    def grad(self, F, g, y):
        if not y.shape:  # a 0-d tensor is a one-element slice (0, or NaN where y is)
            return (F.reshape(F.softmax_backward(F.reshape(g, (1,)), F.reshape(y, (1,)), 0),
                              ()),)
        return (F.softmax_backward(g, y, self.axis),)


@half_node
class LogSoftmaxBackward0(KeepsOutput):

    records_inputs = True  # create_graph: its gradients record its inputs (PyTorch)

    def grad(self, F, g, y):
        if not y.shape:  # a 0-d tensor is a one-element slice (0, or NaN where y is)
            return (F.reshape(F.log_softmax_backward(F.reshape(g, (1,)), F.reshape(y, (1,)),
                                                     0), ()),)
        return (F.log_softmax_backward(g, y, self.axis),)


def _softmax_like(name, node_cls, x, dim, dtype):
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1  # PyTorch's legacy implicit choice
    if dtype is not None:
        x = x.to(_dt.get_dtype(dtype))
    axis = _wrap_dim(dim, x.ndim, name)
    k = x._k
    if not x.dtype.is_floating_point:
        if x.numel() == 0:  # PyTorch runs no kernel: an empty result of the input's dtype
            return _wrap(k.copy(x._data), x.dtype, x.device, k)
        kernel = f"{name}_lastdim_kernel_impl" if axis >= x.ndim - 1 else f"{name}_kernel_impl"
        raise DTypeNotImplementedError(
            f"{name}: \"{kernel}\" not implemented for '{c_dtype_name(x.dtype)}' ({name} "
            f"takes floating point tensors: pass dtype=plugrad.float32 to convert)")
    if x.ndim == 0:  # a one-element slice: 1 (0), and NaN for nan / inf inputs (PyTorch)
        data = k.reshape(half_kernel(k, k.reshape(x._data, (1,)),
                                     lambda d: getattr(k, name)(d, 0)), ())
    elif x.numel() == 0:  # nothing to normalise (kernels need a non-empty axis for max)
        data = k.copy(x._data)
    else:
        data = half_kernel(k, x._data, lambda d: getattr(k, name)(d, axis))
    r = _wrap(data, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = node_cls()
        node.axis = axis
        record(r, node, (x,), (OUTPUT,))
    return r


@op("softmax", method="softmax")
def softmax(x, dim=None, dtype=None):
    if _ac.active: x, = _ac.autocast_args("softmax", x, out_dtype=dtype)
    return _softmax_like("softmax", SoftmaxBackward0, x, dim, dtype)


@op("log_softmax", method="log_softmax")
def log_softmax(x, dim=None, dtype=None):
    if _ac.active: x, = _ac.autocast_args("log_softmax", x, out_dtype=dtype)
    return _softmax_like("log_softmax", LogSoftmaxBackward0, x, dim, dtype)


# ====================================================================== GELU
@half_node
class GeluBackward0(Node):

    def grad(self, F, g, x):
        return (F.gelu_backward(g, x, self.approximate),)


_GELU_BETA = 1.12837916709551257390 * 0.707106781186547524401 * 0.5  # M_2_SQRTPI M_SQRT1_2 / 2
_GELU_TANH_BETA = 1.41421356237309504880 * 1.12837916709551257390 * 0.5  # sqrt(2 / pi)
_GELU_KAPPA = 0.044715


def _gelu_double_backward(F, gg, g, x, approximate):
    """PyTorch's ``gelu_double_backward``: ``gg * g * gelu''(x)`` as its formula reads
    (``2 pdf - x² pdf``: NaN where ``x²`` overflows), or the tanh form's product rule."""
    if approximate != "tanh":
        sq = F.mul(x, x)
        pdf = F.mul(F.exp(F.mul(sq, -0.5)), _GELU_BETA)
        return F.mul(F.mul(gg, g), F.sub(F.mul(pdf, 2.0), F.mul(sq, pdf)))
    b, kappa = _GELU_TANH_BETA, _GELU_KAPPA
    x2 = F.mul(x, x)
    inner = F.mul(F.add(x, F.mul(F.mul(x2, x), kappa)), b)
    t = F.tanh(inner)
    e = F.exp(F.neg(F.abs(inner)))
    sech = F.div(F.mul(e, 2.0), F.add(F.mul(e, e), 1.0))  # 1 / cosh, without overflow
    f = F.mul(x, 0.5)
    gt = F.sub(1.0, F.mul(t, t))
    h = F.mul(F.add(F.mul(x2, 3 * kappa), 1.0), b)
    f_prime_gh = F.mul(F.mul(gt, h), 0.5)
    g_prime = F.mul(F.mul(F.mul(sech, 2.0), F.neg(F.mul(sech, t))), h)
    g_prime_fh = F.mul(F.mul(f, h), g_prime)
    h_prime_fg = F.mul(F.mul(f, gt), F.mul(x, 6 * kappa * b))
    d = F.add(F.add(F.mul(f_prime_gh, 2.0), g_prime_fh), h_prime_fg)
    return F.mul(F.mul(gg, g), d)


@half_node
class GeluBackwardBackward0(Node):
    """PyTorch's rules for ``gelu_backward(g, x)``: ``g`` gets ``gelu_backward(gg, x)``,
    ``x`` gets :func:`_gelu_double_backward` (the composite's own derivative was 0 where
    PyTorch's formula is NaN)."""

    def grad(self, F, gg, g, x):
        a = self.approximate
        return (F.gelu_backward(gg, x, a) if self.next[0] else None,
                _gelu_double_backward(F, gg, g, x, a) if self.next[1] else None)


def gelu_backward(g, x, approximate):
    """The kernel ``gelu_backward`` as a differentiable op (the Tensor binding of
    ``F.gelu_backward`` under ``create_graph``), with PyTorch's rules."""
    k = x._k
    out = k.gelu_backward(g._data, x._data, approximate)
    r = _wrap(out, _dt.get_dtype(k.dtype_of(out)), x.device, k)
    if _state.enabled and (g._rg or x._rg):
        node = GeluBackwardBackward0()
        node.approximate = approximate
        record(r, node, (g, x), (g, x))
    return r


@op(functional="gelu")
def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"gelu: expected a floating point input, got {x.dtype.name}")
    k = x._k
    # gelu(+inf) is inf in every dtype: PyTorch's float32 kernel gives NaN there with AVX-512
    # and inf with AVX2, so its answer is its CPU's, and plugrad keeps the mathematical one
    out = half_kernel(k, x._data, lambda d: k.gelu(d, approximate))
    r = _wrap(out, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = GeluBackward0()
        node.approximate = approximate
        record(r, node, (x,), (x,))
    return r


# ====================================================================== SiLU
@half_node
class SiluBackward0(Node):

    def grad(self, F, g, x):
        return (F.silu_backward(g, x),)


@op(functional="silu")
def silu(x, inplace=False):
    """``x * sigmoid(x)``, one kernel each way (``silu``, ``silu_backward``)."""
    if not x.dtype.is_floating_point:
        raise DTypeError(f"silu: expected a floating point input, got {x.dtype.name}")
    k = x._k
    r = _wrap(half_kernel(k, x._data, k.silu), x.dtype, x.device, k)
    if x._rg and _state.enabled:
        record(r, SiluBackward0(), (x,), (x,))
    return x.copy_(r) if inplace else r


@half_node
class MishBackward0(Node):
    """PyTorch's rule (its kernel and its differentiable form alike):
    ``g * (tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2))`` with ``sp = log1p(exp(x))``
    unthresholded: ``x * 0`` is 0 at huge ``|x|``, and the double backward is NaN where
    ``exp`` overflows, as there."""

    def grad(self, F, g, x):
        t = F.tanh(F.log1p(F.exp(x)))
        return (F.mul(g, F.add(t, F.mul(F.mul(x, F.sigmoid(x)), F.sub(1.0, F.mul(t, t))))),)


def mish_op(x):
    """``x * tanh(log1p(exp(x)))`` as PyTorch's kernel (``F.mish`` checks the dtype)."""
    k = x._k
    r = _wrap(half_kernel(k, x._data, lambda d: k.mul(d, k.tanh(k.log1p(k.exp(d))))),
              x.dtype, x.device, k)
    if x._rg and _state.enabled:
        record(r, MishBackward0(), (x,), (x,))
    return r


# ====================================================================== hardtanh, elu
def _inplace_result(name, x, r, inplace: bool):
    """``inplace=True``: ``r`` (whose node keeps ``r`` itself, not ``x``) written into ``x``,
    so backward does not need the overwritten input (PyTorch saves the result there)."""
    if not inplace:
        return r
    return x.copy_(r)


class HardtanhBackward0(KeepsOutput):
    """PyTorch's ``hardtanh_backward``: ``g`` strictly inside ``(min_val, max_val)`` (0 at
    the bounds, unlike clamp's inclusive rule; NaN passes ``g``), read from the output,
    which is inside exactly where the input is."""

    records_inputs = True  # create_graph: its gradients record its inputs (PyTorch)

    def grad(self, F, g, y):
        lo, hi = self.bounds
        return (F.where(F.logical_or(F.le(y, lo), F.ge(y, hi)), 0.0, g),)


@op(functional="hardtanh")
def hardtanh(x, min_val=-1.0, max_val=1.0, inplace=False):
    """``clamp(x, min_val, max_val)`` with hardtanh's gradient at the bounds."""
    if x.dtype is _dt.bool_:
        raise DTypeError("hardtanh: Boolean inputs not supported for hardtanh")
    if not x.dtype.is_floating_point:  # PyTorch truncates the bounds to the integer dtype
        min_val, max_val = int(min_val), int(max_val)
    k = x._k
    out = clamp_data(k, x._data, min_val, max_val, x.dtype.is_floating_point)
    r = _wrap(out, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = HardtanhBackward0()
        node.bounds = (min_val, max_val)
        record(r, node, (x,), (OUTPUT,))
    return _inplace_result("hardtanh", x, r, inplace)


@half_node
class EluBackward0(Node):
    """``g`` for ``x > 0``, ``g * alpha * exp(x)`` for ``x <= 0`` (NaN passes ``g``); the
    exponent is held at 0 for ``x >= 0``, so the second derivative at 0 is PyTorch's 0."""

    def grad(self, F, g, x):
        neg = F.mul(F.mul(g, self.alpha), F.exp(F.where(F.lt(x, 0.0), x, 0.0)))
        return (F.where(F.le(x, 0.0), neg, g),)


@half_node
class EluResultBackward0(KeepsOutput):
    """``elu(inplace=True)``, from the output as PyTorch's: ``g * (y + alpha)`` for
    ``y <= 0``, else ``g``."""

    def grad(self, F, g, y):
        return (F.where(F.le(y, 0.0), F.mul(g, F.add(y, self.alpha)), g),)


@op(functional="elu")
def elu(x, alpha=1.0, inplace=False):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""
    if not x.dtype.is_floating_point:
        raise DTypeError(f"elu: expected a floating point input, got {x.dtype.name}")
    k = x._k
    d = x._data
    out = half_kernel(k, d, lambda d: k.where(k.gt(d, 0), d,
                                              k.mul(k.expm1(k.minimum(d, 0)), alpha)))
    r = _wrap(out, x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = EluResultBackward0() if inplace else EluBackward0()
        node.alpha = float(alpha)
        record(r, node, (x,), (OUTPUT,) if inplace else (x,))
    return _inplace_result("elu", x, r, inplace)
