"""Elementwise ops and their gradient rules, written once with Tensor ops."""
from __future__ import annotations

import math

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import INPLACE_HINT, Node
from plugrad.core.ops._base import (DTypeError, Tensor, _state, _wrap, attach, binary_operands,
                                    grad_for, kernel_error, save, sum_to, sum_to_array)

_SCALARS = (bool, int, float)


# ====================================================================== binary arithmetic
def _shape_only(t):
    """What a gradient rule needs of an operand it only reduces to: its shape and dtype
    (saving these rather than the tensor keeps its array free to go)."""
    return (t._data.shape, t.dtype) if isinstance(t, Tensor) else None


def _grad_meta(g, meta):
    """``g`` reduced to the shape and dtype recorded by ``_shape_only`` (None: no grad)."""
    if meta is None:
        return None
    shape, dtype = meta
    if g._data.shape != shape:
        g = sum_to(g, shape)
    return g if g.dtype is dtype else g.to(dtype)


def _mixed(node, dt, a, b) -> None:
    """Mark ``node`` when an operand's dtype differs from the result's ``dt``: its array
    rule then declines (the Tensor rule knows the promotions)."""
    if (isinstance(a, Tensor) and a.dtype is not dt) or \
            (isinstance(b, Tensor) and b.dtype is not dt):
        node.mixed = True


class _Binary(Node):
    """A binary op's node; ``mixed`` says the operands' dtypes differ from the result's.
    ``meta`` (shape and dtype per operand, see ``_shape_only``) stays None when both
    operands are tensors of the result's shape and dtype: nothing to reduce or cast."""

    mixed = False
    meta = None


def _record_operands(node, dt, a, b) -> None:
    if a.__class__ is b.__class__ and a.dtype is b.dtype and a._data.shape == b._data.shape:
        return  # the common case: meta stays None
    node.meta = (_shape_only(a), _shape_only(b))
    _mixed(node, dt, a, b)


class _AddLike(_Binary):
    """add/sub backward: needs only the operands' shapes and dtypes."""

    def backward(self, g):
        gb = None
        if self.next[1]:
            gb = -g if self.sign < 0 else g
        if self.meta is None:
            return (g if self.next[0] else None), gb
        a, b = self.meta
        return (_grad_meta(g, a) if self.next[0] else None), (
            None if gb is None else _grad_meta(gb, b))

    def backward_arrays(self, k, g):
        if self.mixed:
            return None
        ga = gb = None
        if self.next[0]:
            ga = g
        if self.next[1]:
            gb = k.neg(g) if self.sign < 0 else g
        if self.meta is not None:
            a, b = self.meta
            if ga is not None and ga.shape != a[0]:
                ga = sum_to_array(k, ga, a[0])
            if gb is not None and gb.shape != b[0]:
                gb = sum_to_array(k, gb, b[0])
        return ga, gb


class AddBackward0(_AddLike):
    """See the base class."""


class SubBackward0(_AddLike):
    """See the base class."""


def _add_like(op, sign, a, b, alpha):
    if alpha != 1:
        b = b * alpha
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype is b.dtype \
            and a.device is b.device and a.dtype is not _dt.bool_:
        k, dev, dt, ad, bd = a._k, a.device, a.dtype, a._data, b._data  # the common case
    elif b.__class__ is float and isinstance(a, Tensor) and a.dtype.kind == "f":
        k, dev, dt, ad, bd = a._k, a.device, a.dtype, a._data, b  # float tensor and number
    else:
        if sign < 0 and (_is_bool(a) or _is_bool(b)):
            raise DTypeError("sub: Subtraction, the `-` operator, with a bool tensor is not "
                             "supported. If you are trying to invert a mask, use the `~` or "
                             "`logical_not()` operator instead.")
        k, dev, dt, ad, bd = binary_operands(op, a, b)
    try:
        out = k.logical_or(ad, bd) if dt is _dt.bool_ else (
            k.add(ad, bd) if sign > 0 else k.sub(ad, bd))
    except Exception as exc:
        raise kernel_error(op, exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if _state.enabled and ((isinstance(a, Tensor) and a._rg) or (isinstance(b, Tensor) and b._rg)):
        node = AddBackward0() if sign > 0 else SubBackward0()
        node.sign = sign
        _record_operands(node, dt, a, b)
        attach(r, node, (a, b))
    return r


def add(a, b, *, alpha=1):
    return _add_like("add", 1, a, b, alpha)


def sub(a, b, *, alpha=1):
    return _add_like("sub", -1, a, b, alpha)


def rsub(a, b, alpha=1):
    return sub(b, a, alpha=alpha)


class MulBackward0(_Binary):

    def backward(self, g):
        a, b = self.saved
        ga = g * b if self.next[0] else None
        gb = g * a if self.next[1] else None
        if self.meta is None:
            return ga, gb
        return (None if ga is None else _grad_meta(ga, self.meta[0]),
                None if gb is None else _grad_meta(gb, self.meta[1]))

    def backward_arrays(self, k, g):
        if self.mixed:
            return None
        a, b = self.saved
        ga = gb = None
        if self.next[0]:
            ga = k.mul(g, b._data if isinstance(b, Tensor) else _as_float(b))
        if self.next[1]:
            gb = k.mul(g, a._data if isinstance(a, Tensor) else _as_float(a))
        if self.meta is not None:
            if ga is not None and ga.shape != self.meta[0][0]:
                ga = sum_to_array(k, ga, self.meta[0][0])
            if gb is not None and gb.shape != self.meta[1][0]:
                gb = sum_to_array(k, gb, self.meta[1][0])
        return ga, gb


def _as_float(value):
    """A Python scalar operand as the weak float a floating gradient is multiplied by."""
    return value if type(value) is float else float(value)


def mul(a, b):
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype is b.dtype \
            and a.device is b.device:
        k, dev, dt, ad, bd = a._k, a.device, a.dtype, a._data, b._data  # the common case
    elif b.__class__ is float and isinstance(a, Tensor) and a.dtype.kind == "f":
        k, dev, dt, ad, bd = a._k, a.device, a.dtype, a._data, b  # float tensor and number
    else:
        k, dev, dt, ad, bd = binary_operands("mul", a, b)
    try:
        out = k.logical_and(ad, bd) if dt is _dt.bool_ else k.mul(ad, bd)
    except Exception as exc:
        raise kernel_error("mul", exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if _state.enabled and ((isinstance(a, Tensor) and a._rg) or (isinstance(b, Tensor) and b._rg)):
        node = MulBackward0()
        # Each gradient needs only the other operand: save no more (an in-place update of
        # an operand that is not needed must not fail the version check).
        sa = a if isinstance(b, Tensor) and b._rg else None
        sb = b if isinstance(a, Tensor) and a._rg else None
        node.saved = (sa, sb)
        node.versions = (sa._vc[0] if isinstance(sa, Tensor) else None,
                         sb._vc[0] if isinstance(sb, Tensor) else None)
        _record_operands(node, dt, a, b)
        attach(r, node, (a, b))
    return r


class DivBackward0(_Binary):

    def backward(self, g):
        a, b = self.saved
        ga = grad_for(g / b, a) if self.next[0] else None
        gb = grad_for(-g * a / (b * b), b) if self.next[1] else None
        return ga, gb

    def backward_arrays(self, k, g):
        if self.mixed:
            return None
        a, b = self.saved
        ad = a._data if isinstance(a, Tensor) else _as_float(a)
        bd = b._data if isinstance(b, Tensor) else _as_float(b)
        ga = gb = None
        if self.next[0]:
            ga = sum_to_array(k, k.div(g, bd), a._data.shape)
        if self.next[1]:
            gb = sum_to_array(k, k.div(k.mul(k.neg(g), ad), k.mul(bd, bd)), b._data.shape)
        return ga, gb


def _as_float_operands(op, a, b):
    """Operands of an op that always computes in floating point (``int / int`` is float)."""
    k, dev, dt, ad, bd = binary_operands(op, a, b)
    if not dt.is_floating_point:
        dt = _dt.get_default_dtype()
        ad = k.astype(ad, dt.name) if not isinstance(ad, _SCALARS) else float(ad)
        bd = k.astype(bd, dt.name) if not isinstance(bd, _SCALARS) else float(bd)
    return k, dev, dt, ad, bd


def div(a, b, *, rounding_mode=None):
    if rounding_mode == "floor":
        return floor_divide(a, b)
    if rounding_mode == "trunc":
        q = div(a, b)
        out = q.trunc()
        dt = binary_operands("div", a, b)[2]
        return out if dt.is_floating_point else out.to(dt)
    if rounding_mode is not None:
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    k, dev, dt, ad, bd = _as_float_operands("div", a, b)
    try:
        out = k.div(ad, bd)
    except Exception as exc:
        raise kernel_error("div", exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if _state.enabled and ((isinstance(a, Tensor) and a._rg) or (isinstance(b, Tensor) and b._rg)):
        node = DivBackward0()
        save_any(node, a, b)
        _mixed(node, dt, a, b)
        attach(r, node, (a, b))
    return r


def rdiv(a, b):
    return div(b, a)


def save_any(node, *values):
    """Save operands that may be Python scalars (kept as they are, never version-checked)."""
    node.saved = values
    node.versions = tuple(v._vc[0] if isinstance(v, Tensor) else None for v in values)


def _check_int_division(op, k, dt, bd):
    if dt.kind in "iu":
        if isinstance(bd, _SCALARS):
            zero = bd == 0
        else:
            zero = bool(k.to_numpy(k.max(k.eq(bd, 0), None, False)).item()) if bd.shape != (0,) \
                else False
        if zero:
            raise ZeroDivisionError(f"{op}: integer division by zero")


def _refuse_bool(op, a, b=None):
    """PyTorch implements no arithmetic ``op`` for bool tensors; neither do the backends."""
    if any(isinstance(v, Tensor) and v.dtype is _dt.bool_ for v in (a, b)):
        raise DTypeError(f"{op}: not implemented for 'Bool' tensors (convert with .long() or "
                         f".float() first)")


def floor_divide(a, b):
    """``a // b`` rounding toward negative infinity (not differentiable)."""
    _refuse_bool("floor_divide", a, b)
    k, dev, dt, ad, bd = binary_operands("floor_divide", a, b)
    _check_int_division("floor_divide", k, dt, bd)
    try:
        out = k.floordiv(ad, bd)
    except Exception as exc:
        raise kernel_error("floor_divide", exc, a, b) from exc
    return _wrap(out, dt, dev, k)


class RemainderBackward0(Node):

    def backward(self, g):
        a, b = self.saved
        ga = grad_for(g, a) if self.next[0] else None
        gb = grad_for(-g * floor_divide(a, b), b) if self.next[1] else None
        return ga, gb


def remainder(a, b):
    """Python's ``%``: the result takes the sign of the divisor."""
    _refuse_bool("remainder", a, b)
    k, dev, dt, ad, bd = binary_operands("remainder", a, b)
    _check_int_division("remainder", k, dt, bd)
    try:
        out = k.remainder(ad, bd)
    except Exception as exc:
        raise kernel_error("remainder", exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if _state.enabled and ((isinstance(a, Tensor) and a._rg) or (isinstance(b, Tensor) and b._rg)):
        node = RemainderBackward0()
        save_any(node, a, b)
        attach(r, node, (a, b))
    return r


class PowBackward0(Node):
    """``a ** b``; at ``b == 0`` both gradients are 0 (so ``0 ** 0`` has zero gradients)."""

    def backward(self, g):
        a, b, y = self.saved
        ga = gb = None
        if self.next[0]:
            if isinstance(b, _SCALARS):
                ga = g * 0.0 if b == 0 else (g * b if b == 2 else g * b * a ** (b - 1))
                if b == 2:
                    ga = ga * a
            else:
                # b - 1 is replaced where b == 0, so 0 ** 0 never computes 0 * inf (NaN)
                ga = where(b == 0, 0.0, g * b * a ** where(b == 0, 1.0, b - 1))
            ga = grad_for(ga, a)
        if self.next[1]:
            base = a if isinstance(a, Tensor) else float(a)
            if isinstance(base, Tensor):
                logs = where((base == 0) & (b >= 0), 0.0, log(base))
            else:
                logs = math.log(base) if base > 0 else (0.0 if base == 0 else math.nan)
            gb = grad_for(g * y * logs, b)
        return ga, gb

    def backward_arrays(self, k, g):
        a, b, _ = self.saved
        if self.next[1] or not isinstance(b, _SCALARS):
            return None  # a tensor exponent: the Tensor rule
        if b == 0:
            ga = k.mul(g, 0.0)
        elif b == 2:
            ga = k.mul(k.mul(g, 2.0), a._data)
        else:
            ga = k.mul(k.mul(g, float(b)), k.pow(a._data, float(b - 1)))
        return (sum_to_array(k, ga, a._data.shape), None)


def pow(a, b):
    if (b.__class__ is int or b.__class__ is float) and isinstance(a, Tensor) \
            and a.dtype.kind == "f":  # the common ``x ** 2``: no promotion, no checks
        k, dev, dt, ad, bd = a._k, a.device, a.dtype, a._data, float(b)
    else:
        _refuse_bool("pow", a, b)
        k, dev, dt, ad, bd = binary_operands("pow", a, b)
    if dt.kind in "iu":
        negative = (bd < 0) if isinstance(bd, _SCALARS) else bool(
            k.to_numpy(k.max(k.lt(bd, 0), None, False)).item()) if _numel(bd) else False
        if negative:
            raise DTypeError("pow: Integers to negative integer powers are not allowed.")
    try:
        out = k.pow(ad, bd)
    except Exception as exc:
        raise kernel_error("pow", exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if _state.enabled and ((isinstance(a, Tensor) and a._rg) or (isinstance(b, Tensor) and b._rg)):
        node = PowBackward0()
        y = r._alias() if isinstance(b, Tensor) and b._rg else None
        save_any(node, a, b, y)
        attach(r, node, (a, b))
    return r


def _numel(arr) -> int:
    n = 1
    for s in arr.shape:
        n *= s
    return n


def fmod(a, b):
    """C's ``fmod``: the remainder of division rounded toward zero (sign of ``a``)."""
    _refuse_bool("fmod", a, b)
    if isinstance(a, Tensor) and isinstance(b, Tensor) or isinstance(a, Tensor):
        q = div(a, b, rounding_mode="trunc")
        return a - q * b
    raise TypeError("fmod: expected a Tensor as the first argument")


def rpow(a, b):
    return pow(b, a)


class MaximumBackward0(Node):
    """Ties split the gradient evenly between both operands, as PyTorch does."""

    def backward(self, g):
        a, b = self.saved
        wins = (a < b) if self.flip else (a > b)
        share = wins.to(g.dtype) + (a == b).to(g.dtype) * 0.5
        ga = grad_for(g * share, a) if self.next[0] else None
        gb = grad_for(g * (1.0 - share), b) if self.next[1] else None
        return ga, gb


def _extremum(op, a, b, flip):
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{op}(): argument 'other' must be Tensor, not "
                        f"{type(b if isinstance(a, Tensor) else a).__name__}")
    k, dev, dt, ad, bd = binary_operands(op, a, b)
    try:
        out = k.minimum(ad, bd) if flip else k.maximum(ad, bd)
    except Exception as exc:
        raise kernel_error(op, exc, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if _state.enabled and (a._rg or b._rg):
        node = MaximumBackward0()
        node.flip = flip
        save(node, a, b)
        attach(r, node, (a, b))
    return r


def maximum(a, b):
    return _extremum("maximum", a, b, False)


def minimum(a, b):
    return _extremum("minimum", a, b, True)


# ====================================================================== comparison, logic
def _compare(op, kernel, a, b):
    k, dev, dt, ad, bd = binary_operands(op, a, b)
    try:
        out = getattr(k, kernel)(ad, bd)
    except Exception as exc:
        raise kernel_error(op, exc, a, b) from exc
    return _wrap(out, _dt.bool_, dev, k)


def eq(a, b): return _compare("eq", "eq", a, b)
def ne(a, b): return _compare("ne", "ne", a, b)
def lt(a, b): return _compare("lt", "lt", a, b)
def le(a, b): return _compare("le", "le", a, b)
def gt(a, b): return _compare("gt", "gt", a, b)
def ge(a, b): return _compare("ge", "ge", a, b)


def _logical(op, kernel, a, b):
    k, dev, dt, ad, bd = binary_operands(op, a, b)  # both operands now have dtype dt
    is_bool = dt is _dt.bool_
    ad = bool(ad) if isinstance(ad, _SCALARS) else (ad if is_bool else k.ne(ad, 0))
    bd = bool(bd) if isinstance(bd, _SCALARS) else (bd if is_bool else k.ne(bd, 0))
    return _wrap(getattr(k, kernel)(ad, bd), _dt.bool_, dev, k)


def logical_and(a, b): return _logical("logical_and", "logical_and", a, b)
def logical_or(a, b): return _logical("logical_or", "logical_or", a, b)
def logical_xor(a, b): return _logical("logical_xor", "logical_xor", a, b)


def bitwise_and(a, b):
    if _is_bool(a) and _is_bool(b):
        return logical_and(a, b)
    raise DTypeError("bitwise_and: only bool tensors are supported")


def bitwise_or(a, b):
    if _is_bool(a) and _is_bool(b):
        return logical_or(a, b)
    raise DTypeError("bitwise_or: only bool tensors are supported")


def bitwise_xor(a, b):
    if _is_bool(a) and _is_bool(b):
        return logical_xor(a, b)
    raise DTypeError("bitwise_xor: only bool tensors are supported")


def _is_bool(v) -> bool:
    return v.dtype is _dt.bool_ if isinstance(v, Tensor) else isinstance(v, bool)


def logical_not(x):
    k = x._k
    data = x._data if x.dtype is _dt.bool_ else k.ne(x._data, 0)
    return _wrap(k.logical_not(data), _dt.bool_, x.device, k)


def bitwise_not(x):
    if x.dtype is not _dt.bool_:
        raise DTypeError("bitwise_not: only bool tensors are supported")
    return logical_not(x)


# ====================================================================== where
class WhereBackward0(Node):

    def backward(self, g):
        (cond,) = self.saved
        ma, mb = self.meta
        return (None,
                _grad_meta(where(cond, g, 0.0), ma) if self.next[1] else None,
                _grad_meta(where(cond, 0.0, g), mb) if self.next[2] else None)


def where(cond, a=None, b=None):
    """``a`` where ``cond`` else ``b``; with only ``cond``, the indices of its non-zeros."""
    if a is None and b is None:
        return cond.nonzero(as_tuple=True)
    if not isinstance(cond, Tensor):
        raise TypeError("where: condition must be a Tensor")
    if cond.dtype is not _dt.bool_:
        cond = cond != 0
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        k, dev, dt, ad, bd = binary_operands("where", a, b)
        other = a if isinstance(a, Tensor) else b
        if cond.device is not dev:
            from plugrad.core.ops._base import check_device
            check_device("where", cond, other)
    else:
        k, dev = cond._k, cond.device
        dt = _dt.result_type_of(((_dt.scalar_dtype(a), True), (_dt.scalar_dtype(b), True)))
        ad = k.full((), a, dt.name, dev.index)
        bd = b
    try:
        out = k.where(cond._data, ad, bd)
    except Exception as exc:
        raise kernel_error("where", exc, cond, a, b) from exc
    r = _wrap(out, dt, dev, k)
    if _state.enabled and ((isinstance(a, Tensor) and a._rg) or (isinstance(b, Tensor) and b._rg)):
        node = WhereBackward0()
        node.saved = (cond,)
        node.versions = (cond._vc[0],)
        node.meta = (_shape_only(a), _shape_only(b))
        attach(r, node, (cond, a, b))
    return r


# ====================================================================== unary
def _unary_input(op, x, float_only=True):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if float_only and not x.dtype.is_floating_point:
        dt = _dt.get_default_dtype()
        return x._k.astype(x._data, dt.name), dt
    return x._data, x.dtype


def _make_unary(op, kernel, grad_rule, saves="input", float_only=True):
    """Define an elementwise op from its kernel name and its gradient rule.

    ``grad_rule(g, x, y)`` returns the input gradient; ``saves`` says whether ``x`` (the
    input), ``y`` (the output) or neither is kept for it.
    """
    node_name = "".join(p.capitalize() for p in op.split("_")) + "Backward0"

    def backward(self, g):
        x = self.saved[0] if self.saved else None
        y = self.output_tensor() if self.out_data is not None else None
        return (grad_rule(g, x, y),)

    node_cls = type(node_name, (_UnaryNode,), {"backward": backward})

    def fn(x):
        data, dt = _unary_input(op, x, float_only)
        out = getattr(x._k, kernel)(data)
        r = _wrap(out, dt, x.device, x._k)
        if x._rg and _state.enabled:
            node = node_cls()
            if saves == "input":
                save(node, x)
            elif saves == "output":
                node.keep_output(r)
            attach(r, node, (x,))
        return r

    fn.__name__ = op
    fn.__qualname__ = op
    return fn


class _UnaryNode(Node):
    """A node that may keep its own output: the array, not the Tensor, to avoid a
    reference cycle; it is rebuilt (with this node as ``grad_fn``) when backward needs it."""

    out_data = None
    _keeps_output = True

    def keep_output(self, r):
        self.out_data = r._data
        self.out_meta = (r.dtype, r.device, r._k)
        self.out_vc = r._vc
        self.out_version = r._vc[0]

    def output_tensor(self):
        if self.out_vc[0] != self.out_version:
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: the output of {self.name()} is at version "
                f"{self.out_vc[0]}; expected version {self.out_version} instead. It is a "
                f"[{self.out_meta[0].name} tensor of shape {list(self.out_data.shape)}] that "
                f"{self.name()} saved for its backward. {INPLACE_HINT}")
        dt, dev, k = self.out_meta
        y = _wrap(self.out_data, dt, dev, k)
        y._vc = self.out_vc
        if _state.enabled:
            y.grad_fn = self
            y._rg = True
        return y

    def output_array(self):
        """The kept output's array for an array rule (version-checked like the tensor)."""
        if self.out_vc[0] != self.out_version:
            self.output_tensor()  # raises the in-place error
        return self.out_data

    def release(self):
        Node.release(self)
        self.out_data = None


def _zeros_grad(g, x, y):
    return g * 0.0


_neg = _make_unary("neg", "neg", lambda g, x, y: -g, saves="none", float_only=False)


def neg(x):
    if isinstance(x, Tensor) and x.dtype is _dt.bool_:
        raise DTypeError("neg: Negation, the `-` operator, on a bool tensor is not supported. "
                         "If you are trying to invert a mask, use the `~` or `logical_not()` "
                         "operator instead.")
    return _neg(x)
abs = _make_unary("abs", "abs", lambda g, x, y: g * x.sign(), float_only=False)
exp = _make_unary("exp", "exp", lambda g, x, y: g * y, saves="output")
log = _make_unary("log", "log", lambda g, x, y: g / x)
sqrt = _make_unary("sqrt", "sqrt", lambda g, x, y: g / (y * 2.0), saves="output")
sin = _make_unary("sin", "sin", lambda g, x, y: g * x.cos())
cos = _make_unary("cos", "cos", lambda g, x, y: -g * x.sin())
tanh = _make_unary("tanh", "tanh", lambda g, x, y: g * (1.0 - y * y), saves="output")
sigmoid = _make_unary("sigmoid", "sigmoid", lambda g, x, y: g * y * (1.0 - y), saves="output")
log1p = _make_unary("log1p", "log1p", lambda g, x, y: g / (x + 1.0))
expm1 = _make_unary("expm1", "expm1", lambda g, x, y: g * (y + 1.0), saves="output")
erf = _make_unary("erf", "erf",
                  lambda g, x, y: g * (2.0 / math.sqrt(math.pi)) * (-(x * x)).exp())
_sign = _make_unary("sign", "sign", _zeros_grad, saves="none", float_only=False)


def sign(x):
    """-1, 0 or 1 by sign; a bool tensor is its own sign (no arithmetic on bool arrays)."""
    if isinstance(x, Tensor) and x.dtype is _dt.bool_:
        return x.clone()
    return _sign(x)


floor = _make_unary("floor", "floor", _zeros_grad, saves="none", float_only=False)
ceil = _make_unary("ceil", "ceil", _zeros_grad, saves="none", float_only=False)
round_ = _make_unary("round", "round", _zeros_grad, saves="none", float_only=False)


def _integer_passthrough(fn):
    """Rounding ops leave integer tensors as they are."""
    def wrapped(x, *args, **kwargs):
        if isinstance(x, Tensor) and not x.dtype.is_floating_point:
            return x.clone()
        return fn(x, *args, **kwargs)
    wrapped.__name__ = fn.__name__
    return wrapped


floor = _integer_passthrough(floor)
ceil = _integer_passthrough(ceil)


def round(x, *, decimals: int = 0):
    if not x.dtype.is_floating_point:
        return x.clone()
    if decimals:
        scale = 10.0 ** decimals
        return round_(x * scale) / scale
    return round_(x)


def trunc(x):
    if not x.dtype.is_floating_point:
        return x.clone()
    return where(x < 0, ceil(x), floor(x))


class ReluBackward0(Node):

    def backward(self, g):
        (x,) = self.saved
        return (where(x > 0, g, 0.0),)

    def backward_arrays(self, k, g):
        return (k.where(k.gt(self.saved[0]._data, 0.0), g, 0.0),)


def relu(x):
    """``max(x, 0)`` (NaN stays NaN); the gradient at 0 is 0."""
    k = x._k
    r = _wrap(k.maximum(x._data, 0), x.dtype, x.device, k)
    if x._rg and _state.enabled:
        node = ReluBackward0()
        save(node, x)
        attach(r, node, (x,))
    return r


def sigmoid_(x):
    return x.copy_(sigmoid(x))


def rsqrt(x):
    return 1.0 / sqrt(x)


def reciprocal(x):
    return 1.0 / x if x.dtype.is_floating_point else 1.0 / x.float()


def square(x):
    return x * x


def log2(x):
    return log(x) * (1.0 / math.log(2.0))


def log10(x):
    return log(x) * (1.0 / math.log(10.0))


def exp2(x):
    return exp(x * math.log(2.0))


def tan(x):
    return sin(x) / cos(x)


def isnan(x):
    if not x.dtype.is_floating_point:
        return _wrap(x._k.full(x._data.shape, False, "bool", x.device.index), _dt.bool_,
                     x.device, x._k)
    return _wrap(x._k.isnan(x._data), _dt.bool_, x.device, x._k)


def isinf(x):
    if not x.dtype.is_floating_point:
        return isnan(x)
    return _wrap(x._k.eq(x._k.abs(x._data), math.inf), _dt.bool_, x.device, x._k)


def isfinite(x):
    return logical_not(logical_or(isnan(x), isinf(x)))


def clamp(x, min=None, max=None):
    """Limit ``x`` to ``[min, max]``. Convention (PyTorch's): at the boundary the gradient
    passes through; ``min > max`` gives ``max`` everywhere."""
    if min is None and max is None:
        raise ValueError("clamp: At least one of 'min' or 'max' must not be None")
    out = x
    if min is not None:
        out = where(out < min, min, out) if isinstance(min, Tensor) else \
            _clamp_scalar(out, min, lower=True)
    if max is not None:
        out = where(out > max, max, out) if isinstance(max, Tensor) else \
            _clamp_scalar(out, max, lower=False)
    return out


class ClampBackward1(Node):

    def backward(self, g):
        (x,) = self.saved
        keep = (x >= self.bound) if self.lower else (x <= self.bound)
        return (where(keep, g, 0.0),)


def _clamp_scalar(x, bound, lower):
    k = x._k
    dt = _dt.result_with_scalar(x.dtype, bound)
    data = x._data if dt is x.dtype else k.astype(x._data, dt.name)
    bound_v = float(bound) if dt.is_floating_point else int(bound)
    out = k.maximum(data, bound_v) if lower else k.minimum(data, bound_v)
    if dt.is_floating_point:  # NaN stays NaN whatever the kernel's maximum does with it
        out = k.where(k.isnan(data), data, out)
    r = _wrap(out, dt, x.device, k)
    if x._rg and _state.enabled:
        node = ClampBackward1()
        node.bound = bound_v
        node.lower = lower
        save(node, x)
        attach(r, node, (x,))
    return r


def clamp_min(x, min):
    return clamp(x, min=min)


def clamp_max(x, max):
    return clamp(x, max=max)


def lerp(a, b, weight):
    return a + (b - a) * weight


def addcmul(x, t1, t2, *, value=1):
    return x + t1 * t2 * value


def addcdiv(x, t1, t2, *, value=1):
    return x + t1 / t2 * value
