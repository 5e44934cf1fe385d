"""Moving elements: flip, roll, padding, and the triangles tril/triu."""
from __future__ import annotations

import builtins
import operator

from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record
from plugrad.core.errors import ShapeError, shape_str
from plugrad.core.factories import arange
from plugrad.core.grad_mode import _state
from plugrad.core.ops.declare import op
from plugrad.core.ops.join import cat, narrow
from plugrad.core.ops.select import where
from plugrad.core.ops.shape import clone, flatten, reshape
from plugrad.core.tensor import _wrap, _wrap_dim


class FlipBackward0(Node):

    def grad(self, F, g):
        return (F.flip(g, self.axes),)


def _dims_list(name, dims) -> tuple:
    """PyTorch's ``int[] dims`` argument: a tuple or list of ints (a bare int is a
    TypeError for the function, where only the method takes ``x.flip(0, 1)``)."""
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"{name}(): argument 'dims' must be tuple of ints, not "
                        f"{type(dims).__name__}")
    out = []
    for i, d in enumerate(dims):
        try:
            out.append(operator.index(d))
        except TypeError:
            raise TypeError(f"{name}(): argument 'dims' must be tuple of ints, but found "
                            f"element of type {type(d).__name__} at pos {i}") from None
    return tuple(out)


def _flip_method(self, *dims, **kwargs):
    """``x.flip(0, 1)``, ``x.flip((0, 1))`` and ``x.flip(dims=(0, 1))``."""
    if "dims" in kwargs and not dims:
        return flip(self, kwargs.pop("dims"), **kwargs)
    if kwargs or not dims:
        raise TypeError("flip() missing 1 required positional arguments: \"dims\"" if not dims
                        else f"flip() got unexpected keyword arguments {sorted(kwargs)}")
    return flip(self, dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list))
                else dims)


@op("flip", method={"flip": _flip_method})
def flip(x, dims):
    axes = [_wrap_dim(d, x.ndim, "flip") for d in _dims_list("flip", dims)]
    if len(set(axes)) < len(axes):
        dup = next(a for a in axes if axes.count(a) > 1)
        raise RuntimeError(f"flip: dim {dup} appears multiple times in the list of dims")
    axes = tuple(sorted(axes))
    if not axes or x.ndim == 0:
        return clone(x)  # PyTorch's flip copies even when no dimension is flipped
    r = _wrap(x._k.flip(x._data, axes), x.dtype, x.device, x._k)
    if x._rg and _state.enabled:
        node = FlipBackward0()
        node.axes = axes
        record(r, node, (x,))
    return r


@op("fliplr", method="fliplr")
def fliplr(x):
    if x.ndim < 2:
        raise ShapeError("fliplr: Input must be >= 2-d.")
    return flip(x, (1,))


@op("flipud", method="flipud")
def flipud(x):
    if x.ndim < 1:
        raise ShapeError("flipud: Input must be >= 1-d.")
    return flip(x, (0,))


@op("roll", method="roll")
def roll(x, shifts, dims=None):
    if dims is None:
        return reshape(roll(flatten(x), shifts, 0), x.shape)
    shifts = shifts if isinstance(shifts, (tuple, list)) else (shifts,)
    dims = dims if isinstance(dims, (tuple, list)) else (dims,)
    if len(shifts) != len(dims):
        raise ShapeError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, "
                         f"dims:{len(dims)}")
    for s, d in zip(shifts, dims):
        axis = _wrap_dim(d, x.ndim, "roll")
        n = x.shape[axis]
        if n == 0:
            continue
        s %= n
        if s:
            x = cat([narrow(x, axis, n - s, s), narrow(x, axis, 0, n - s)], axis)
    return x


class PadBackward0(Node):

    def grad(self, F, g):
        return (F.slice(g, tuple(slice(b, b + n, 1)
                                 for (b, _), n in zip(self.widths, self.shape))),)


def pad_dims(x, widths, value=0.0):
    """Constant padding with one non-negative ``(before, after)`` pair per dimension."""
    widths = tuple((int(b), int(a)) for b, a in widths)
    if builtins.all(b == 0 and a == 0 for b, a in widths):
        return x
    r = _wrap(x._k.pad(x._data, widths, value), x.dtype, x.device, x._k)
    if x._rg and _state.enabled:
        node = PadBackward0()
        node.widths, node.shape = widths, x._data.shape
        record(r, node, (x,))
    return r


def pad(x, pad, mode="constant", value=None):
    """``nn.functional.pad`` order: pairs for the last dimension first; negative crops."""
    if mode != "constant":
        raise NotImplementedError(f"pad: mode {mode!r} is not supported (only 'constant')")
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ShapeError(f"pad: padding length {len(pad)} must be even and at most "
                         f"2 * ndim ({2 * x.ndim})")
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    crop = [(builtins.max(-b, 0), builtins.max(-a, 0)) for b, a in widths]
    if builtins.any(c != (0, 0) for c in crop):
        for axis, (cb, ca) in enumerate(crop):
            if cb or ca:
                x = narrow(x, axis, cb, x.shape[axis] - cb - ca)
    return pad_dims(x, [(builtins.max(b, 0), builtins.max(a, 0)) for b, a in widths],
                    0.0 if value is None else value)


# ---------------------------------------------------------------------- triangles
def _tri_mask(name, x, diagonal, upper):
    if x.ndim < 2:
        raise ShapeError(f"{name}: input tensor must have at least 2 dimensions, got shape "
                         f"{shape_str(x.shape)}")
    n, m = x.shape[-2], x.shape[-1]
    rows = arange(n, device=x.device).reshape(n, 1)
    cols = arange(m, device=x.device).reshape(1, m)
    return (cols - rows >= diagonal) if upper else (cols - rows <= diagonal)


def _zero_of(x):
    """A zero that keeps ``x``'s dtype under promotion (``False`` for bool tensors)."""
    return False if x.dtype.kind == "b" else 0


@op("tril", method="tril", inplace="tril_")
def tril(x, diagonal=0):
    return where(_tri_mask("tril", x, diagonal, False), x, _zero_of(x))


@op("triu", method="triu", inplace="triu_")
def triu(x, diagonal=0):
    return where(_tri_mask("triu", x, diagonal, True), x, _zero_of(x))
