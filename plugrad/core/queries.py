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
    conj_physical_""".split()


def _inplace_function(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)``: the in-place method as a function."
    return fn


def inplace_functions() -> dict:
    return {n: _inplace_function(n) for n in INPLACE_FUNCTIONS}


def bind_tensor_queries() -> None:
    """The Tensor methods among these (``x.is_nonzero()``, ...)."""
    for fn in (is_conj, is_neg, is_signed, is_nonzero, is_same_size):
        setattr(Tensor, fn.__name__, fn)
