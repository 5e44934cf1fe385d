"""The recurrences behind ``nn.RNN``/``LSTM``/``GRU`` and their cells, on public Tensor ops.

An LSTM without projection or a GRU over padded input runs each layer and direction as one
node on the backend's ``lstm``/``gru`` kernels and their backward (:func:`run_fused_padded`,
:mod:`plugrad.core.ops.recurrent`). Otherwise, per layer and direction, the input of every
time step is projected with one ``linear``, and each step costs one matmul (``h @ W_hh^T``)
and one *pointwise node*: an ``autograd.Function`` that computes the cell's elementwise part
(gates, state update) under ``no_grad`` and has a hand-written backward. Compared with
recording each elementwise op, this keeps the graph at two nodes per step and avoids the gate
slices' gradients, each of which would be padded back to the full gate width. The per-step
views of the projected input come from one multi-output node (:class:`_Split`) whose
backward is a single ``cat``: a chain of ``narrow`` nodes would pad every step's gradient to
the whole sequence.

The backward formulas are Tensor ops, so ``create_graph=True`` works: there each node
recomputes its intermediates from its (graph-connected) inputs instead of using the saved,
graph-free ones, so higher-order gradients are exact.
"""
from __future__ import annotations

import plugrad
from plugrad.autograd import Function
from plugrad.core.ops.recurrent import fusable as _lstm_fusable
from plugrad.core.ops.recurrent import fused_gru as _fused_gru
from plugrad.core.ops.recurrent import fused_lstm as _fused_lstm
from plugrad.core.ops.recurrent import gru_fusable as _gru_fusable
from plugrad.nn import functional as F


class _Split(Function):
    """``x.split(sizes)`` along dim 0 as one node; backward: ``cat`` of the pieces' grads."""

    @staticmethod
    def forward(ctx, x, sizes):
        return tuple(x.split(sizes, 0))

    @staticmethod
    def backward(ctx, *grads):
        return plugrad.cat(grads, 0), None


def split_steps(x, sizes):
    """The rows of ``x`` cut into consecutive blocks of ``sizes`` rows (one per time step)."""
    if len(sizes) == 1:
        return (x,)
    out = _Split.apply(x, list(sizes))
    return out if isinstance(out, tuple) else (out,)


# ---------------------------------------------------------------------- pointwise parts
def _lstm_math(xw, hw, c):
    """LSTM update from the gate pre-activations ``xw + hw`` (PyTorch's order i, f, g, o)."""
    hidden = c.shape[-1]
    gates = xw + hw
    s = gates.sigmoid()
    i, f, o = s.narrow(-1, 0, hidden), s.narrow(-1, hidden, hidden), \
        s.narrow(-1, 3 * hidden, hidden)
    g = gates.narrow(-1, 2 * hidden, hidden).tanh()
    c_new = f * c + i * g
    tc = c_new.tanh()
    return o * tc, c_new, (i, f, g, o, tc)


class _LSTMPointwise(Function):
    """``(h, c') = (o * tanh(c'), f * c + i * g)`` from ``xw``, ``hw`` (both ``(N, 4H)``)
    and ``c``."""

    @staticmethod
    def forward(ctx, xw, hw, c):
        h, c_new, inter = _lstm_math(xw, hw, c)
        ctx.save_for_backward(xw, hw, c, *inter)
        return h, c_new

    @staticmethod
    def backward(ctx, dh, dc):
        xw, hw, c, *inter = ctx.saved_tensors
        if plugrad.is_grad_enabled():  # create_graph: intermediates with a graph
            inter = _lstm_math(xw, hw, c)[2]
        i, f, g, o, tc = inter
        dc = dc + dh * o * (1.0 - tc * tc)
        d_i = dc * g * i * (1.0 - i)
        d_f = dc * c * f * (1.0 - f)
        d_g = dc * i * (1.0 - g * g)
        d_o = dh * tc * o * (1.0 - o)
        d_gates = plugrad.cat([d_i, d_f, d_g, d_o], -1)
        return d_gates, d_gates, dc * f


def _gru_math(xw, hw, h):
    """GRU update (PyTorch's order r, z, n; ``hw`` includes ``b_hh``, so ``b_hn`` sits
    inside ``r * (.)`` as PyTorch has it)."""
    hidden = h.shape[-1]
    rz = (xw.narrow(-1, 0, 2 * hidden) + hw.narrow(-1, 0, 2 * hidden)).sigmoid()
    r, z = rz.narrow(-1, 0, hidden), rz.narrow(-1, hidden, hidden)
    hn = hw.narrow(-1, 2 * hidden, hidden)
    n = (xw.narrow(-1, 2 * hidden, hidden) + r * hn).tanh()
    return n + z * (h - n), (r, z, n, hn)


class _GRUPointwise(Function):
    """``h' = (1 - z) * n + z * h`` from ``xw``, ``hw`` (both ``(N, 3H)``) and ``h``."""

    @staticmethod
    def forward(ctx, xw, hw, h):
        h_new, inter = _gru_math(xw, hw, h)
        ctx.save_for_backward(xw, hw, h, *inter)
        return h_new

    @staticmethod
    def backward(ctx, dh):
        xw, hw, h, *inter = ctx.saved_tensors
        if plugrad.is_grad_enabled():
            inter = _gru_math(xw, hw, h)[1]
        r, z, n, hn = inter
        dn = dh * (1.0 - z) * (1.0 - n * n)
        d_r = dn * hn * r * (1.0 - r)
        d_z = dh * (h - n) * z * (1.0 - z)
        return (plugrad.cat([d_r, d_z, dn], -1), plugrad.cat([d_r, d_z, dn * r], -1), dh * z)


class _TanhPointwise(Function):
    """``h' = tanh(xw + hw)``."""

    @staticmethod
    def forward(ctx, xw, hw):
        h = (xw + hw).tanh()
        ctx.save_for_backward(xw, hw, h)
        return h

    @staticmethod
    def backward(ctx, dh):
        xw, hw, h = ctx.saved_tensors
        if plugrad.is_grad_enabled():
            h = (xw + hw).tanh()
        d = dh * (1.0 - h * h)
        return d, d


class _ReluPointwise(Function):
    """``h' = relu(xw + hw)``."""

    @staticmethod
    def forward(ctx, xw, hw):
        h = (xw + hw).relu()
        ctx.save_for_backward(h)
        return h

    @staticmethod
    def backward(ctx, dh):
        (h,) = ctx.saved_tensors
        d = dh * (h > 0).to(dh.dtype)
        return d, d


# ---------------------------------------------------------------------- one step, one cell
def rnn_step(mode: str, xw, h, c, w_hh, b_hh, w_hr):
    """One time step: ``xw`` is the projected input (for LSTM/RNN it already holds both
    biases). Returns ``(h', c')`` (``c'`` is None except for LSTM)."""
    if mode == "LSTM":
        h, c = _LSTMPointwise.apply(xw, F.linear(h, w_hh), c)
        return (F.linear(h, w_hr) if w_hr is not None else h), c
    if mode == "GRU":
        return _GRUPointwise.apply(xw, F.linear(h, w_hh, b_hh), h), None
    step = _TanhPointwise if mode == "RNN_TANH" else _ReluPointwise
    return step.apply(xw, F.linear(h, w_hh)), None


def input_bias(mode: str, b_ih, b_hh):
    """The bias added with the input projection: both biases, except for GRU whose
    ``b_hn`` must stay inside the reset gate's product."""
    if b_ih is None:
        return None
    return b_ih if mode == "GRU" else b_ih + b_hh


# ---------------------------------------------------------------------- a whole sequence
def run_direction(mode, x, batch_sizes, h, c, weights, reverse: bool):
    """One layer in one direction over packed rows ``x`` (``sum(batch_sizes)`` rows, time
    step by time step, longest sequences first).

    ``weights`` is ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` (missing ones None); ``h``/``c``
    the initial state for the whole batch. Returns the output rows (same layout as ``x``)
    and the final state of every sequence (each taken at its own last step)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    steps = split_steps(F.linear(x, w_ih, input_bias(mode, b_ih, b_hh)), batch_sizes)
    full = batch_sizes[0]
    outs = [None] * len(batch_sizes)
    if not reverse:
        done_h, done_c = [], []  # states of sequences that ended, in order of ending
        for t, bs in enumerate(batch_sizes):
            if bs < h.shape[0]:  # the shortest running sequences ended at step t - 1
                done_h.append(h[bs:])
                h = h[:bs]
                if c is not None:
                    done_c.append(c[bs:])
                    c = c[:bs]
            h, c = rnn_step(mode, steps[t], h, c, w_hh, b_hh, w_hr)
            outs[t] = h
        h_n = plugrad.cat([h] + done_h[::-1], 0) if done_h else h
        c_n = None if c is None else (plugrad.cat([c] + done_c[::-1], 0) if done_c else c)
    else:  # from the last step back: sequences join as their last step comes up
        h0, c0 = h, c
        rows = batch_sizes[-1]
        h = h0[:rows] if rows < full else h0
        c = None if c0 is None else (c0[:rows] if rows < full else c0)
        for t in range(len(batch_sizes) - 1, -1, -1):
            bs = batch_sizes[t]
            if bs > rows:
                h = plugrad.cat([h, h0[rows:bs]], 0)
                if c is not None:
                    c = plugrad.cat([c, c0[rows:bs]], 0)
                rows = bs
            h, c = rnn_step(mode, steps[t], h, c, w_hh, b_hh, w_hr)
            outs[t] = h
        h_n, c_n = h, c
    return plugrad.cat(outs, 0) if len(outs) > 1 else outs[0], h_n, c_n


def run_layers(mode, x, batch_sizes, hx, cx, groups, num_layers: int, num_directions: int,
               dropout: float, training: bool):
    """All layers and directions over packed rows ``x``; ``hx``/``cx`` are
    ``(num_layers * num_directions, N, *)``. Returns ``(output rows, h_n, c_n)``."""
    hs, cs = hx.unbind(0), (cx.unbind(0) if cx is not None else None)
    h_n, c_n = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(num_directions):
            k = layer * num_directions + d
            out, h, c = run_direction(mode, x, batch_sizes, hs[k], cs[k] if cs else None,
                                      groups[k], reverse=d == 1)
            outs.append(out)
            h_n.append(h)
            c_n.append(c)
        x = outs[0] if num_directions == 1 else plugrad.cat(outs, -1)
        if dropout and training and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    return x, plugrad.stack(h_n, 0), (plugrad.stack(c_n, 0) if cx is not None else None)


# ---------------------------------------------------------------------- fused LSTM layers
def _project(x, w_ih, bias):
    """``linear`` of a ``(T, N, E)`` view in the order its memory has (batch-major when it
    is the transpose of a contiguous ``(N, T, E)``), so that no copy is made either way."""
    if not x.is_contiguous() and x.transpose(0, 1).is_contiguous():
        return F.linear(x.transpose(0, 1), w_ih, bias).transpose(0, 1)
    return F.linear(x, w_ih, bias)


def run_fused_padded(mode, x, hx, cx, groups, num_layers: int, num_directions: int,
                     dropout: float, training: bool):
    """All layers and directions of an LSTM without projection (``cx`` its initial cell
    state) or a GRU (``cx`` None) over padded ``x`` ``(T, N, E)``, each one node on the
    ``lstm``/``gru`` kernels (:mod:`plugrad.core.ops.recurrent`): ``(output (T, N, D*H),
    h_n, c_n)``, or None where the kernels do not apply (then nothing was recorded that
    anything reads)."""
    lstm = mode == "LSTM"
    hs, cs = hx.unbind(0), (cx.unbind(0) if lstm else None)
    h_n, c_n = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(num_directions):
            k = layer * num_directions + d
            w_ih, w_hh, b_ih, b_hh, _ = groups[k]
            xw = _project(x, w_ih, input_bias(mode, b_ih, b_hh))
            if lstm:
                if not _lstm_fusable(xw, hs[k], cs[k], w_hh):
                    return None
                out, h, c = _fused_lstm(xw, hs[k], cs[k], w_hh, d == 1)
                c_n.append(c)
            else:
                if not _gru_fusable(xw, hs[k], w_hh, b_hh):
                    return None
                out, h = _fused_gru(xw, hs[k], w_hh, b_hh, d == 1)
            outs.append(out)
            h_n.append(h)
        x = outs[0] if num_directions == 1 else plugrad.cat(outs, -1)
        if dropout and training and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    return x, plugrad.stack(h_n, 0), (plugrad.stack(c_n, 0) if lstm else None)
