"""Basic slicing and its adjoint: ``basic_slice`` (a view) and ``slice_scatter``.

``slice_scatter(dst, key, value)`` is ``dst`` with ``dst[key] = value``, as a new tensor
differentiable in both (PyTorch's ``torch.slice_scatter``, for several dimensions at once).
It is also the Tensor binding of the ``assign`` kernel in gradient rules.
"""
from __future__ import annotations

import builtins

from plugrad.core.aliasing import Slice
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record, recording
from plugrad.core.grad_mode import _state
from plugrad.core.ops.declare import op
from plugrad.core.ops.shape import view_of
from plugrad.core.tensor import Tensor, _wrap, _wrap_dim


def full_key(key, shape):
    """``key`` (normalised slices for leading dims) completed with whole slices."""
    return tuple(key) + tuple(slice(0, n, 1) for n in shape[len(key):])


class SliceBackward0(Node):
    _is_view = True

    def grad(self, F, g):
        zeros = F.full(self.shape, 0.0, F.dtype_of(g), self.device.index)
        return (F.assign(zeros, self.key, g),)


def basic_slice(x, key: tuple):
    """``x`` restricted by normalised slices (one per leading dim): a view."""
    shape = x._data.shape
    if builtins.all(s.start == 0 and s.stop == n and s.step == 1 for s, n in zip(key, shape)):
        return x
    key = full_key(key, shape)
    node = None
    if x._rg and _state.enabled:
        node = SliceBackward0()
        node.shape, node.key = shape, key
    return view_of(x, x._k.slice(x._data, key), node, Slice(key))


class SliceScatterBackward0(Node):

    def grad(self, F, g):
        gd = F.assign(F.copy(g), self.key, 0.0) if self.next[0] else None
        gv = F.slice(g, self.key) if len(self.next) > 1 and self.next[1] else None
        return gd, gv


def _assign(dst, key, value):
    """``dst`` (a Tensor) with ``value`` (a Tensor of the region's shape, or a number)
    written at ``key``, as a new tensor."""
    k = dst._k
    data = value._data if isinstance(value, Tensor) else value
    if isinstance(value, Tensor) and value.dtype is not dst.dtype:
        data = k.astype(data, dst.dtype.name)
    r = _wrap(k.assign(k.copy(dst._data), key, data), dst.dtype, dst.device, k)
    if recording(dst, value):
        node = SliceScatterBackward0()
        node.key = key
        record(r, node, (dst, value) if isinstance(value, Tensor) else (dst,))
    return r


def slice_scatter(dst, key, value):
    """``dst`` with the region ``key`` (normalised slices) replaced by ``value``."""
    return _assign(dst, full_key(key, dst._data.shape), value)


@op("slice_scatter", method="slice_scatter", name="slice_scatter_public")
def slice_scatter_public(input, src, dim=0, start=None, end=None, step=1):
    """PyTorch's ``torch.slice_scatter``: ``input`` with ``input[..., start:end:step] = src``
    along ``dim``."""
    axis = _wrap_dim(dim, input.ndim, "slice_scatter")
    s, e, st = slice(start, end, step).indices(input.shape[axis])
    key = tuple(slice(s, max(e, s), st) if i == axis else slice(0, n, 1)
                for i, n in enumerate(input.shape))
    return _assign(input, key, src)
