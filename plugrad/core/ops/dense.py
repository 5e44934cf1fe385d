"""``linear``: ``x @ weight.T + bias`` as one node, one 2-D product each way for any batch."""
from __future__ import annotations

import math

from plugrad.core import autocast as _ac
from plugrad.core.autograd.node import Node, torch_named
from plugrad.core.autograd.record import record, recording
from plugrad.core.errors import ShapeError, shape_str
from plugrad.core.ops.declare import op
from plugrad.core.ops.window import INTS, tensor_args
from plugrad.core.tensor import _wrap


class LinearBackward0(Node):
    """``g @ w``, ``g.T @ x`` and ``g.sum(0)`` on the batch flattened to rows."""

    def grad(self, F, g, x, w):
        lead = g.shape[:-1]
        g2 = g if len(lead) == 1 else F.reshape(g, (math.prod(lead), g.shape[-1]))
        gx = gw = gb = None
        if self.next[0]:
            gx = F.matmul(g2, w)
            if len(lead) != 1:
                gx = F.reshape(gx, x.shape)
        if self.next[1]:
            x2 = x if len(x.shape) == 2 else F.reshape(
                x, (math.prod(x.shape[:-1]), x.shape[-1]))
            gw = F.matmul(F.permute(g2, (1, 0)), x2)
        if len(self.next) > 2 and self.next[2]:
            gb = F.sum(g2, (0,), False)
        return gx, gw, gb


class _WeightTransposed(Node):
    """What PyTorch's graph shows between a 2-D linear's node and its weight: the
    ``weight.t()`` view (``TBackward0``). For introspection only; the engine never runs it
    (the linear node's own rule gives the weight's gradient)."""


_TBackward0 = torch_named(_WeightTransposed, "TBackward0")


class _MatrixLinearBackward(LinearBackward0):
    """A 2-D linear's node, its ``next_functions`` in PyTorch's order for ``addmm(bias, x,
    weight.t())`` / ``mm(x, weight.t())`` (tutorials walk them)."""

    @property
    def next_functions(self) -> tuple:
        edges = super().next_functions
        weight = edges[1]
        if weight[0] is not None:
            t = _TBackward0()
            t.next = (self.next[1],)
            weight = (t, 0)
        return (*edges[2:], edges[0], weight)


#: PyTorch's name for linear's node by (input is 1-D / 2-D / N-d, has a bias): the last op
#: of its decomposition (addmm or mm, then a view back to the batch shape)
_NAMES = {(1, True): "ViewBackward0", (1, False): "SqueezeBackward4",
          (2, True): "AddmmBackward0", (2, False): "MmBackward0",
          (3, True): "ViewBackward0", (3, False): "UnsafeViewBackward0"}
_NODES = {case: torch_named(_MatrixLinearBackward if case[0] == 2 else LinearBackward0,
                            name) for case, name in _NAMES.items()}


@op(functional="linear")
def linear(x, weight, bias=None):
    """``x @ weight.T + bias`` (any leading dims of ``x``; 1-D ``x`` too)."""
    if _ac.active: x, weight, bias = _ac.autocast_args("linear", x, weight, bias)
    tensor_args("linear", x, weight, bias, ints=INTS)
    xs, ws = x._data.shape, weight._data.shape
    if not xs or len(ws) != 2 or xs[-1] != ws[1]:
        sx = "x".join(str(s) for s in (x.shape if x.ndim != 1 else (1, x.shape[0])))
        sw = "x".join(str(s) for s in reversed(weight.shape))
        raise ShapeError(f"linear: mat1 and mat2 shapes cannot be multiplied ({sx} and {sw}): "
                         f"input {shape_str(x.shape)}, weight {shape_str(weight.shape)} "
                         f"(expected input[..., {weight.shape[-1]}])")
    if bias is not None and bias._data.shape not in ((ws[0],), ()):
        raise ShapeError(f"linear: bias of shape {shape_str(bias.shape)} does not match "
                         f"out_features {ws[0]}")
    k = x._k
    wt = k.permute(weight._data, (1, 0))
    if len(xs) == 2:
        out = k.matmul(x._data, wt)
    elif len(xs) > 2:  # one 2-D product: batched matmul against a shared matrix skips BLAS
        lead = tuple(xs[:-1])
        out = k.reshape(k.matmul(k.reshape(x._data, (math.prod(lead), xs[-1])), wt),
                        lead + (ws[0],))
    else:
        out = k.reshape(k.matmul(k.reshape(x._data, (1, xs[0])), wt), (ws[0],))
    if bias is not None:  # into the product's fresh array (one allocation and pass fewer)
        out = k.update_("add", out, bias._data)
    r = _wrap(out, x.dtype, x.device, k)
    if recording(x, weight, bias):
        node = _NODES[min(len(xs), 3), bias is not None]()
        record(r, node, (x, weight, bias) if bias is not None else (x, weight), (x, weight))
    return r
