"""In-place ops (``x.add_(y)``, ``x += y``, ``x[i] = v``, ``zero_``, ``copy_``).

Outside the graph they write into the tensor's own array and from there into its storage,
so aliases (``.data``, ``detach()``, views) see the change on every backend. When the graph
is being recorded, the op is computed out of place on a snapshot of the tensor, which then
takes the result and its history (a view's base too: :mod:`plugrad.core.ops.views`); the
version counter makes any stale saved use of the old values an error.
"""
from __future__ import annotations

from plugrad.core import aliasing
from plugrad.core import dtypes as _dt
from plugrad.core.errors import DTypeError, ShapeError, broadcast_shapes, shape_str
from plugrad.core.factories import tensor
from plugrad.core.grad_mode import _state, no_grad
from plugrad.core.ops import views
from plugrad.core.ops.select import where
from plugrad.core.ops.views import snapshot, take_history
from plugrad.core.random import rand, randint, randn
from plugrad.core.tensor import Tensor

# In-place ops that change the shape (a metadata change in PyTorch): the tensor takes the
# new array instead of having its elements overwritten.
_RESHAPING = frozenset({"t_", "transpose_", "swapaxes_", "swapdims_", "squeeze_", "unsqueeze_"})


def _check_leaf(op, x):
    """Refuse, while grad mode is on, an in-place op on a leaf that requires grad or on a
    view of one (its gradient would silently be wrong), and on a view made in no_grad mode
    of a tensor that requires grad (which history should it rewrite?)."""
    if not _state.enabled:
        return
    if x.grad_fn is None and x._rg:
        raise RuntimeError(f"{op}: a leaf Variable that requires grad is being used in an "
                           f"in-place operation.")
    base = x._ad_base
    if x._root is None or base is x or not base._rg:
        return
    if not x._grad_view:
        raise RuntimeError(f"{op}: A view was created in no_grad mode and is being modified "
                           f"inplace with grad mode enabled. Given that this use case is "
                           f"ambiguous and error-prone, it is forbidden. You can clarify your "
                           f"code by moving both the view and the inplace either both inside "
                           f"the no_grad block (if you don't want the inplace to be tracked) "
                           f"or both outside (if you want the inplace to be tracked).")
    if base.grad_fn is None:
        raise RuntimeError(f"{op}: a view of a leaf Variable that requires grad is being used "
                           f"in an in-place operation.")


def _castable(src, dst) -> bool:
    return src.category <= dst.category


def apply_inplace(op, x, compute, *, same_shape=True):
    """Run ``compute(x_like)`` and make ``x`` hold its result (through to its storage)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    _check_leaf(op, x)
    shared = x._root is not None or x._views
    if shared and x._root is not None:
        aliasing.check_writable(op, x)
    recording = _state.enabled
    result = compute(snapshot(x) if recording else x)
    if same_shape and tuple(result._data.shape) != tuple(x._data.shape):
        raise ShapeError(f"{op}: output with shape {shape_str(x.shape)} doesn't match the "
                         f"broadcast shape {shape_str(result.shape)}")
    if result.dtype is not x.dtype:
        if not _castable(result.dtype, x.dtype):
            raise DTypeError(f"{op}: result type {result.dtype.name} can't be cast to the "
                             f"desired output type {x.dtype.name}")
        result = result.to(x.dtype)
    if result.device is not x.device:
        raise RuntimeError(f"{op}: result is on {result.device}, the tensor on {x.device}")
    if recording and result._rg and x._multi_view:
        name, nr = x._multi_view
        raise RuntimeError(f"{op}: Output {nr} of {name} is a view and is being modified "
                           f"inplace. This view is the output of a function that returns "
                           f"multiple views. Such functions do not allow the output views to "
                           f"be modified inplace. You should replace the inplace operation by "
                           f"an out-of-place one.")
    x._vc[0] += 1
    if not same_shape:
        _relayout(x, result, recording and result._rg)
    elif recording and result._rg:
        if shared:
            views.commit(x, result)
        else:
            x._data = result._data
            take_history(x, result)
    else:
        x._data = x._k.assign(x._data, (), result._data)
        if shared:
            aliasing.written(x)
    return x


def _relayout(x, result, in_graph):
    """``t_``, ``squeeze_``, ...: ``x`` shows its elements in a new layout. Where they are
    shared, ``x`` becomes a view of its former storage along the op's steps."""
    if x._root is not None or x._views:
        op_steps = result._steps
        if result._root is not None and result._root is x._root:
            op_steps = op_steps[len(x._steps):]
        if x._root is None:
            aliasing.relink(x, aliasing.orphan_views_of(x), op_steps, ())
        else:
            aliasing.relink(x, x._root, x._steps + op_steps, x._ad_steps + op_steps)
    x._data = result._data
    if in_graph:
        take_history(x, result)


def _binary_inplace(name, fn):
    def method(self, other, *args, **kwargs):
        return apply_inplace(name, self, lambda s: fn(s, other, *args, **kwargs))
    method.__name__ = name
    return method


_FAST_SCALARS = (int, float)


def _fast_update(x, kernel, other, alpha):
    """``x op= other`` written straight into ``x``'s array when nothing is recorded and no
    promotion or broadcast of ``x`` is involved (the optimizers' hot path): one kernel call,
    no temporary result. Returns None when the general path must run."""
    if x.dtype.kind == "b" or (kernel == "div" and not x.dtype.is_floating_point):
        return None  # bool "+" is logical or, int "/" promotes: the general path knows
    if isinstance(other, Tensor):
        if other.dtype is not x.dtype or other.device is not x.device:
            return None
        oshape, xshape = other._data.shape, x._data.shape
        if oshape != xshape and (len(oshape) > len(xshape) or any(
                o not in (1, n) for o, n in zip(oshape[::-1], xshape[::-1]))):
            return None
        value = other._data if alpha == 1 else x._k.mul(other._data, alpha)
    elif type(other) in _FAST_SCALARS and x.dtype.kind == "f":
        # the float itself when alpha is 1 (a captured step matches it by identity)
        value = other if alpha == 1 and type(other) is float else float(other) * alpha
    else:
        return None
    if x._root is not None:
        _check_leaf(f"{kernel}_", x)
        aliasing.check_writable(f"{kernel}_", x)
    x._data = x._k.update_(kernel, x._data, value)
    x._vc[0] += 1
    if x._root is not None or x._views:
        aliasing.written(x)
    return x


def _arith_inplace(name, fn, kernel):
    """``add_``/``sub_``/``mul_``/``div_`` and ``+=`` etc.: the fast path above, else the
    general in-place machinery (graph recording, promotion checks, errors)."""
    general = _unary_inplace(name, fn)

    def method(self, other, *args, **kwargs):
        if not args and (not _state.enabled or not (
                self._rg or (isinstance(other, Tensor) and other._rg))):
            alpha = 1 if not kwargs else kwargs.get("alpha", 1) if len(kwargs) == 1 and (
                "alpha" in kwargs) else None
            if alpha is not None and not isinstance(alpha, Tensor):
                done = _fast_update(self, kernel, other, alpha)
                if done is not None:
                    return done
        return general(self, other, *args, **kwargs)
    method.__name__ = name
    return method


def _unary_inplace(name, fn):
    """The in-place method of ``fn``; ``fn.inplace_check(self, *args, **kwargs)``, where an
    op has one, adds that op's own rule for its in-place form (float_power_)."""
    same_shape = name not in _RESHAPING
    check = getattr(fn, "inplace_check", None)

    def method(self, *args, **kwargs):
        if check is not None:
            check(self, *args, **kwargs)
        return apply_inplace(name, self, lambda s: fn(s, *args, **kwargs),
                             same_shape=same_shape)
    method.__name__ = name
    return method


# ---------------------------------------------------------------------- overwriting ops
def _overwrite(op, x, value):
    """Make ``x`` hold ``value`` (a Python scalar, or a tensor of ``x``'s dtype and device
    broadcastable to it). In the graph, ``x`` keeps requiring grad with a zero gradient to
    its old value, as PyTorch's ``ZeroBackward0``/``CopyBackwards`` do."""
    _check_leaf(op, x)
    is_tensor = isinstance(value, Tensor)
    if _state.enabled and (x._rg or (is_tensor and value._rg)):
        v = value if is_tensor else x.new_full((), value)
        return apply_inplace(op, x, lambda s: _replace(s, v))
    data = value if not is_tensor else (
        value._data if tuple(value.shape) == tuple(x.shape) else value.expand(x.shape)._data)
    if x._root is not None:
        aliasing.check_writable(op, x)
    x._data = x._k.assign(x._data, (), data)
    x._vc[0] += 1
    if x._root is not None or x._views:
        aliasing.written(x)
    return x


def _replace(s, v):
    """``v`` broadcast to ``s``, differentiable in both (zero gradient to ``s``)."""
    return where(s.new_ones(s.shape, dtype=_dt.bool_), v, s)


def _python_scalar(x, value):
    return _dt.checked_scalar("fill_", value, x.dtype)  # PyTorch's overflow check


def zero_(x):
    """Fill ``x`` with zeros."""
    return _overwrite("zero_", x, _python_scalar(x, 0))


def fill_(x, value):
    """Fill ``x`` with ``value`` (a number or a 0-d tensor, which may require grad)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ShapeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                             f"with {value.ndim} dimensions.")
        if value.device is not x.device:
            value = value.to(x.device)
        if not (value._rg and _state.enabled):
            value = value.item()
        elif value.dtype is not x.dtype:
            value = value.to(x.dtype)
    if not isinstance(value, Tensor):
        value = _python_scalar(x, value)
    return _overwrite("fill_", x, value)


def copy_(x, src, non_blocking=False):
    """Copy ``src``'s values (broadcast, cast and moved as needed) into ``x``."""
    if not isinstance(src, Tensor):
        src = tensor(src, dtype=x.dtype, device=x.device)
    try:
        fits = broadcast_shapes("copy_", src.shape, x.shape) == tuple(x.shape)
    except ShapeError:
        fits = False
    if not fits:
        raise ShapeError(f"copy_: src of shape {shape_str(src.shape)} cannot be broadcast to "
                         f"the destination's shape {shape_str(x.shape)}")
    if src.device is not x.device:
        src = src.to(x.device)
    if src.dtype is not x.dtype:
        src = src.to(x.dtype)
    return _overwrite("copy_", x, src)


# ---------------------------------------------------------------------- random fills
def uniform_(t, a=0.0, b=1.0, *, generator=None):
    sample = rand(tuple(t.shape), dtype=t.dtype, device=t.device, generator=generator)
    return _fill_inplace(t, sample * (b - a) + a)


def normal_(t, mean=0.0, std=1.0, *, generator=None):
    sample = randn(tuple(t.shape), dtype=t.dtype, device=t.device, generator=generator)
    return _fill_inplace(t, sample * std + mean)


def bernoulli_(t, p=0.5, *, generator=None):
    sample = rand(tuple(t.shape), dtype=_dt.float32, device=t.device, generator=generator)
    return _fill_inplace(t, (sample < p).to(t.dtype))


def exponential_(t, lambd=1.0, *, generator=None):
    u = rand(tuple(t.shape), dtype=t.dtype, device=t.device, generator=generator)
    return _fill_inplace(t, -(1.0 - u).log() / lambd)


def random_(t, low=0, high=None, *, generator=None):
    if high is None:
        low, high = 0, low if low else 2 ** 24
    return _fill_inplace(t, randint(low, high, tuple(t.shape), device=t.device,
                                    generator=generator).to(t.dtype))


def _fill_inplace(t, values):
    if t._rg and t.grad_fn is None:
        with no_grad():
            return copy_(t, values)
    return copy_(t, values.detach())
