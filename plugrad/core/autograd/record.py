"""Recording the graph: the one place an op's node gets its edges, saves and place in time.

Ops call :func:`record` only when :func:`recording` (or an operand resolver that asks it)
says so: grad mode is on and an input requires grad.
"""
from __future__ import annotations

import itertools

from plugrad.core.autograd import anomaly
from plugrad.core.autograd.engine import edge_of
from plugrad.core.autograd.node import OUTPUT
from plugrad.core.grad_mode import _state
from plugrad.core.tensor import Tensor

_sequence = itertools.count(1)  # node creation order (see Node.seq)


def recording(a, b=None, c=None) -> bool:
    """Whether an op on these operands (Tensors, Python values or None) records a node."""
    if not _state.enabled:
        return False
    return ((isinstance(a, Tensor) and a._rg) or (isinstance(b, Tensor) and b._rg)
            or (isinstance(c, Tensor) and c._rg))


def any_recording(tensors) -> bool:
    """:func:`recording` for a sequence of operands (``cat``, ``stack``, ...)."""
    if not _state.enabled:
        return False
    for t in tensors:
        if isinstance(t, Tensor) and t._rg:
            return True
    return False


def _edge(t):
    """:func:`edge_of` for an operand that may be no Tensor; a leaf's edge, once made, is
    taken here without the call."""
    if not isinstance(t, Tensor):
        return None
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._rg:
        edge = t._accum
        return edge if edge is not None else edge_of(t)
    return None


def record(out: Tensor, node, inputs, saved=(), arrays=None) -> Tensor:
    """Make ``node`` the producer of ``out``, with edges to ``inputs``.

    ``saved`` are what the node's rule needs: Tensors (their versions are remembered, so an
    in-place change before backward is an error), Python values, None, or ``OUTPUT`` for
    ``out`` itself (the node must be a ``KeepsOutput``). ``arrays`` are the same values as
    the plain backward pass sees them; by default each Tensor's array (an op that computed
    on promoted copies passes those instead).
    """
    n = len(inputs)
    if n == 1:
        node.next = (_edge(inputs[0]),)
    elif n == 2:
        node.next = (_edge(inputs[0]), _edge(inputs[1]))
    elif n == 3:
        node.next = (_edge(inputs[0]), _edge(inputs[1]), _edge(inputs[2]))
    else:
        node.next = tuple([_edge(t) for t in inputs])
    if saved:
        node.saved = saved
        ns = len(saved)
        s0 = saved[0]
        # the usual cases first: the output alone (relu, exp...), or two Tensors (linear)
        if ns == 1 and s0 is OUTPUT:
            node.keep_output(out)
            node.versions = (None,)
            node.arrays = (out._data,) if arrays is None else arrays
        elif ns == 2 and isinstance(s0, Tensor) and isinstance(saved[1], Tensor):
            s1 = saved[1]
            node.versions = (s0._vc[0], s1._vc[0])
            node.arrays = (s0._data, s1._data) if arrays is None else arrays
        else:
            versions = []
            data = []
            for s in saved:
                if isinstance(s, Tensor):
                    versions.append(s._vc[0])
                    data.append(s._data)
                else:
                    versions.append(None)
                    if s is OUTPUT:
                        node.keep_output(out)
                        s = out._data
                    data.append(s)
            node.versions = tuple(versions)
            node.arrays = tuple(data) if arrays is None else arrays
    node.seq = next(_sequence)
    node.k = out._k
    node.device = out.device
    out.grad_fn = node
    out._rg = True
    if anomaly._enabled:
        anomaly.record_forward(node)
    return out


def record_binary(out: Tensor, node, a, b, saved=(), arrays=()) -> Tensor:
    """:func:`record` for an elementwise op of ``a`` and ``b`` (Tensors or Python
    scalars): the hot path of arithmetic. ``saved``/``arrays`` as for :func:`record` but
    given explicitly (``arrays`` in the result dtype, as the op computed them). The
    broadcast/dtype record (``meta``, ``casts``) is made only where an operand differs
    from the result."""
    ea = eb = None
    ta = isinstance(a, Tensor)
    if ta:
        fn = a.grad_fn
        if fn is not None:
            ea = (fn, a._output_nr)
        elif a._rg:  # a leaf: its edge, once made, without the call
            ea = a._accum
            if ea is None:
                ea = edge_of(a)
    tb = isinstance(b, Tensor)
    if tb:
        fn = b.grad_fn
        if fn is not None:
            eb = (fn, b._output_nr)
        elif b._rg:  # a leaf: its edge, once made, without the call
            eb = b._accum
            if eb is None:
                eb = edge_of(b)
    node.next = (ea, eb)
    if saved:
        node.saved = saved
        n = len(saved)
        if n == 2:
            sa, sb = saved
            node.versions = (sa._vc[0] if isinstance(sa, Tensor) else None,
                             sb._vc[0] if isinstance(sb, Tensor) else None)
        elif n == 1:
            sa = saved[0]
            node.versions = (sa._vc[0] if isinstance(sa, Tensor) else None,)
        else:
            node.versions = tuple([s._vc[0] if isinstance(s, Tensor) else None for s in saved])
        if node._keeps_output:  # the OUTPUT slot's array is the result's
            node.keep_output(out)
            arrays = tuple(out._data if s is OUTPUT else x for s, x in zip(saved, arrays))
        node.arrays = arrays
    dt = out.dtype
    # two Tensors of the result's dtype and of one shape (then the result's): the usual case
    if not (ta and tb and a.dtype is dt and b.dtype is dt
            and a._data.shape == b._data.shape):
        shape = out._data.shape
        ma = None if not ta or (a.dtype is dt and a._data.shape == shape) else (
            a._data.shape, None if a.dtype is dt else a.dtype.name)
        mb = None if not tb or (b.dtype is dt and b._data.shape == shape) else (
            b._data.shape, None if b.dtype is dt else b.dtype.name)
        if ma is not None or mb is not None:
            node.meta = (ma, mb)
            if (ma is not None and ma[1] is not None) or (mb is not None and mb[1] is not None):
                node.casts = dt
    node.seq = next(_sequence)
    node.k = out._k
    node.device = out.device
    out.grad_fn = node
    out._rg = True
    if anomaly._enabled:
        anomaly.record_forward(node)
    return out


def _meta(t, shape, dt):
    """What a gradient must become for operand ``t``: None when nothing (a scalar, or a
    Tensor of the result's shape and dtype), else its shape and, if it differs from the
    result's, its dtype name."""
    if not isinstance(t, Tensor) or (t.dtype is dt and t._data.shape == shape):
        return None
    return (t._data.shape, None if t.dtype is dt else t.dtype.name)


def input_meta(out: Tensor, inputs) -> tuple | None:
    """``meta`` for an op whose rule returns result-shaped, result-dtype gradients for
    ``inputs`` (broadcasting ops): None when every input already matches ``out``."""
    shape, dt = out._data.shape, out.dtype
    meta = tuple(_meta(t, shape, dt) for t in inputs)
    return None if all(m is None for m in meta) else meta
