"""Which tensors share storage, and how a view's elements are taken from its root's.

Backends keep no aliasing rules (a reference or Array API backend may copy on every slice),
so the core keeps them: a view remembers its storage *root* (the tensor that owns the
elements) and the *steps* (slice, reshape, permute, expand) that take its array from the
root's. A write to a view is written into the root along those steps, and every live view
of the root then takes its array afresh from the root's: on every backend, a write through
one alias is seen by all (PyTorch's shared storage, functionalised).

Autograd's side (the base's history rewritten as ``CopySlices`` does) is in
:mod:`plugrad.core.ops.views`; this floor holds only the arrays, so ``Tensor.detach`` and
``.data`` can make aliases without reaching above the tensor.
"""
from __future__ import annotations

import weakref

import numpy as np

from plugrad.core.grad_mode import _state


# ---------------------------------------------------------------------- steps
class Slice:
    """``a[key]`` with ``key`` one normalised slice per dimension."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def take(self, k, a):
        return k.slice(a, self.key)

    def put(self, k, a, inner):
        """``a`` with its region replaced by ``inner`` (``a`` may be written)."""
        return k.assign(a, self.key, inner)

    def geometry(self, shape, strides, offset):
        for s, st in zip(self.key, strides):
            offset += s.start * st
        return (tuple(len(range(s.start, s.stop, s.step)) for s in self.key),
                tuple(st * s.step for s, st in zip(self.key, strides)), offset)


class Reshape:
    __slots__ = ("shape", "source")

    def __init__(self, shape, source):
        self.shape, self.source = tuple(shape), tuple(source)

    def take(self, k, a):
        return k.reshape(a, self.shape)

    def put(self, k, a, inner):
        return k.reshape(inner, self.source)

    def geometry(self, shape, strides, offset):
        kept = [st for n, st in zip(shape, strides) if n != 1]
        if [n for n in shape if n != 1] != [n for n in self.shape if n != 1]:
            return self.shape, view_strides(shape, strides, self.shape), offset
        # only size-1 dims come or go: PyTorch's squeeze/unsqueeze strides (a new size-1
        # dim gets the stride times size of the dim after it, or 1 at the end)
        out = [0] * len(self.shape)
        j = len(kept)
        for d in range(len(self.shape) - 1, -1, -1):
            if self.shape[d] != 1:
                j -= 1
                out[d] = kept[j]
            else:
                out[d] = out[d + 1] * self.shape[d + 1] if d + 1 < len(self.shape) else 1
        return self.shape, tuple(out), offset


class Permute:
    __slots__ = ("axes", "inverse")

    def __init__(self, axes, inverse):
        self.axes, self.inverse = tuple(axes), tuple(inverse)

    def take(self, k, a):
        return k.permute(a, self.axes)

    def put(self, k, a, inner):
        return k.permute(inner, self.inverse)

    def geometry(self, shape, strides, offset):
        return (tuple(shape[i] for i in self.axes), tuple(strides[i] for i in self.axes),
                offset)


class Expand:
    """A broadcast: several elements of the view are one element of the root."""

    __slots__ = ("shape", "source")

    def __init__(self, shape, source):
        self.shape, self.source = tuple(shape), tuple(source)

    def take(self, k, a):
        return k.broadcast_to(a, self.shape)

    def put(self, k, a, inner):  # refused before any write: see check_writable
        raise AssertionError("a write through an expanded view")

    def geometry(self, shape, strides, offset):
        lead = len(self.shape) - len(shape)
        out = [0] * lead + [0 if n == 1 and m != 1 else st
                            for n, m, st in zip(shape, self.shape[lead:], strides)]
        return self.shape, tuple(out), offset

    def overlaps(self) -> bool:
        lead = len(self.shape) - len(self.source)
        return any(m != 1 for m in self.shape[:lead]) or any(
            n == 1 and m != 1 for n, m in zip(self.source, self.shape[lead:]))


class Lattice:
    """Elements of the input on a lattice (``diagonal``, ``unfold``): view index ``j`` shows
    input index ``base + sum_e j[e] * coeffs[e]``. Backends have no strided views, so the
    elements are taken and written by their flat positions in the input (``positions``)."""

    __slots__ = ("shape", "coeffs", "base", "source", "device", "positions", "_arrays")

    def __init__(self, shape, coeffs, base, source, device):
        self.shape, self.source, self.device = tuple(shape), tuple(source), device
        self.coeffs, self.base = tuple(map(tuple, coeffs)), tuple(base)
        flat = (1,) if len(self.base) == 1 != len(self.source) else \
            contiguous_strides(self.source)  # one coefficient each: flat (as_strided)
        pos = np.full(self.shape, sum(b * st for b, st in zip(self.base, flat)), np.int64)
        for e, coeff in enumerate(self.coeffs):
            step = sum(c * st for c, st in zip(coeff, flat))
            grid = [1] * len(self.shape)
            grid[e] = self.shape[e]
            pos = pos + np.arange(self.shape[e], dtype=np.int64).reshape(grid) * step
        self.positions = pos.reshape(-1)
        self._arrays = {}

    def index(self, k):
        """The flat positions as an int64 array of ``k`` (made once per backend)."""
        a = self._arrays.get(k.name)
        if a is None:
            a = self._arrays[k.name] = k.from_numpy(self.positions, "int64", self.device)
        return a

    def take(self, k, a):
        n = int(np.prod(self.source, dtype=np.int64))
        return k.reshape(k.take(k.reshape(a, (n,)), 0, self.index(k)), self.shape)

    def put(self, k, a, inner):
        n = int(np.prod(self.source, dtype=np.int64))
        flat = k.scatter(k.reshape(a, (n,)), 0, self.index(k),
                         k.reshape(inner, (self.positions.size,)))
        return k.reshape(flat, self.source)

    def geometry(self, shape, strides, offset):
        if len(self.base) == 1 != len(shape):  # flat positions of a contiguous input
            strides = (1,)
        return (self.shape, tuple(sum(c * st for c, st in zip(coeff, strides))
                                  for coeff in self.coeffs),
                offset + sum(b * st for b, st in zip(self.base, strides)))

    def overlaps(self) -> bool:
        return np.unique(self.positions).size != self.positions.size


# ---------------------------------------------------------------------- strides
def contiguous_strides(shape) -> tuple:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def view_strides(shape, strides, new_shape):
    """The strides of ``new_shape`` over the elements that ``shape``/``strides`` address, or
    None where no strides can (PyTorch's ``computeStride``: each run of dimensions merged or
    split must be contiguous within itself)."""
    numel = 1
    for n in shape:
        numel *= n
    if numel == 0 and tuple(shape) == tuple(new_shape):
        return tuple(strides)
    if numel == 0 or not shape:
        return contiguous_strides(new_shape)
    out = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                out[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base = strides[d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(out)


def geometry(t):
    """``(shape, strides, storage offset)`` of ``t`` in elements of its root, as PyTorch
    would lay them out (a tensor that owns its storage is contiguous)."""
    root = t._root
    if root is None:
        shape = tuple(t._data.shape)
        return shape, contiguous_strides(shape), 0
    shape = tuple(root._data.shape)
    strides, offset = contiguous_strides(shape), 0
    for step in t._steps:
        shape, strides, offset = step.geometry(shape, strides, offset)
    return shape, strides, offset


def is_contiguous(t) -> bool:
    if t._root is None:
        return True
    shape, strides, _ = geometry(t)
    expected = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n == 1:
            continue
        if n == 0:
            return True
        if st != expected:
            return False
        expected *= n
    return True


def can_view(t, new_shape) -> bool:
    """Whether ``t.view(new_shape)`` can share ``t``'s elements (PyTorch's rule)."""
    if t._root is None:
        return True
    old = t._data.shape
    if [n for n in old if n != 1] == [n for n in new_shape if n != 1]:
        return True  # only size-1 dimensions come or go (squeeze, unsqueeze, t[i])
    shape, strides, _ = geometry(t)
    return view_strides(shape, strides, tuple(new_shape)) is not None


# ---------------------------------------------------------------------- linking
def link(view, x, step, *, alias=False) -> None:
    """Make ``view`` (a new tensor) share ``x``'s storage, its array being ``x``'s taken by
    ``step`` (None: the same array). An ``alias`` (``detach()``, ``.data``) starts a new
    autograd base: in-place ops on it rewrite no one's history but its own."""
    root = x._root
    steps = (step,) if step is not None else ()
    d = view.__dict__
    if root is None:
        d["_root"], d["_steps"] = x, steps
        d["_ad_base"], d["_ad_steps"] = x, steps
        d["_grad_view"] = _state.enabled
    else:
        d["_root"], d["_steps"] = root, x._steps + steps
        d["_ad_base"], d["_ad_steps"] = x._ad_base, x._ad_steps + steps
        d["_grad_view"] = _state.enabled and x._grad_view
        if x._multi_view:
            d["_multi_view"] = x._multi_view
    if alias:
        d["_ad_base"], d["_ad_steps"], d["_grad_view"] = view, (), True
    _register(root if root is not None else x, view)


class _Views(list):
    """A root's weak references to its views; a view's reference leaves it as the view
    dies, so a root whose views are gone reads as empty (and writes to it cost nothing)."""

    __slots__ = ()

    def drop(self, ref) -> None:
        try:
            self.remove(ref)
        except ValueError:  # moved to another root meanwhile
            pass


def _register(owner, view) -> None:
    views = owner._views
    if views is None:
        views = owner.__dict__["_views"] = _Views()
    views.append(weakref.ref(view, views.drop))


def _live(owner) -> list:
    """``owner``'s views that are alive and still show its elements."""
    out = []
    for r in list(owner._views or ()):
        w = r()
        if w is not None and w._root is owner:
            out.append(w)
    return out


def unlink(t) -> None:
    """``t`` stops sharing storage: it becomes a root of its own (``x.data = y``'s first
    half; its former views keep the old storage, under a new root)."""
    if t._root is not None:
        for name in ("_root", "_steps", "_ad_base", "_ad_steps", "_grad_view", "_multi_view"):
            t.__dict__.pop(name, None)
    if t._views:
        orphan_views_of(t)


def orphan_views_of(t):
    """Give ``t``'s views a root of their own holding ``t``'s current array, so ``t`` can
    take a new array (or a new layout) without them: they still share storage with one
    another, as PyTorch's views keep the storage ``t`` left. Returns the new root."""
    live = _live(t)
    ghost = _shell(t)
    for w in live:
        w.__dict__["_root"] = ghost
        if w._ad_base is t:
            w.__dict__["_ad_base"] = ghost
        _register(ghost, w)
    t.__dict__.pop("_views", None)
    return ghost


def relink(t, root, steps, ad_steps) -> None:
    """``t`` shows ``root``'s elements along ``steps`` from now on (``t_`` and the other
    in-place layout changes). A former root becomes its own autograd base."""
    d = t.__dict__
    if t._root is None:
        d["_ad_base"], d["_grad_view"] = t, True
        _register(root, t)
    d["_root"], d["_steps"], d["_ad_steps"] = root, tuple(steps), tuple(ad_steps)


def _shell(t):
    """A root tensor holding ``t``'s array, dtype, device and version counter."""
    ghost = t._alias()
    ghost.grad_fn, ghost._rg, ghost._output_nr = t.grad_fn, t._rg, t._output_nr
    return ghost


# ---------------------------------------------------------------------- writing
def check_writable(op, t) -> None:
    """Refuse a write through an expanded or overlapping view (one element would be written
    many times)."""
    for step in t._steps:
        if type(step) in (Expand, Lattice) and step.overlaps():
            raise RuntimeError(
                f"{op}: unsupported operation: more than one element of the written-to "
                f"tensor refers to a single memory location. Please clone() the tensor "
                f"before performing the operation.")


def write_along(k, data, steps, value, *, in_place=True):
    """``data`` (a root's array) with the region ``steps`` take replaced by ``value``.
    ``in_place=False`` leaves ``data`` itself untouched (arrays saved for backward may
    share it)."""
    if not in_place:
        data = k.copy(data)
    out = _put(k, data, steps, 0, value)
    return out if out is data or not in_place else k.assign(data, (), out)


def _put(k, a, steps, i, value):
    if i == len(steps):
        return value
    step = steps[i]
    inner = step.take(k, a) if i + 1 < len(steps) else None
    return step.put(k, a, _put(k, inner, steps, i + 1, value))


def written(t) -> None:
    """``t``'s array holds new values (written outside the graph): write them into its
    root and give every view of the root its array afresh."""
    root = t._root
    if root is not None:
        if t._steps or t._data is not root._data:
            root._data = write_along(root._k, root._data, t._steps, t._data)
        elif len(root._views) == 1:
            return  # the root's one alias (a Parameter of its tensor) wrote their array
        refresh(root, skip=t)
    elif t._views:
        refresh(t)


def refresh(root, skip=None) -> list:
    """Every live view of ``root`` takes its array from ``root``'s; returns them."""
    k, data = root._k, root._data
    out = _live(root)
    for w in out:
        if w is not skip:
            a = data
            for step in w._steps:
                a = step.take(k, a)
            w._data = a
    return out
