"""The op database's entries for the recurrent kernels: ``lstm``, ``gru`` and their backward.

Each backend's kernel is checked against the reference backend's (the composite). The
backward kernel is a function of its arrays whatever they hold, so its samples need not
come from a forward; gates are drawn in ``(0, 1)`` as activations are. The layer built on
them (``nn.LSTM``, ``nn.GRU``) is compared with PyTorch, differentiated twice and gradchecked in
``tests/nn/test_rnn_fused.py``.
"""
from __future__ import annotations

from plugrad.testing.opdb import K_FLOATS, SampleInput as S, _add, _K


def k_lstm(make, dtype):
    hd = 2
    yield S((make(3, 2, 4 * hd), make(2, hd), make(2, hd), make(4 * hd, hd), False),
            name="3 steps")
    yield S((make(3, 2, 4 * hd), make(2, hd), make(2, hd), make(4 * hd, hd), True),
            name="reverse")
    yield S((make(1, 3, 4 * hd, layout="slice"), make(3, hd, layout="T"), make(3, hd),
             make(4 * hd, hd, layout="T"), False), name="1 step, strided")
    yield S((make(2, 0, 4 * hd), make(0, hd), make(0, hd), make(4 * hd, hd), False),
            name="zero batch")


def k_lstm_backward(make, dtype):
    hd = 2

    def state(steps, n, reverse, g_out=True, g_h=True, g_c=True):
        gate = dict(low=0.05, high=0.95)
        return ((make(steps, n, hd) if g_out else None), (make(n, hd) if g_h else None),
                (make(n, hd) if g_c else None), make(n, hd), make(n, hd), make(4 * hd, hd),
                make(steps, n, hd, low=-1, high=1), make(steps, n, hd),
                make(steps, n, 4 * hd, **gate), reverse)
    yield S(state(3, 2, False), name="3 steps, every gradient")
    yield S(state(3, 2, True), name="reverse")
    yield S(state(2, 2, False, g_h=False, g_c=False), name="out's gradient only")
    yield S(state(2, 3, True, g_out=False), name="final states' gradients only")
    yield S(state(1, 2, False), name="1 step")


def k_gru(make, dtype):
    hd = 2
    yield S((make(3, 2, 3 * hd), make(2, hd), make(3 * hd, hd), make(3 * hd), False),
            name="3 steps")
    yield S((make(3, 2, 3 * hd), make(2, hd), make(3 * hd, hd), None, True),
            name="reverse, no bias")
    yield S((make(1, 3, 3 * hd, layout="slice"), make(3, hd, layout="T"),
             make(3 * hd, hd, layout="T"), make(3 * hd), False), name="1 step, strided")
    yield S((make(2, 0, 3 * hd), make(0, hd), make(3 * hd, hd), make(3 * hd), False),
            name="zero batch")


def k_gru_backward(make, dtype):
    hd = 2

    def state(steps, n, reverse, g_out=True, g_h=True, bias=True):
        gate = dict(low=0.05, high=0.95)
        return ((make(steps, n, hd) if g_out else None), (make(n, hd) if g_h else None),
                make(n, hd), make(3 * hd, hd), (make(3 * hd) if bias else None),
                make(steps, n, hd, low=-1, high=1), make(steps, n, 3 * hd, **gate),
                make(steps, n, hd), reverse)
    yield S(state(3, 2, False), name="3 steps, every gradient")
    yield S(state(3, 2, True, bias=False), name="reverse, no bias")
    yield S(state(2, 2, False, g_h=False), name="out's gradient only")
    yield S(state(2, 3, True, g_out=False), name="final state's gradient only")


_add(_K("lstm", k_lstm, K_FLOATS), _K("lstm_backward", k_lstm_backward, K_FLOATS),
     _K("gru", k_gru, K_FLOATS), _K("gru_backward", k_gru_backward, K_FLOATS))
