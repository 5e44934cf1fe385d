"""The recurrent kernels of :class:`~plugrad.backends.xp_kernels.XpKernels` (``lstm`` and
``lstm_backward``), written once on ``self.xp`` for NumPy and CuPy.

A recurrence cannot be vectorised over time, so what is left per step is kept to the
matmul and a few in-place passes into preallocated ``(T, N, *)`` buffers: the gate
activations are written straight into the saved ``gates``, the cell state into ``cells``,
the hidden state into ``out``. Backward computes every factor that does not depend on the
incoming gradient for all steps at once, so a step is two fused multiplies, two updates
and one matmul; the weight gradient is one matmul over all steps. float16/bfloat16 take
the composite (NumPy's matmul has no ``out=`` of those dtypes).
"""
from __future__ import annotations

from plugrad.backends.composites import Composites as _C

_FAST = ("float32", "float64")


class XpRecurrentKernels:
    """The LSTM layer kernels over ``self.xp``."""

    def lstm(self, xw, h0, c0, w_hh, reverse):
        if self.dtype_of(xw) not in _FAST or not (
                self.dtype_of(h0) == self.dtype_of(c0) == self.dtype_of(w_hh)
                == self.dtype_of(xw)):
            return _C.lstm(self, xw, h0, c0, w_hh, reverse)
        xp = self.xp
        steps, n, width = xw.shape
        hd = width // 4
        gates = xp.empty((steps, n, width), dtype=xw.dtype)
        cells = xp.empty((steps, n, hd), dtype=xw.dtype)
        out = xp.empty((steps, n, hd), dtype=xw.dtype)
        wt = w_hh.T
        h, c = h0, c0
        with self._quiet():  # exp(-z) overflows to inf for very negative z: sigmoid 0
            for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
                z = gates[t]
                xp.matmul(h, wt, out=z)
                z += xw[t]
                g = xp.tanh(z[:, 2 * hd:3 * hd])
                xp.negative(z, out=z)  # sigmoid of all four quarters, in place
                xp.exp(z, out=z)
                z += 1.0
                xp.reciprocal(z, out=z)
                z[:, 2 * hd:3 * hd] = g
                c_new = cells[t]
                xp.multiply(z[:, hd:2 * hd], c, out=c_new)
                g *= z[:, :hd]
                c_new += g
                h = out[t]
                xp.tanh(c_new, out=h)
                h *= z[:, 3 * hd:]
                c = c_new
        return out, cells, gates

    def lstm_backward(self, g_out, g_h, g_c, h0, c0, w_hh, out, cells, gates, reverse):
        dt = self.dtype_of(cells)
        arrays = (g_out, g_h, g_c, h0, c0, w_hh, out, gates)
        if dt not in _FAST or any(a is not None and self.dtype_of(a) != dt for a in arrays):
            return _C.lstm_backward(self, g_out, g_h, g_c, h0, c0, w_hh, out, cells, gates,
                                    reverse)
        xp = self.xp
        steps, n, hd = cells.shape
        with self._quiet():
            # the state before each step, in step order
            if reverse:
                c_prev = xp.concatenate([cells[1:], c0[None]], axis=0)
                h_prev = xp.concatenate([out[1:], h0[None]], axis=0)
            else:
                c_prev = xp.concatenate([c0[None], cells[:-1]], axis=0)
                h_prev = xp.concatenate([h0[None], out[:-1]], axis=0)
            g4 = gates.reshape(steps, n, 4, hd)
            i, f, g, o = g4[:, :, 0], g4[:, :, 1], g4[:, :, 2], g4[:, :, 3]
            tc = xp.tanh(cells)
            # d c_t / d h_t: o (1 - tanh(c)^2); the gate factors dz = [dc, dc, dc, dh] * fac
            dcdh = tc * tc
            xp.subtract(1.0, dcdh, out=dcdh)
            dcdh *= o
            fac = xp.empty((steps, n, 4, hd), dtype=cells.dtype)
            xp.multiply(i, 1.0 - i, out=fac[:, :, 0])
            fac[:, :, 0] *= g
            xp.multiply(f, 1.0 - f, out=fac[:, :, 1])
            fac[:, :, 1] *= c_prev
            xp.multiply(g, g, out=fac[:, :, 2])
            xp.subtract(1.0, fac[:, :, 2], out=fac[:, :, 2])
            fac[:, :, 2] *= i
            xp.multiply(o, 1.0 - o, out=fac[:, :, 3])
            fac[:, :, 3] *= tc
            dz = xp.empty((steps, n, 4, hd), dtype=cells.dtype)
            dh = xp.zeros((n, hd), dtype=cells.dtype) if g_h is None else g_h.copy()
            dc = xp.zeros((n, hd), dtype=cells.dtype) if g_c is None else g_c.copy()
            tmp = xp.empty((n, hd), dtype=cells.dtype)
            for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
                if g_out is not None:
                    dh += g_out[t]
                xp.multiply(dh, dcdh[t], out=tmp)
                dc += tmp
                zt = dz[t]
                xp.multiply(fac[t, :, :3], dc[:, None, :], out=zt[:, :3])
                xp.multiply(fac[t, :, 3], dh, out=zt[:, 3])
                dc *= f[t]
                xp.matmul(zt.reshape(n, 4 * hd), w_hh, out=dh)
            g_xw = dz.reshape(steps, n, 4 * hd)
            g_w = xp.matmul(g_xw.reshape(steps * n, 4 * hd).T, h_prev.reshape(steps * n, hd))
        return g_xw, dh, dc, g_w
