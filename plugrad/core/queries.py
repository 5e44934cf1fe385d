"""``torch.*`` names that are not ops: Python-valued queries (``result_type``, ``can_cast``,
``broadcast_shapes``, ``is_nonzero``, ...), the math constants, the deprecated ``range``,
``scalar_tensor``/``asarray``/``frombuffer`` factories, and the ``torch.abs_``-style
function spellings of the in-place methods.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core.errors import broadcast_shapes as _broadcast_shapes
from plugrad.core.factories import arange, as_tensor, from_numpy, tensor
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops.inplace import _fill_inplace
from plugrad.core.random import rand, randn
from plugrad.core.tensor import Size, Tensor

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None
dtype = _dt.DType

_warn_always = [False]


# ---------------------------------------------------------------------- queries
def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (an error naming them if they do not)."""
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    if not shapes:
        return Size(())
    return Size(_broadcast_shapes("broadcast_shapes", *shapes))


def result_type(tensor1, tensor2):
    """The dtype PyTorch's type promotion gives an op on these two operands."""
    if not isinstance(tensor1, Tensor) and not isinstance(tensor2, Tensor):
        raise TypeError("result_type(): at least one argument must be a Tensor")
    dims = []
    for x in (tensor1, tensor2):
        if isinstance(x, Tensor):
            dims.append((x.dtype, x.ndim == 0))
    out = _dt.result_type_of(tuple(dims))
    for x in (tensor1, tensor2):
        if not isinstance(x, Tensor):
            out = _dt.result_with_scalar(out, x)
    return out


def can_cast(from_, to):
    """Whether type promotion may cast ``from_`` to ``to``: not floating to integral, not
    to bool from another kind."""
    a, b = _dt.get_dtype(from_), _dt.get_dtype(to)
    if a.is_floating_point and not b.is_floating_point:
        return False
    if a is not _dt.bool_ and b is _dt.bool_:
        return False
    return True


def is_complex(input):
    return False  # plugrad has no complex dtypes


def is_conj(input):
    return False


def is_neg(input):
    return False


def is_signed(input):
    return input.dtype.is_signed


def is_nonzero(input):
    """The truth of a one-element tensor (an error for any other number of elements)."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


def is_warn_always_enabled():
    return _warn_always[0]


def set_warn_always(b):
    _warn_always[0] = bool(b)


# ---------------------------------------------------------------------- factories
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None,
                  requires_grad=False):
    """A 0-d tensor of ``s`` (the default float dtype unless ``dtype`` says otherwise)."""
    return tensor(s, dtype=_dt.get_default_dtype() if dtype is None else dtype, device=device,
                  requires_grad=requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` as a tensor, sharing memory where it can unless ``copy=True``."""
    if copy:
        out = tensor(obj.detach() if isinstance(obj, Tensor) else obj, dtype=dtype,
                     device=device)
        if isinstance(obj, Tensor) and dtype is None and device is None:
            out = obj.detach().clone()
    else:
        out = as_tensor(obj, dtype=dtype, device=device)
        if copy is False and out is not obj and isinstance(obj, Tensor):
            raise ValueError("asarray(): can't alias the input with copy=False")
    if requires_grad:
        out.requires_grad_(True)
    return out


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor over the bytes of an object exporting the buffer protocol."""
    dt = _dt.get_dtype(dtype)
    arr = np.frombuffer(buffer, dtype=np.dtype(dt.name if dt is not _dt.bool_ else "bool"),
                        count=count, offset=offset)
    out = from_numpy(arr)
    if requires_grad:
        out.requires_grad_(True)
    return out


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,  # noqa: A001
          requires_grad=False):
    """``start, start + step, ..., end`` with ``end`` included (deprecated in PyTorch)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    n = int(math.floor((end - start) / step)) + 1
    dt = _dt.get_default_dtype() if dtype is None else dtype
    return (arange(max(n, 0), dtype=_dt.float64, device=device) * step + start).to(dt) \
        .requires_grad_(requires_grad)


# ---------------------------------------------------------------------- in-place functions
INPLACE_FUNCTIONS = """abs_ absolute_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_
    arctanh_ asin_ asinh_ atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_
    deg2rad_ detach_ erf_ erfc_ exp2_ exp_ expm1_ fix_ floor_ frac_ gcd_ i0_ lcm_ ldexp_ log10_
    log1p_ log2_ log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ round_ rsqrt_
    sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ index_put_
    conj_physical_ addmv_""".split()


def _inplace_function(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)``: the in-place method as a function."
    return fn


def inplace_functions() -> dict:
    return {n: _inplace_function(n) for n in INPLACE_FUNCTIONS}


# ---------------------------------------------------------------------- random fills
def _floating_fill(name, t):
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point tensor, got {t.dtype.name}")


def cauchy_(t, median=0.0, sigma=1.0, *, generator=None):
    """Fills ``t`` with Cauchy samples: ``median + sigma tan(pi (u - 1/2))``."""
    _floating_fill("cauchy_", t)
    u = rand(tuple(t.shape), dtype=t.dtype, device=t.device, generator=generator)
    return _fill_inplace(t, ((u - 0.5) * math.pi).tan() * sigma + median)


def log_normal_(t, mean=1.0, std=2.0, *, generator=None):
    """Fills ``t`` with ``exp(N(mean, std**2))`` samples."""
    _floating_fill("log_normal_", t)
    z = randn(tuple(t.shape), dtype=t.dtype, device=t.device, generator=generator)
    return _fill_inplace(t, (z * std + mean).exp())


def geometric_(t, p, *, generator=None):
    """Fills ``t`` with the number of Bernoulli(p) trials up to the first success (>= 1)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = rand(tuple(t.shape), dtype=_dt.float64, device=t.device, generator=generator)
    k = ((1.0 - u).log() / math.log1p(-p)).ceil().clamp_min(1.0)
    return _fill_inplace(t, k.to(t.dtype))


def angle(input):
    """The argument of a real number: 0 for ``x >= 0``, pi below (NaN stays NaN)."""
    x = input if input.dtype.is_floating_point else input.to(_dt.get_default_dtype())
    with no_grad():
        return (x < 0).to(x.dtype).mul(math.pi).where(~x.isnan(), math.nan)


def fill(input, value):
    """A new tensor of ``input``'s shape, dtype and device filled with ``value``."""
    return input.detach().clone().fill_(value)


def nonzero_static(input, *, size, fill_value=-1):
    """``nonzero(input)`` cut or padded (with ``fill_value``) to exactly ``size`` rows."""
    idx = input.nonzero()
    n, width = idx.shape[0], idx.shape[1]
    if n >= size:
        return idx[:size]
    rows = idx.tolist() + [[fill_value] * width] * (size - n)
    return tensor(rows, dtype=_dt.int64, device=input.device).reshape(size, width)


def bind_tensor_queries() -> None:
    """The Tensor methods among these (``x.is_nonzero()``, ...)."""
    for fn in (is_conj, is_neg, is_signed, is_nonzero, is_same_size, cauchy_, log_normal_,
               geometric_, angle, nonzero_static):
        setattr(Tensor, fn.__name__, fn)
