"""More elementwise math PyTorch users reach for: ``fmax``/``fmin``, ``gcd``/``lcm``,
``heaviside``, ``signbit``, ``isposinf``/``isneginf``, ``nan_to_num``, ``frexp``/``ldexp``,
``nextafter``, ``i0``, ``mvlgamma``, and the complex-number spellings a real tensor answers
(``conj``, ``real``, ``sgn``, ``isreal``, ...).

All are compositions of backend ops (no kernel of their own), so every backend has them;
most have the gradients of the ops they compose (``fmax``'s goes to the operand it
picked). ``frexp`` and ``ldexp`` with an integer exponent have PyTorch's own rules (nodes).
"""
from __future__ import annotations

import math

from plugrad.core import dtypes as _dt
from plugrad.core.errors import DTypeError, c_dtype_name
from plugrad.core.autograd.grad_ops import cast
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record, record_binary
from plugrad.core.grad_mode import _state as _grad_state
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops._base import tensors_only
from plugrad.core.ops._dims import return_type
from plugrad.core.ops.declare import op
from plugrad.core.ops.shape import broadcast_tensors
from plugrad.core.tensor import Tensor
from plugrad.core.type_info import finfo

_frexp_result = return_type("frexp", "mantissa", "exponent")

#: precision (mantissa bits incl. the implicit one) and the least normal exponent, by dtype
_FLOAT_BITS = {"float16": (11, -14), "bfloat16": (8, -126), "float32": (24, -126),
               "float64": (53, -1022)}


def _floating(op_name, *xs):
    for x in xs:
        if isinstance(x, Tensor) and not x.dtype.is_floating_point:
            raise DTypeError(f"{op_name}: expected a floating point tensor, got "
                             f"{c_dtype_name(x.dtype)}")


def _to_float(x):
    return x if x.dtype.is_floating_point else x.to(_dt.get_default_dtype())


# ---------------------------------------------------------------------- NaN-ignoring extrema
@op("fmax", method="fmax")
def fmax(input, other):
    """The larger of the two, ignoring a NaN (NaN only where both are); ties go to ``input``."""
    tensors_only("fmax", input, other)
    pick = (input >= other).logical_or(other.isnan())
    return input.where(pick, other)


@op("fmin", method="fmin")
def fmin(input, other):
    """The smaller of the two, ignoring a NaN (NaN only where both are); ties go to ``input``."""
    tensors_only("fmin", input, other)
    pick = (input <= other).logical_or(other.isnan())
    return input.where(pick, other)


# ---------------------------------------------------------------------- integer math
def _integers(op_name, a, b):
    for x in (a, b):
        if isinstance(x, Tensor) and (x.dtype.is_floating_point or x.dtype is _dt.bool_):
            raise DTypeError(f"{op_name}: not implemented for '{c_dtype_name(x.dtype)}' "
                             f"(integer tensors only)")


@op("gcd", method="gcd", inplace="gcd_")
def gcd(input, other):
    """Greatest common divisor (non-negative; ``gcd(0, 0) == 0``), Euclid's algorithm run
    on every element at once until all remainders are 0."""
    _integers("gcd", input, other)
    dt = _dt.promote_types(input.dtype, other.dtype)
    a, b = broadcast_tensors(input.abs().to(dt), other.abs().to(dt))
    while bool((b != 0).any()):
        safe = b.where(b != 0, 1)
        a, b = b.where(b != 0, a), (a % safe).where(b != 0, 0)
    return a


@op("lcm", method="lcm", inplace="lcm_")
def lcm(input, other):
    """Least common multiple (non-negative; 0 where either is 0)."""
    _integers("lcm", input, other)
    g = gcd(input, other)
    safe = g.where(g != 0, 1)
    return (input.abs() // safe * other.abs()).where(g != 0, 0)


# ---------------------------------------------------------------------- sign and classes
@op("heaviside", method="heaviside", inplace="heaviside_")
def heaviside(input, values):
    """0 below 0, 1 above, ``values`` at 0 (no gradient, as in PyTorch)."""
    tensors_only("heaviside", input, values, ("input", "values"))
    if isinstance(values, Tensor) and values.dtype is not input.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different "
                           f"dtypes (got {c_dtype_name(input.dtype)} and "
                           f"{c_dtype_name(values.dtype)})")
    with no_grad():
        one = (input > 0).to(input.dtype)
        return values.where(input == 0, one).to(input.dtype)


@op("isposinf", method="isposinf")
def isposinf(input):
    return input.isinf().logical_and(input > 0)


@op("isneginf", method="isneginf")
def isneginf(input):
    return input.isinf().logical_and(input < 0)


@op("signbit", method="signbit")
def signbit(input):
    """True where the sign bit is set (``-0.0`` and negative NaN included)."""
    if input.dtype is _dt.bool_:
        return input.new_zeros(input.shape, dtype=_dt.bool_)
    if not input.dtype.is_floating_point:
        return input < 0
    with no_grad():
        return input.new_ones(()).copysign(input) < 0


@op("sgn", method="sgn", inplace="sgn_")
def sgn(input):
    """``sign`` (for a real tensor, ``x / |x|`` is its sign)."""
    return input.sign()


@op("positive", method="positive")
def positive(input):
    if input.dtype is _dt.bool_:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


@op("isreal", method="isreal")
def isreal(input):
    """A real tensor is real everywhere."""
    return input.new_ones(input.shape, dtype=_dt.bool_)


@op("conj resolve_conj resolve_neg conj_physical",
    method="conj resolve_conj resolve_neg conj_physical", inplace="conj_physical_")
def conj(input):
    """A real tensor is its own conjugate (the tensor itself, as PyTorch returns it)."""
    return input


@op("real")
def real(input):
    """The real part of a real tensor: the tensor itself (``Tensor.real`` is a property)."""
    return input


@op("imag")
def imag(input):
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


# PyTorch's properties (no method table has properties; they are bound here, beside the ops)
Tensor.real = property(real)
Tensor.imag = property(imag)


@op("adjoint", method="adjoint")
def adjoint(input):
    """The conjugate transpose of the last two dims (a view)."""
    if input.ndim < 2:
        raise RuntimeError(f"adjoint() is only supported for matrices or batches of matrices, "
                           f"got a {input.ndim}-d tensor")
    return input.transpose(-2, -1)


# ---------------------------------------------------------------------- floating point
def _exp2_exact(e, dtype):
    two = e.new_full((), 2.0, dtype=_dt.float64)
    return two.pow(e.to(_dt.float64)).to(dtype)


class FrexpBackward0(Node):
    """PyTorch's rule: ``g / exponent.exp2()`` with ``exp2`` of the int32 exponent taken in
    float32 (the default dtype): 0 above ``2**127``, inf (or NaN) below ``2**-149``, the
    quotient in float32 for a half-precision mantissa."""

    def grad(self, F, g, d):  # (d is in the quotient's dtype: float64's is exact)
        return (F.div(cast(F, g, F.dtype_of(d)), d),)


@op("frexp", method="frexp")
def frexp(input):
    """``(mantissa, exponent)`` with ``input == mantissa * 2**exponent`` and ``0.5 <=
    |mantissa| < 1`` (0, inf and NaN keep their value with exponent 0); ``exponent`` is
    int32. The exponent is found from ``log2`` and corrected by one step either way."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.frexp() only supports floating-point dtypes, got "
                           f"{c_dtype_name(input.dtype)}")
    with no_grad():
        mantissa, e, plain = _frexp_parts(input)
        exponent = e.to(_dt.int32)
    if input._rg and _grad_state.enabled:
        with no_grad():
            d = _exp2_exact(exponent, _dt.float32)
            d = d.to(_dt.float64) if input.dtype is _dt.float64 else d
        node = FrexpBackward0()
        record(mantissa, node, (input,), (d,))
        if input.dtype is not _dt.float64:  # the float32 quotient becomes the input's dtype
            node.meta = ((tuple(input.shape), input.dtype.name),)
    return _frexp_result(mantissa, exponent)


def _frexp_parts(input):
    x = input.to(_dt.float64)
    ax = x.abs()
    plain = (ax > 0).logical_and(ax.isfinite())
    e = ax.where(plain, 1.0).log2().floor().to(_dt.int64) + 1
    lo, hi = e // 2, e - e // 2  # two factors, each a finite power of two
    m = x * _exp2_exact(-lo, _dt.float64) * _exp2_exact(-hi, _dt.float64)
    up = m.abs() >= 1.0
    m, e = m.where(~up, m * 0.5), e + up.to(_dt.int64)
    down = (m.abs() < 0.5).logical_and(plain)
    m, e = m.where(~down, m * 2.0), e - down.to(_dt.int64)
    e = e.where(plain, 0)
    s1, s2 = _exp2_exact(-(e // 2), _dt.float64), _exp2_exact(-(e - e // 2), _dt.float64)
    # (each factor is finite where their product may not be, nor fit input's dtype)
    mantissa = input * s1 * s2 if input.dtype is _dt.float64 else \
        (input.to(_dt.float64) * s1 * s2).to(input.dtype)
    return mantissa.where(plain, input), e, plain


class LdexpBackward0(Node):
    """PyTorch's rule for an integer exponent: ``g * pow(2, other)`` with the power taken in
    other's integer dtype (saved here as a float factor): 0 for a negative exponent, and
    wrapping past the dtype's width (``-2**63`` at 63 in int64, 0 from 64 on)."""

    def grad(self, F, g, f):
        return F.mul(g, f), None


def _int_pow2(e, dtype):
    """PyTorch's integer ``pow(2, e)`` for an integer tensor ``e``, as values of ``dtype``."""
    top = e.dtype.itemsize * 8 - 1
    k = e.to(_dt.int64)
    f = _exp2_exact(k.clamp(0, top), _dt.float64)
    f = f.where(k != top, -f if e.dtype.is_signed else f)
    return f.where((k >= 0).logical_and(k <= top), 0.0).to(dtype)


def _ldexp_exact(x, e):
    """``x * 2**e`` rounded once (C's ``ldexp``) for a floating ``x`` and an int64 ``e``:
    float64 as ``(m * 2**a) * 2**b`` from ``x = m * 2**t0``, the first product exact and
    each power finite; narrower dtypes exactly in float64, rounded once to their own."""
    if x.dtype is not _dt.float64:
        r = x.to(_dt.float64) * _exp2_exact(e.clamp(-400, 400), _dt.float64)
        return r.to(x.dtype)
    m, t0, plain = _frexp_parts(x)
    t = t0 + e.clamp(-2200, 2200)
    normal = t >= -1021
    a = t.new_full((), 1).where(normal, (t + 1074).clamp_min(-1021))
    b = (t - 1).clamp_max(1024).where(normal, -1074)
    r = m * _exp2_exact(a, _dt.float64) * _exp2_exact(b, _dt.float64)
    return r.where(plain, x)


@op("ldexp", method="ldexp", inplace="ldexp_")
def ldexp(input, other):
    """``input * 2**other``, as PyTorch 2.13 computes it. A floating ``input`` with an
    integer exponent is C's ``ldexp`` with the exponent narrowed to a C int (wrapping mod
    2**32) and gradient ``g * pow(2, other)`` in other's integer dtype (its LdexpBackward0);
    otherwise it is ``input * pow(2.0, other)`` with the power in other's dtype (or the
    default float dtype for an integer exponent), both promoted after."""
    tensors_only("ldexp", input, other)
    if input.dtype.is_floating_point and not other.dtype.is_floating_point \
            and other.dtype is not _dt.bool_:
        with no_grad():
            x, e = broadcast_tensors(input, other)
            r = _ldexp_exact(x, e.to(_dt.int32).to(_dt.int64))
        if input._rg and _grad_state.enabled:
            with no_grad():
                f = _int_pow2(other, input.dtype)
            record_binary(r, LdexpBackward0(), input, other, (f,), (f._data,))
        return r
    if other.dtype.is_floating_point:
        return input * other.new_full((), 2.0).pow(other)
    dt = _dt.promote_types(input.dtype, other.dtype)
    dt = dt if dt.is_floating_point else _dt.get_default_dtype()
    return input.to(dt) * other.new_full((), 2.0, dtype=dt).pow(other)


@op("nextafter", method="nextafter", inplace="nextafter_")
def nextafter(input, other):
    """The next floating-point value after ``input`` towards ``other``: ``input`` plus or
    minus one unit in the last place (half a unit stepping down from a power of two)."""
    tensors_only("nextafter", input, other)
    _floating("nextafter", input, other)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"nextafter: expected both inputs to have the same dtype, got "
                           f"{c_dtype_name(input.dtype)} and {c_dtype_name(other.dtype)}")
    p, emin = _FLOAT_BITS[input.dtype.name]
    big = finfo(input.dtype).max
    tiny = 2.0 ** (emin - p + 1)  # the least subnormal
    with no_grad():
        x, y = broadcast_tensors(input, other)
        m, e = frexp(x.where(x.isfinite(), 1.0))
        e = e.to(_dt.int64)
        up = y > x
        away = up.logical_and(x > 0).logical_or((~up).logical_and(x < 0))
        power_of_two = m.abs() == 0.5
        step_e = e.clamp_min(emin + 1) - p
        step_e = step_e.where(away.logical_or(~power_of_two).logical_or(e <= emin + 1),
                              step_e - 1)
        ulp = _exp2_exact(step_e, x.dtype)
        out = x.where(~up, x + ulp).where(up, x - ulp)
        out = out.where(x != 0, x.new_full((), tiny).where(up, -tiny))
        out = out.where(~x.isinf(), x.sign() * big)
        out = out.where(x != y, y)
        return out.where(~(x.isnan().logical_or(y.isnan())), math.nan)


# ---------------------------------------------------------------------- special functions
def bessel_i(input, order, scaled=False):
    """``I_order(x)`` (order 0 or 1), times ``exp(-|x|)`` if ``scaled``: the power series up
    to ``|x| = 50`` (80 terms, all of one sign), the asymptotic series (16 terms) above, each
    term made from the last (no large coefficient meets ``exp(x)``). Half-precision inputs
    are computed in float32 and rounded once, as PyTorch's opmath (``sqrt(2 pi x)`` alone
    overflows float16)."""
    x = _to_float(input)
    if x.dtype in (_dt.float16, _dt.bfloat16):
        return bessel_i(x.to(_dt.float32), order, scaled).to(x.dtype)
    ax = x.abs()
    small = ax <= 50.0
    xs = x.where(small, 0.0)
    q = xs * xs * 0.25
    term = x.new_ones(()) if order == 0 else xs * 0.5
    total = term
    for k in range(1, 80):
        term = term * q / float(k * (k + order))
        total = total + term
    if scaled:
        total = total * (-xs.abs()).exp()
    xl = ax.where(~small, 51.0)
    z = 1.0 / (8.0 * xl)
    series = step = 1.0
    for k in range(1, 17):
        step = step * z * (((2 * k - 1) ** 2 - 4 * order * order) / k)
        series = series + step
    large = series / (2.0 * math.pi * xl).sqrt()
    if not scaled:
        large = large * xl.exp()
    if order == 1:
        large = large * x.sign()  # I1 is odd
    return total.where(small, large)


@op("i0", method="i0", inplace="i0_")
def i0(input):
    """The modified Bessel function of order 0 (see :func:`bessel_i`)."""
    return bessel_i(input, 0)


@op("mvlgamma", method="mvlgamma", inplace="mvlgamma_")
def mvlgamma(input, p):
    """The log of the multivariate gamma function of dimension ``p``: ``sum_i lgamma(x - i/2)
    + p(p-1)/4 log(pi)``."""
    if p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1 (got {p})")
    if input.dtype is _dt.bool_:
        raise RuntimeError("mvlgamma: The input tensor may not be a boolean tensor.")
    # (no domain check: PyTorch's was dropped; at or below (p-1)/2 lgamma's inf/nan show)
    x = _to_float(input)
    out = (x + 0.0).lgamma()  # PyTorch's x + 0: lgamma at -0 is taken at +0 (digamma -inf)
    for i in range(1, p):
        out = out + (x + (0.0 - i / 2)).lgamma()
    return out + p * (p - 1) / 4 * math.log(math.pi)
