"""One LSTM or GRU layer (one direction, padded steps) as one node on fused kernels.

``nn.LSTM`` (without projection) and ``nn.GRU`` come here when every sequence has the same
length: one ``lstm`` (``gru``) kernel call runs the whole recurrence on bare arrays (no
Tensor, no node per step) and one ``lstm_backward`` (``gru_backward``) call runs
back-propagation through time, instead of two nodes and a dozen recorded ops per step. A
backend without the kernels gets their composites (the same steps in primitives).
Higher-order gradients go through the fused kernels' Tensor binding
(:mod:`plugrad.core.ops.fused`), which differentiates those composites.
"""
from __future__ import annotations

from plugrad.core.autograd import engine
from plugrad.core.autograd.node import OUTPUT, KeepsOutput
from plugrad.core.autograd.record import any_recording, record
from plugrad.core.tensor import Tensor, _wrap


class LstmLayerBackward0(KeepsOutput):
    """Back through time with the saved gates and states. The Tensor binding recomputes
    them with the forward kernel itself (the same values, now functions of the inputs), so
    second-order gradients see how they depend on them."""

    n_outputs = 3  # out, h_n, c_n

    def grad(self, F, g, xw, h0, c0, w_hh, out, cells, gates):
        g_out, g_h, g_c = g
        if g_out is None and g_h is None and g_c is None:
            return None, None, None, None
        return F.lstm_backward(g_out, g_h, g_c, h0, c0, w_hh, out, cells, gates, self.reverse)

    def saved_tensors(self):
        xw, h0, c0, w_hh, _ = self.saved
        out, cells, gates = engine.tensor_ops_for(self.k).lstm(xw, h0, c0, w_hh, self.reverse)
        return xw, h0, c0, w_hh, out, cells, gates


def _layer_fits(xw, h0, w_hh, n_gates: int, others) -> bool:
    """Tensors of one floating dtype and device, ``xw`` ``(T, N, n_gates H)`` with
    ``T >= 1``, ``h0`` ``(N, H)``, ``w_hh`` ``(n_gates H, H)``."""
    ts = (xw, h0, w_hh, *others)
    if not all(isinstance(t, Tensor) for t in ts):
        return False
    if not xw.dtype.is_floating_point or any(t.dtype is not xw.dtype or t.device != xw.device
                                             for t in ts):
        return False
    if xw.ndim != 3 or h0.ndim != 2 or xw.shape[0] < 1:
        return False
    n, hd = h0.shape
    return (tuple(xw.shape[1:]) == (n, n_gates * hd)
            and tuple(w_hh.shape) == (n_gates * hd, hd))


def _last_state(k, arr, reverse: bool, steps: int, n: int, hd: int):
    """The state after the last step (the first one of a reverse layer), in its own array:
    an in-place change of ``h_n`` or ``c_n`` leaves the saved states alone."""
    last = 0 if reverse else steps - 1
    key = (slice(last, last + 1, 1), slice(0, n, 1), slice(0, hd, 1))
    return k.copy(k.reshape(k.slice(arr, key), (n, hd)))


def fusable(xw, h0, c0, w_hh) -> bool:
    """Whether the fused kernels compute exactly this layer: :func:`_layer_fits` with four
    gates, and ``c0`` shaped as ``h0``."""
    return _layer_fits(xw, h0, w_hh, 4, (c0,)) and tuple(c0.shape) == tuple(h0.shape)


def fused_lstm(xw, h0, c0, w_hh, reverse: bool):
    """``(out, h_n, c_n)`` of one LSTM layer over the projected input ``xw`` ``(T, N, 4H)``
    (both biases included) from ``(h0, c0)``, as one node (see :func:`fusable`)."""
    k = xw._k
    out, cells, gates = k.lstm(xw._data, h0._data, c0._data, w_hh._data, bool(reverse))
    shape = (bool(reverse), xw.shape[0], *h0.shape)
    dt, dev = xw.dtype, xw.device
    r = _wrap(out, dt, dev, k)
    h_n = _wrap(_last_state(k, out, *shape), dt, dev, k)
    c_n = _wrap(_last_state(k, cells, *shape), dt, dev, k)
    if any_recording((xw, h0, c0, w_hh)):
        node = LstmLayerBackward0()
        node.reverse = bool(reverse)
        record(r, node, (xw, h0, c0, w_hh), (xw, h0, c0, w_hh, OUTPUT),
               (None, h0._data, c0._data, w_hh._data, out, cells, gates))
        for nr, t in ((1, h_n), (2, c_n)):
            t.grad_fn, t._rg, t._output_nr = node, True, nr
    return r, h_n, c_n


# ---------------------------------------------------------------------- GRU
class GruLayerBackward0(KeepsOutput):
    """As :class:`LstmLayerBackward0`, for the ``gru`` kernels."""

    n_outputs = 2  # out, h_n

    def grad(self, F, g, xw, h0, w_hh, b_hh, out, gates, hn):
        g_out, g_h = g
        if g_out is None and g_h is None:
            return None, None, None, None
        return F.gru_backward(g_out, g_h, h0, w_hh, b_hh, out, gates, hn, self.reverse)

    def saved_tensors(self):
        xw, h0, w_hh, b_hh, _ = self.saved
        out, gates, hn = engine.tensor_ops_for(self.k).gru(xw, h0, w_hh, b_hh, self.reverse)
        return xw, h0, w_hh, b_hh, out, gates, hn


def gru_fusable(xw, h0, w_hh, b_hh) -> bool:
    """:func:`fusable` for the ``gru`` kernels: three gates, ``b_hh`` ``(3H,)`` or None."""
    others = () if b_hh is None else (b_hh,)
    return _layer_fits(xw, h0, w_hh, 3, others) and (
        b_hh is None or tuple(b_hh.shape) == (w_hh.shape[0],))


def fused_gru(xw, h0, w_hh, b_hh, reverse: bool):
    """``(out, h_n)`` of one GRU layer over ``xw = x w_ih^T + b_ih`` ``(T, N, 3H)`` from
    ``h0``, as one node (see :func:`gru_fusable`)."""
    k = xw._k
    bd = None if b_hh is None else b_hh._data
    out, gates, hn = k.gru(xw._data, h0._data, w_hh._data, bd, bool(reverse))
    dt, dev = xw.dtype, xw.device
    r = _wrap(out, dt, dev, k)
    h_n = _wrap(_last_state(k, out, bool(reverse), xw.shape[0], *h0.shape), dt, dev, k)
    if any_recording((xw, h0, w_hh, b_hh)):
        node = GruLayerBackward0()
        node.reverse = bool(reverse)
        record(r, node, (xw, h0, w_hh, b_hh), (xw, h0, w_hh, b_hh, OUTPUT),
               (None, h0._data, w_hh._data, bd, out, gates, hn))
        h_n.grad_fn, h_n._rg, h_n._output_nr = node, True, 1
    return r, h_n
