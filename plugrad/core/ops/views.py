"""In-place ops on views, functionalised: the base takes the op's result and its history.

``x[0:2].mul_(10)`` while ``x`` is in the graph is computed as PyTorch's ``CopySlices``
does: the view's new value ``r`` is computed out of place, the base becomes
``slice_scatter(base, region, r)`` (through every reshape/permute the view was taken by),
differentiable in both, and every other view of the base is taken afresh from it, history
included, so a gradient through any of them sees the write. Backends never alias: the
arrays come from :mod:`plugrad.core.aliasing`.
"""
from __future__ import annotations

from plugrad.core import aliasing
from plugrad.core.aliasing import Lattice, Permute, Reshape, Slice
from plugrad.core.autograd.node import present_as
from plugrad.core.ops.lattice import lattice_scatter, lattice_view
from plugrad.core.ops.shape import expand, permute, reshape
from plugrad.core.ops.slicing import basic_slice, slice_scatter
from plugrad.core.tensor import _wrap


def _take(t, step):
    kind = type(step)
    if kind is Slice:
        return basic_slice(t, step.key)
    if kind is Reshape:
        return reshape(t, step.shape)
    if kind is Permute:
        return permute(t, step.axes)
    if kind is Lattice:
        return lattice_view(t, step, "AsStridedBackward0")
    return expand(t, step.shape)


def _embed(t, step, inner):
    """``t`` with the region ``step`` takes replaced by ``inner`` (differentiable)."""
    kind = type(step)
    if kind is Slice:
        return slice_scatter(t, step.key, inner)
    if kind is Reshape:
        return reshape(inner, step.source)
    if kind is Lattice:
        return lattice_scatter(t, step, inner)
    return permute(inner, step.inverse)


def written(base, steps, value):
    """``base`` with its view along ``steps`` replaced by ``value``, in the graph."""
    if not steps:
        return value
    inner = _take(base, steps[0]) if len(steps) > 1 else None
    return _embed(base, steps[0], written(inner, steps[1:], value) if inner is not None
                  else value)


def taken(base, steps):
    for step in steps:
        base = _take(base, step)
    return base


def snapshot(x):
    """``x`` as it is now, in its graph, as a tensor of its own (no storage links)."""
    s = _wrap(x._data, x.dtype, x.device, x._k)
    s.grad_fn, s._output_nr, s._rg = x.grad_fn, x._output_nr, x._rg
    if x.grad_fn is None and x._rg:
        s._accum = x._accum
    return s


def take_history(t, r) -> None:
    t.grad_fn, t._output_nr, t._rg = r.grad_fn, r._output_nr, r._rg
    node = r.grad_fn
    if getattr(node, "out_vc", None) is r._vc:  # a node that keeps its output checks t's
        node.out_vc, node.out_version = t._vc, t._vc[0]


def commit(x, result) -> None:
    """``x`` (a root, an alias or a view) takes ``result``, its new value in the graph;
    its storage and the storage's other views follow, histories included (the base's node
    is PyTorch's ``CopySlices``, the views' ``AsStridedBackward0``, as PyTorch names them)."""
    node = result.grad_fn
    if getattr(node, "out_vc", None) is result._vc:  # it keeps its output: x's version
        node.out_vc, node.out_version = x._vc, x._vc[0]  # (x.reciprocal_().mul_(2) fails)
    base = x._ad_base if x._root is not None else x
    if base is x:
        new = result
    else:
        new = present_as(written(snapshot(base), x._ad_steps, result), "CopySlices")
    root = base._root
    if root is None:
        base._data, root = new._data, base
    else:
        root._data = aliasing.write_along(root._k, root._data, base._steps, new._data,
                                          in_place=False)
    take_history(base, new)
    views = aliasing.refresh(root)
    if not views or not base._rg:
        return
    source = None
    for w in views:
        if w is not base and w._ad_base is base and w._grad_view:
            source = source if source is not None else snapshot(base)
            take_history(w, present_as(taken(source, w._ad_steps), "AsStridedBackward0"))
