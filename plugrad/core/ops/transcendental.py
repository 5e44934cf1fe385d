"""Elementwise math beyond ``unary.py``: inverse trigonometric and hyperbolic functions, the
gamma family, ``erfc``/``erfinv``, ``atan2``, ``hypot``, ``copysign``, ``xlogy``,
``logaddexp`` and the small composites (``sinc``, ``deg2rad``, ``frac``, ``logit``, ...).

Integer and bool inputs promote to the default float dtype, as in PyTorch. Each gradient is
the formula of PyTorch's ``derivatives.yaml``, one rule per node; ops that are exact
compositions of differentiable ops are simply composed.
"""
from __future__ import annotations

import math

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import OUTPUT, KeepsOutput, Node
from plugrad.core.autograd.record import record, record_binary, recording
from plugrad.core.errors import DTypeError, DTypeNotImplementedError, c_dtype_name, kernel_error
from plugrad.core.grad_mode import _state, no_grad
from plugrad.core.ops import unary as _u
from plugrad.core.ops._base import tensors_only
from plugrad.core.ops.binary import _float_operands
from plugrad.core.ops.declare import op
from plugrad.core.tensor import Tensor, _wrap

#: the kernels of these names, for the Tensor binding of the gradient ops (tensor_ops.py)
KERNELS = ("asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "erfc",
           "erfinv", "lgamma", "digamma", "hypot", "copysign")
_SQRT_PI = math.sqrt(math.pi)
_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI


def _declare(fn, torch, method, inplace):
    return op(torch, method=method, inplace=inplace, name=fn.__name__)(fn)


def _unary(name, grad, saves="input", aliases=""):
    fn = _u.unary(name, grad=grad, saves=saves, declare=False)
    names = f"{name} {aliases}".strip()
    inplace = " ".join(n + "_" for n in names.split())
    return _declare(fn, names, names, inplace)


def _sq(F, v):
    return F.mul(v, v)


def _rsqrt(F, v):
    return F.div(1.0, F.sqrt(v))


asin = _unary("asin", lambda F, g, x: F.mul(g, _rsqrt(F, F.sub(1.0, F.mul(x, x)))),
              aliases="arcsin")
acos = _unary("acos", lambda F, g, x: F.neg(F.mul(g, _rsqrt(F, F.sub(1.0, F.mul(x, x))))),
              aliases="arccos")
atan = _unary("atan", lambda F, g, x: F.div(g, F.add(F.mul(x, x), 1.0)), aliases="arctan")
sinh = _unary("sinh", lambda F, g, x: F.mul(g, F.cosh(x)))
cosh = _unary("cosh", lambda F, g, x: F.mul(g, F.sinh(x)))
asinh = _unary("asinh", lambda F, g, x: F.mul(g, _rsqrt(F, F.add(F.mul(x, x), 1.0))),
               aliases="arcsinh")
acosh = _unary("acosh", lambda F, g, x: F.mul(g, _rsqrt(F, F.sub(F.mul(x, x), 1.0))),
               aliases="arccosh")
# PyTorch's ``g * (1 - x.pow(2)).reciprocal()``: its double backward is NaN at huge x
atanh = _unary("atanh", lambda F, g, x: F.mul(g, F.div(1.0, F.sub(1.0, F.pow(x, 2.0)))),
               aliases="arctanh")
erfc = _unary("erfc", lambda F, g, x: F.mul(F.mul(g, -_TWO_OVER_SQRT_PI),
                                            F.exp(F.neg(F.mul(x, x)))))
# PyTorch's rule reads the input (it recomputes erfinv), so erfinv_ then x.mul_(2) works
erfinv = _unary("erfinv", lambda F, g, x: F.mul(F.mul(g, 0.5 * _SQRT_PI),
                                                F.exp(_sq(F, F.erfinv(x)))))
lgamma = _unary("lgamma", lambda F, g, x: F.mul(g, F.digamma(x)))
digamma = _unary("digamma", lambda F, g, x: F.mul(g, polygamma_of(F, 1, x)))


# ---------------------------------------------------------------------- polygamma
def zeta_sum(F, s: int, q, terms: int):
    """Hurwitz ``zeta(s, q)`` for an integer ``s >= 2`` in gradient ops ``F``: the first
    ``terms`` terms of ``sum (q + k)^-s`` (enough that ``q + terms >= 10``), then
    Euler-Maclaurin at ``a = q + terms`` (the tail's Bernoulli series to ``a^-(s + 13)``)."""
    acc = None
    a = q
    for _ in range(terms):
        t = F.pow(a, float(-s))
        acc = t if acc is None else F.add(acc, t)
        a = F.add(a, 1.0)
    tail = F.add(F.div(F.pow(a, float(1 - s)), float(s - 1)), F.mul(F.pow(a, float(-s)), 0.5))
    rising, fact = float(s), 2.0
    for j, b in enumerate((1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6), 1):
        # B_2j / (2j)! * s (s + 1) ... (s + 2j - 2) * a^-(s + 2j - 1)
        tail = F.add(tail, F.mul(F.pow(a, float(-(s + 2 * j - 1))), b / fact * rising))
        rising *= (s + 2 * j - 1) * (s + 2 * j)
        fact *= (2 * j + 1) * (2 * j + 2)
    return tail if acc is None else F.add(acc, tail)


#: the most direct terms of a zeta sum: a non-integer ``x`` below ``-MAX_TERMS`` gets a
#: truncated sum (PyTorch's Cephes loop runs ``-x`` times there; every float beyond 2**52
#: is an integer, a pole, which needs no terms)
MAX_TERMS = 1 << 12


def _terms_for(q_min: float) -> int:
    if q_min != q_min or q_min == math.inf:
        return 10
    return min(MAX_TERMS, max(10, int(math.ceil(10.0 - q_min))))


def _host_min(F, x) -> float:
    if getattr(F, "tensors", False):
        return float(x.detach().min().item()) if x.numel() else 10.0
    n = 1
    for d in x.shape:
        n *= d
    return float(F.to_numpy(F.min(x, None, False))) if n else 10.0


def trigamma_of(F, x):
    """``polygamma(1, x)`` as PyTorch's CPU kernel computes it: below 0.5 the reflection
    ``-(pi / sin(pi x))^2`` of ``1 - x`` (finite, huge, at the poles where ``sin`` is not
    exactly 0), then six terms and the asymptotic series."""
    low = F.lt(x, 0.5)
    s = F.sin(F.mul(x, math.pi))
    refl = F.where(low, F.neg(F.div(math.pi * math.pi, F.mul(s, s))), 0.0)
    y = F.where(low, F.sub(1.0, x), x)
    acc = refl
    for _ in range(6):
        acc = F.add(acc, F.div(1.0, F.mul(y, y)))
        y = F.add(y, 1.0)
    ixx = F.div(1.0, F.mul(y, y))
    series = F.sub(1.0 / 6, F.mul(ixx, F.sub(1.0 / 30, F.mul(ixx, 1.0 / 42))))
    tail = F.div(F.add(F.add(F.div(1.0, F.mul(y, 2.0)), 1.0), F.mul(ixx, series)), y)
    out = F.add(acc, tail)
    return F.where(low, F.neg(out), out)


def polygamma_of(F, n: int, x):
    """``polygamma(n, x)`` in gradient ops ``F`` (``n >= 1``): ``(-1)^(n+1) n! zeta(n+1, x)``,
    ``±inf`` at the non-positive integers and ``-inf``, NaN at ``inf`` (PyTorch's: its
    Cephes zeta); ``n == 1`` is PyTorch's trigamma (0 at ``inf``, NaN at ``-inf``)."""
    if getattr(F, "tensors", False):  # create_graph: the op, whose gradient is polygamma's
        return polygamma(n, x)
    if n == 1:
        return trigamma_of(F, x)
    pole = F.logical_and(F.le(x, 0.0), F.eq(F.floor(x), x))
    skip = F.logical_or(pole, F.ne(x, x))  # poles and NaN need no terms
    terms = _terms_for(_host_min(F, F.where(skip, math.inf, x)))
    z = zeta_sum(F, n + 1, x, terms)
    out = F.mul(z, float((-1) ** (n + 1) * math.factorial(n)))
    out = F.where(pole, math.inf if n % 2 else -math.inf, out)  # -inf is a pole too
    return F.where(F.eq(x, math.inf), math.nan, out)  # Cephes' zeta at q = inf


class PolygammaBackward0(Node):
    """``d/dx polygamma(n, x) = polygamma(n + 1, x)``."""

    def grad(self, F, g, x):
        return (F.mul(g, polygamma_of(F, self.n + 1, x)),)


@op("polygamma", method={"polygamma": lambda self, n: polygamma(n, self)})
def polygamma(n, x):
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n (got {n!r})")
    if n == 0:
        return digamma(x)
    data, dt = _u.unary_input("polygamma", x)
    k = x._k
    r = _wrap(polygamma_of(k, n, data), dt, x.device, k)
    if x._rg and _state.enabled:
        node = PolygammaBackward0()
        node.n = n
        record(r, node, (x,), (x,), (data,))
    return r


# ---------------------------------------------------------------------- binary
def _binary(name, kernel, node_cls, a, b, keep_output=False, arrays=False):
    """Float operands, one kernel, a node saving both operands (and the output)."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(a).__name__}")
    k, dev, dt, ad, bd = _float_operands(name, a, b)
    if arrays:  # kernels written for two arrays: a number becomes a 0-d array
        ad = k.full((), ad, dt.name, dev.index) if isinstance(ad, (int, float)) else ad
        bd = k.full((), bd, dt.name, dev.index) if isinstance(bd, (int, float)) else bd
    try:
        out = kernel(k, ad, bd)
    except Exception as exc:
        raise kernel_error(name, exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if recording(a, b):
        sa = a if isinstance(a, Tensor) else ad
        sb = b if isinstance(b, Tensor) else bd
        if keep_output:
            record_binary(r, node_cls(), a, b, (sa, sb, OUTPUT), (ad, bd, None))
        else:
            record_binary(r, node_cls(), a, b, (sa, sb), (ad, bd))
    return r


def _no_ints(name, a, b):
    """PyTorch has only floating kernels for these (``"hypot_cpu" not implemented for
    'Long'``), chosen by the promoted dtype: an integer operand beside a float one is
    fine (it promotes), two integer ones are not."""
    ts = [v for v in (a, b) if isinstance(v, Tensor)]
    if not ts:
        return
    dt = _dt.result_type_of(tuple((v.dtype, v.ndim == 0) for v in ts))
    if not dt.is_floating_point and not any(isinstance(v, float) for v in (a, b)):
        raise DTypeNotImplementedError(f'{name}: not implemented for {c_dtype_name(dt)!r} '
                         f'tensors (expected floating point)')


def _square(F, v):
    return v * v if isinstance(v, (int, float)) else F.mul(v, v)


class Atan2Backward0(Node):
    """PyTorch's rule: ``recip = 1 / (a^2 + b^2)``, 0 where that sum is 0 (both operands
    0 or tiny: the gradient is 0 there, not inf), then ``(g * b) * recip`` and
    ``(g * -a) * recip``."""

    def grad(self, F, g, a, b):
        d = F.add(_square(F, a), _square(F, b))
        recip = F.where(F.eq(d, 0.0), 0.0, F.div(1.0, d))
        return (F.mul(F.mul(g, b), recip) if self.next[0] else None,
                F.mul(F.mul(g, -a if isinstance(a, (int, float)) else F.neg(a)), recip)
                if self.next[1] else None)


@op("atan2 arctan2", method="atan2 arctan2", inplace="atan2_ arctan2_")
def atan2(input, other):
    tensors_only("atan2", input, other)
    return _binary("atan2", lambda k, a, b: k.atan2(a, b), Atan2Backward0, input, other)


class HypotBackward0(KeepsOutput):
    """PyTorch's ``grad * self / result`` in that order (``grad * self`` may overflow to
    inf where ``grad / result * self`` would not)."""

    def grad(self, F, g, a, b, y):
        return (F.div(F.mul(g, a), y) if self.next[0] else None,
                F.div(F.mul(g, b), y) if self.next[1] else None)


@op("hypot", method="hypot", inplace="hypot_")
def hypot(input, other):
    tensors_only("hypot", input, other)
    _no_ints("hypot", input, other)
    return _binary("hypot", lambda k, a, b: k.hypot(a, b), HypotBackward0, input, other,
                   keep_output=True)


class CopysignBackward0(KeepsOutput):
    """PyTorch's ``copysign_tensor_self_backward``: ``g * (y / a)`` with the ratio masked to
    0 where ``a == 0`` after the division (so its double backward is NaN there, as
    PyTorch's); ``b`` gets zeros."""

    def grad(self, F, g, a, b, y):
        ga = gb = None
        if self.next[0]:
            ga = F.mul(g, F.where(F.eq(a, 0.0), 0.0, F.div(y, a)))
        if self.next[1]:
            gb = F.full(tuple(g.shape), 0.0, F.dtype_of(g), self.device.index)  # zeros_like
        return ga, gb


@op("copysign", method="copysign", inplace="copysign_")
def copysign(input, other):
    return _binary("copysign", lambda k, a, b: k.copysign(a, b), CopysignBackward0, input,
                   other, keep_output=True)


def _log_scalar(v: float, log_name: str) -> float:
    edge = 0.0 if log_name == "log" else -1.0
    if v != v or v > edge:
        return getattr(math, log_name)(v) if v == v and v != math.inf else v
    return -math.inf if v == edge else math.nan


def xlogy_of(F, a, b, log_name):
    """``a * log(b)`` (or ``log1p``), 0 where ``a == 0`` unless ``b`` is NaN, in ``F``; ``a``
    is an array, ``b`` an array or a number."""
    scalar_b = isinstance(b, (int, float))
    lg = _log_scalar(float(b), log_name) if scalar_b else getattr(F, log_name)(b)
    out = F.mul(a, lg)
    zero = F.eq(a, 0.0)
    if scalar_b:
        return out if b != b else F.where(zero, 0.0, out)
    return F.where(F.logical_and(zero, F.logical_not(F.isnan(b))), 0.0, out)


class XlogyBackward0(Node):
    """``xlogy(g, b)``, 0 where ``a == 0`` and ``b <= 0``; ``g a / b`` (PyTorch's)."""

    log_name, edge = "log", 0.0

    def grad(self, F, g, a, b):
        ga = gb = None
        if self.next[0]:
            ga = xlogy_of(F, g, b, self.log_name)
            ga = F.where(F.logical_and(F.eq(a, 0.0), F.le(b, self.edge)), 0.0, ga) \
                if not isinstance(b, (int, float)) else (
                    F.where(F.eq(a, 0.0), 0.0, ga) if b <= self.edge else ga)
        if self.next[1]:
            d = b if self.edge == 0.0 else (b + 1.0 if isinstance(b, (int, float))
                                            else F.add(b, 1.0))
            gb = F.div(F.mul(g, a), d)
        return ga, gb


class Xlog1pyBackward0(XlogyBackward0):
    log_name, edge = "log1p", -1.0


@op("xlogy", method="xlogy", inplace="xlogy_")
def xlogy(input, other):
    """``input * log(other)``, 0 where ``input == 0`` (unless ``other`` is NaN)."""
    return _binary("xlogy", lambda k, a, b: xlogy_of(k, a, b, "log"), XlogyBackward0,
                   input, other, arrays=isinstance(input, (int, float)))


def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input == 0`` (``torch.special.xlog1py``)."""
    return _binary("xlog1py", lambda k, a, b: xlogy_of(k, a, b, "log1p"), Xlog1pyBackward0,
                   input, other, arrays=isinstance(input, (int, float)))


class LogaddexpBackward0(Node):
    """``g / (1 + base**(b - a))`` and ``g / (1 + base**(a - b))``."""

    base = math.e

    def _w(self, F, d):
        return F.exp(d) if self.base == math.e else F.exp(F.mul(d, math.log(2.0)))

    def grad(self, F, g, a, b):
        ga = F.div(g, F.add(self._w(F, F.sub(b, a)), 1.0)) if self.next[0] else None
        gb = F.div(g, F.add(self._w(F, F.sub(a, b)), 1.0)) if self.next[1] else None
        return ga, gb


class Logaddexp2Backward0(LogaddexpBackward0):
    base = 2.0


def _logaddexp_kernel(base2):
    def kernel(k, a, b):
        m = k.maximum(a, b)
        d = k.neg(k.abs(k.sub(a, b)))
        if base2:
            t = k.mul(k.log1p(k.exp(k.mul(d, math.log(2.0)))), 1.0 / math.log(2.0))
        else:
            t = k.log1p(k.exp(d))
        out = k.add(m, t)
        return k.where(k.logical_and(k.eq(a, b), k.eq(k.abs(a), math.inf)), a, out)
    return kernel


@op("logaddexp", method="logaddexp")
def logaddexp(input, other):
    """``log(exp(a) + exp(b))`` without overflow; equal infinities give themselves."""
    tensors_only("logaddexp", input, other)
    _no_ints("logaddexp", input, other)
    return _binary("logaddexp", _logaddexp_kernel(False), LogaddexpBackward0, input, other,
                   arrays=True)


@op("logaddexp2", method="logaddexp2")
def logaddexp2(input, other):
    tensors_only("logaddexp2", input, other)
    _no_ints("logaddexp2", input, other)
    return _binary("logaddexp2", _logaddexp_kernel(True), Logaddexp2Backward0, input, other,
                   arrays=True)


# ---------------------------------------------------------------------- composites
@op("float_power", method="float_power", inplace="float_power_")
def float_power(input, exponent):
    """``pow`` computed in float64 (PyTorch's ``float_power``)."""
    a = input.double() if isinstance(input, Tensor) else float(input)
    b = exponent.double() if isinstance(exponent, Tensor) else float(exponent)
    return a ** b


def _float_power_inplace(self, exponent):
    """PyTorch: ``float_power_`` keeps its float64 result only in a float64 tensor (no cast
    back, unlike the other in-place ops)."""
    if isinstance(self, Tensor) and self.dtype is not _dt.float64:
        raise RuntimeError(f"float_power_: the base given to float_power_ has dtype "
                           f"{c_dtype_name(self.dtype)} but the operation's result requires "
                           f"dtype Double")


float_power.inplace_check = _float_power_inplace


def _float(x):
    return x if x.dtype.is_floating_point else x.to(_dt.get_default_dtype())


class SincBackward0(Node):
    """PyTorch's rule: ``g * (pi x cos(pi x) - sin(pi x)) / (x x pi)``, 0 where ``x x pi``
    is 0 (masked after: its double backward is NaN there, as PyTorch's)."""

    def grad(self, F, g, x):
        px = F.mul(x, math.pi)
        sq = F.mul(F.mul(x, x), math.pi)
        d = F.div(F.mul(g, F.sub(F.mul(px, F.cos(px)), F.sin(px))), sq)
        return (F.where(F.eq(sq, 0.0), 0.0, d),)


@op("sinc", method="sinc", inplace="sinc_")
def sinc(x):
    """``sin(pi x) / (pi x)``, 1 at 0 (gradient 0 there); half in float32 (PyTorch's
    opmath: ``pi x`` overflows float16 near its maximum)."""
    x = _float(x)
    with no_grad():
        w = x.float() if x.dtype in (_dt.float16, _dt.bfloat16) else x
        zero = w == 0
        px = w.where(~zero, 1.0) * math.pi
        r = (_u.sin(px) / px).where(~zero, 1.0)
        r = r.to(x.dtype) if w is not x else r
    if x._rg and _state.enabled:
        record(r, SincBackward0(), (x,), (x,))
    return r


@op("deg2rad", method="deg2rad", inplace="deg2rad_")
def deg2rad(x):
    return _float(x) * (math.pi / 180.0)


@op("rad2deg", method="rad2deg", inplace="rad2deg_")
def rad2deg(x):
    return _float(x) * (180.0 / math.pi)


@op("frac", method="frac", inplace="frac_")
def frac(x):
    """``x - trunc(x)`` (sign of ``x``), floating tensors only as in PyTorch."""
    if not x.dtype.is_floating_point:
        raise DTypeError(f"frac: not implemented for {c_dtype_name(x.dtype)!r} tensors")
    return x - _u.trunc(x)


class LogitBackward0(Node):
    """``g / (x (1 - x))`` inside ``[eps, 1 - eps]`` and 0 outside; without ``eps``, NaN
    outside ``[0, 1]`` (PyTorch's ``logit_backward``)."""

    def grad(self, F, g, x):
        lo, hi = (0.0, 1.0) if self.eps is None else (self.eps, 1.0 - self.eps)
        out = F.div(g, F.mul(x, F.sub(1.0, x)))
        outside = F.logical_or(F.lt(x, lo), F.gt(x, hi))
        return (F.where(outside, math.nan if self.eps is None else 0.0, out),)


@op("logit", method="logit", inplace="logit_")
def logit(x, eps=None):
    """``log(z / (1 - z))`` with ``z`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    data, dt = _u.unary_input("logit", x)
    k = x._k
    z = data if eps is None else k.minimum(k.maximum(data, float(eps)), 1.0 - float(eps))
    r = _wrap(k.log(k.div(z, k.sub(1.0, z))), dt, x.device, k)
    if x._rg and _state.enabled:
        node = LogitBackward0()
        node.eps = None if eps is None else float(eps)
        record(r, node, (x,), (x,), (data,))
    return r
