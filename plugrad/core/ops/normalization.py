"""Layer normalisation: one node whose rule calls the ``layer_norm_backward`` kernel. Rows
whose statistics are huge or not finite take PyTorch's CPU reduction's instead
(:mod:`~plugrad.core.ops.moments`): a check of the per-row statistics costs the common
case only that."""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core.autograd import engine
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record, recording
from plugrad.core.errors import ShapeError, shape_str
from plugrad.core.factories import tensor
from plugrad.core.grad_mode import no_grad
from plugrad.core.ops import moments as _moments
from plugrad.core.ops.declare import op
from plugrad.core.ops.window import tensor_args
from plugrad.core.tensor import _wrap


class NativeLayerNormBackward0(Node):
    """The kernel's gradients from the saved statistics. The Tensor binding re-derives the
    statistics from ``x`` with the forward kernel itself (same values, and now functions
    of ``x``), so second-order gradients see how they depend on it."""

    def grad(self, F, g, x, w, mean, rstd):
        mask = (bool(self.next[0]), w is not None and bool(self.next[1]),
                len(self.next) > 2 and bool(self.next[2]))
        return F.layer_norm_backward(g, x, w, mean, rstd, self.n_axes, mask)

    def saved_tensors(self):
        x, w = self.saved
        _, mean, rstd = engine.tensor_ops_for(self.k).layer_norm(x, w, None, self.n_axes,
                                                                 self.eps)
        if self.fixed is not None:  # rows PyTorch's reduction gave other statistics: those
            at, m, s = self.fixed
            mean = _rows_from(mean, at, m)
            rstd = _rows_from(rstd, at, s)
        return x, w, mean, rstd

    fixed = None  # (rows, mean, rstd) where the forward took PyTorch's statistics


@op(functional="layer_norm")
def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    name = "layer_norm"
    tensor_args(name, x, weight, bias)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    n = len(shape)
    if tuple(x.shape[x.ndim - n:]) != shape or x.ndim < n:
        raise ShapeError(f"{name}: Given normalized_shape={list(shape)}, expected input with "
                         f"shape [*, {', '.join(map(str, shape))}], but got input of size"
                         f"{shape_str(x.shape)}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise ShapeError(f"{name}: {what} of shape {shape_str(t.shape)} does not match "
                             f"normalized_shape {list(shape)}")
    k = x._k
    wd = None if weight is None else weight._data
    y, mean, rstd = k.layer_norm(x._data, wd, None if bias is None else bias._data, n,
                                 float(eps))
    rows = None
    if _moments.applies(x.dtype) and x.device.type != "cuda" and x.numel():
        rows = _moments.suspect_rows(k, mean, rstd, rstd=True)
        if rows.size:
            y, mean, rstd = _pytorch_rows(x, weight, bias, eps, rows, y, mean, rstd)
    r = _wrap(y, x.dtype, x.device, k)
    if recording(x, weight, bias):
        node = NativeLayerNormBackward0()
        node.n_axes, node.eps = n, float(eps)
        if rows is not None and rows.size:
            node.fixed = (rows, _wrap(mean, x.dtype, x.device, k),
                          _wrap(rstd, x.dtype, x.device, k))
        record(r, node, (x, weight, bias), (x, weight), (x._data, wd, mean, rstd))
    return r


def _pytorch_rows(x, weight, bias, eps, rows, y, mean, rstd):
    """The rows whose statistics are huge or not finite, as PyTorch's CPU kernel computes
    them: its ``RowwiseMoments`` (NaN where its lane merge meets ``inf * 0``, where the
    two-pass variance is inf), ``rstd = 1 / sqrt(var + eps)``, ``(x - mean) * rstd``
    scaled and shifted."""
    k = x._k
    with no_grad():
        flat = x.detach().reshape(-1, rowsize := int(x.numel() // _count(mean)))
        at = tensor(rows.tolist(), dtype=_dt.int64, device=x.device)
        sub = flat.index_select(0, at)
        m, v = _moments.rowwise_moments(sub)
        s = (v + float(eps)).sqrt().reciprocal()
        out = (sub - m.unsqueeze(1)) * s.unsqueeze(1)
        if weight is not None:
            out = out * weight.detach().reshape(rowsize)
        if bias is not None:
            out = out + bias.detach().reshape(rowsize)
        fix = [(_wrap(a, x.dtype, x.device, k), b) for a, b in
               ((y, out), (mean, m.unsqueeze(1)), (rstd, s.unsqueeze(1)))]
        return tuple(t.reshape(-1, b.shape[1]).index_copy(0, at, b).reshape(t.shape)._data
                     for t, b in fix)


def _count(a) -> int:
    n = 1
    for d in a.shape:
        n *= d
    return n


def _rows_from(t, rows, fixed):
    """``t`` (Tensor statistics, one per row) with ``rows`` taken from ``fixed`` instead
    (constants there: no gradient flows through those rows' statistics)."""
    mask = t.new_zeros((_count(t),), dtype=_dt.bool_)
    mask[tensor(rows.tolist(), dtype=_dt.int64, device=t.device)] = True
    return fixed.where(mask.reshape(t.shape), t)
