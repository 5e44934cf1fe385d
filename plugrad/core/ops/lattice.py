"""Views on a lattice of their input's elements (``diagonal``, ``Tensor.unfold``): PyTorch
makes them with strides; here the core takes and writes them by flat position
(:class:`plugrad.core.aliasing.Lattice`), so they alias on every backend, and in-place ops
on them reach their base as on slices."""
from __future__ import annotations

from plugrad.core import aliasing
from plugrad.core import dtypes as _dt
from plugrad.core.aliasing import Lattice
from plugrad.core.autograd.node import Node, present_as
from plugrad.core.autograd.record import record, recording
from plugrad.core.grad_mode import _state
from plugrad.core.tensor import _wrap


def diagonal_step(shape, offset, d1, d2, device) -> Lattice:
    """The ``offset`` diagonal of dims ``d1``/``d2`` of ``shape``, as a last dim."""
    n, m = shape[d1], shape[d2]
    length = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    rest = [d for d in range(len(shape)) if d not in (d1, d2)]
    coeffs = [[int(d == r) for d in range(len(shape))] for r in rest]
    coeffs.append([int(d in (d1, d2)) for d in range(len(shape))])
    base = [0] * len(shape)
    if length:
        base[d2 if offset >= 0 else d1] = abs(offset)
    return Lattice([shape[r] for r in rest] + [length], coeffs, base, shape, device)


def unfold_step(shape, axis, size, step, device) -> Lattice:
    """Windows of ``size`` along ``axis``, ``step`` apart, as a new last dim."""
    count = (shape[axis] - size) // step + 1
    nd = len(shape)
    coeffs = [[(step if d == axis else 1) if d == e else 0 for d in range(nd)]
              for e in range(nd)]
    coeffs.append([int(d == axis) for d in range(nd)])
    out = list(shape)
    out[axis] = count
    return Lattice(out + [size], coeffs, [0] * nd, shape, device)


def as_strided_step(x, size, stride, storage_offset) -> Lattice:
    """PyTorch's ``as_strided`` of ``x``'s storage, as flat positions in ``x`` (which must
    hold, contiguously, every element the strides reach)."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"as_strided: mismatch in length of strides and shape "
                           f"({len(stride)} strides for {len(size)} sizes)")
    if any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: negative sizes or strides are not supported "
                           f"(size {list(size)}, stride {list(stride)})")
    _, _, own = aliasing.geometry(x)
    offset = own if storage_offset is None else int(storage_offset)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else offset
    if not aliasing.is_contiguous(x) or offset < own or last >= own + max(x.numel(), 1) \
            and all(size):
        raise NotImplementedError(
            f"as_strided: size {list(size)}, stride {list(stride)}, storage offset {offset} "
            f"reach elements outside the tensor's own contiguous ones (shape "
            f"{list(x.shape)}, storage offset {own}); plugrad takes as_strided views of a "
            f"contiguous tensor's elements only")
    coeffs = [[s] for s in stride]
    return Lattice(size, coeffs, [offset - own], tuple(x.shape), x.device.index)


def _positions(x, step):
    """The step's flat positions as an int64 Tensor on ``x``'s device (saved for backward:
    both bindings of a rule read it)."""
    return _wrap(step.index(x._k), _dt.int64, x.device, x._k)


class LatticeBackward(Node):
    """The view's gradient placed at its positions in zeros of the input's shape (added up
    where windows overlap)."""
    _is_view = True

    def grad(self, F, g, positions):
        n = self.numel
        zeros = F.full((n,), 0.0, F.dtype_of(g), self.device.index)
        flat = F.reshape(g, (positions.shape[0],))
        place = F.scatter_add if self.overlapping else F.scatter
        return (F.reshape(place(zeros, 0, positions, flat), self.source),)


def lattice_view(x, step: Lattice, name: str):
    """``x``'s elements on ``step``, a view sharing ``x``'s storage (grad_fn ``name``)."""
    r = _wrap(step.take(x._k, x._data), x.dtype, x.device, x._k)
    r._vc = x._vc
    if x._rg and _state.enabled:
        node = LatticeBackward()
        node.source, node.numel = step.source, _numel(step.source)
        node.overlapping = step.overlaps()
        record(r, node, (x,), saved=(_positions(x, step),))
        present_as(r, name)
    aliasing.link(r, x, step)
    return r


class LatticeScatterBackward(Node):

    def grad(self, F, g, positions):
        flat = F.reshape(g, (self.numel,))
        gx = gv = None
        if self.next[0]:
            zeros = F.full((positions.shape[0],), 0.0, F.dtype_of(g), self.device.index)
            gx = F.reshape(F.scatter(flat, 0, positions, zeros), self.source)
        if len(self.next) > 1 and self.next[1]:
            gv = F.reshape(F.take(flat, 0, positions), self.shape)
        return gx, gv


def lattice_scatter(x, step: Lattice, inner):
    """``x`` with its elements on ``step`` replaced by ``inner`` (a new tensor, in the graph:
    the base's side of an in-place op on a lattice view)."""
    k = x._k
    data = inner._data if inner.dtype is x.dtype else k.astype(inner._data, x.dtype.name)
    r = _wrap(step.put(k, k.copy(x._data), data), x.dtype, x.device, k)
    if recording(x, inner):
        node = LatticeScatterBackward()
        node.source, node.shape, node.numel = step.source, step.shape, _numel(step.source)
        record(r, node, (x, inner), saved=(_positions(x, step),))
    return r


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n
