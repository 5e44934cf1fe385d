"""The recurrent kernels of :class:`~plugrad.backends.xp_kernels.XpKernels` (``lstm`` and
``lstm_backward``), written once on ``self.xp`` for NumPy and CuPy.

A recurrence cannot be vectorised over time, so what is left per step is kept to the
matmul and a few in-place passes into preallocated ``(T, N, *)`` buffers: the gate
activations are written straight into the saved ``gates``, the cell state into ``cells``,
the hidden state into ``out`` (laid out batch-major when ``xw`` is, as a batch-first
caller's projection is, so the caller's next ``linear`` needs no copy). Backward works step by step too, on ``(N, 4H)`` scratch
arrays that stay in cache (vectorising the gate derivatives over all steps was slower:
those passes over ``(T, N, 4H)`` run at memory speed), writing each step's gate gradient
into the result; the weight gradient is one matmul over all steps. float16/bfloat16 take
the composite (NumPy's matmul has no ``out=`` of those dtypes).
"""
from __future__ import annotations

from plugrad.backends.composites import Composites as _C

_FAST = ("float32", "float64")


def _batch_major(a) -> bool:
    """Whether the ``(T, N, W)`` array ``a`` is laid out ``(N, T, W)`` in memory (the
    transpose of a contiguous batch-first array)."""
    return a.ndim == 3 and a.shape[0] > 1 and a.shape[1] > 1 and a.strides[0] < a.strides[1]


def _along(a, axis: int, key):
    """``a`` indexed by ``key`` along ``axis`` (0 or 1)."""
    return a[key] if axis == 0 else a[:, key]


def _like(xp, a, width):
    """A new ``(T, N, width)`` array in ``a``'s memory order (batch-major or step-major), so
    that a batch-first caller reads the result without a copy."""
    steps, n = a.shape[0], a.shape[1]
    if _batch_major(a):
        return xp.empty((n, steps, width), dtype=a.dtype).transpose(1, 0, 2)
    return xp.empty((steps, n, width), dtype=a.dtype)


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
        out = _like(xp, xw, hd)
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
        width = 4 * hd
        dz = _like(xp, out, width)  # the layout of xw, where g_xw goes
        dh = xp.zeros((n, hd), dtype=cells.dtype) if g_h is None else g_h.copy()
        dc = xp.zeros((n, hd), dtype=cells.dtype) if g_c is None else g_c.copy()
        tc, tmp = xp.empty((n, hd), dtype=cells.dtype), xp.empty((n, hd), dtype=cells.dtype)
        q = xp.empty((n, width), dtype=cells.dtype)
        first = steps - 1 if reverse else 0  # the step whose state before is (h0, c0)
        with self._quiet():
            for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
                s = gates[t]
                i, f, g, o = s[:, :hd], s[:, hd:2 * hd], s[:, 2 * hd:3 * hd], s[:, 3 * hd:]
                if g_out is not None:
                    dh += g_out[t]
                xp.tanh(cells[t], out=tc)
                xp.multiply(tc, tc, out=tmp)  # dc += dh o (1 - tanh(c)^2)
                xp.subtract(1.0, tmp, out=tmp)
                tmp *= o
                tmp *= dh
                dc += tmp
                xp.subtract(1.0, s, out=q)  # the gates' derivatives: s (1 - s), 1 - g^2
                q *= s
                qg = q[:, 2 * hd:3 * hd]
                xp.multiply(g, g, out=qg)
                xp.subtract(1.0, qg, out=qg)
                z = dz[t]  # dz = [dc g, dc c_prev, dc i, dh tanh(c)] * q
                xp.multiply(dc, g, out=z[:, :hd])
                xp.multiply(dc, c0 if t == first else cells[t + 1 if reverse else t - 1],
                            out=z[:, hd:2 * hd])
                xp.multiply(dc, i, out=z[:, 2 * hd:3 * hd])
                xp.multiply(dh, tc, out=z[:, 3 * hd:])
                z *= q
                dc *= f
                xp.matmul(z, w_hh, out=dh)
            # the weight gradient: one matmul over the steps in dz's memory order
            ax = 1 if _batch_major(dz) else 0  # the step axis of the buffers
            src, rows_dz = (out.transpose(1, 0, 2), dz.transpose(1, 0, 2)) if ax else (out, dz)
            h_prev = xp.empty(src.shape, dtype=cells.dtype)  # the state before each step
            if reverse:
                _along(h_prev, ax, slice(0, steps - 1))[...] = _along(src, ax, slice(1, steps))
                _along(h_prev, ax, steps - 1)[...] = h0
            else:
                _along(h_prev, ax, slice(1, steps))[...] = _along(src, ax, slice(0, steps - 1))
                _along(h_prev, ax, 0)[...] = h0
            g_w = xp.matmul(rows_dz.reshape(steps * n, width).T, h_prev.reshape(steps * n, hd))
            g_xw = dz
        return g_xw, dh, dc, g_w

    def _sigmoid_(self, z):
        """``z`` replaced by its sigmoid, in place (exp(-z) may overflow to inf: 0)."""
        xp = self.xp
        xp.negative(z, out=z)
        xp.exp(z, out=z)
        z += 1.0
        xp.reciprocal(z, out=z)

    def gru(self, xw, h0, w_hh, b_hh, reverse):
        arrays = (h0, w_hh) + (() if b_hh is None else (b_hh,))
        if self.dtype_of(xw) not in _FAST or any(self.dtype_of(a) != self.dtype_of(xw)
                                                 for a in arrays):
            return _C.gru(self, xw, h0, w_hh, b_hh, reverse)
        xp = self.xp
        steps, n, width = xw.shape
        hd = width // 3
        gates = xp.empty((steps, n, width), dtype=xw.dtype)
        hns = xp.empty((steps, n, hd), dtype=xw.dtype)
        out = _like(xp, xw, hd)
        hw = xp.empty((n, width), dtype=xw.dtype)
        wt = w_hh.T
        h = h0
        with self._quiet():
            for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
                x, s = xw[t], gates[t]
                xp.matmul(h, wt, out=hw)
                if b_hh is not None:
                    hw += b_hh
                rz = s[:, :2 * hd]
                xp.add(x[:, :2 * hd], hw[:, :2 * hd], out=rz)
                self._sigmoid_(rz)
                hns[t] = hw[:, 2 * hd:]
                nn = s[:, 2 * hd:]
                xp.multiply(s[:, :hd], hw[:, 2 * hd:], out=nn)
                nn += x[:, 2 * hd:]
                xp.tanh(nn, out=nn)
                h_new = out[t]
                xp.subtract(h, nn, out=h_new)
                h_new *= s[:, hd:2 * hd]
                h_new += nn
                h = h_new
        return out, gates, hns

    def gru_backward(self, g_out, g_h, h0, w_hh, b_hh, out, gates, hn, reverse):
        dt = self.dtype_of(out)
        arrays = (g_out, g_h, h0, w_hh, b_hh, gates, hn)
        if dt not in _FAST or any(a is not None and self.dtype_of(a) != dt for a in arrays):
            return _C.gru_backward(self, g_out, g_h, h0, w_hh, b_hh, out, gates, hn, reverse)
        xp = self.xp
        steps, n, hd = out.shape
        width = 3 * hd
        dx = _like(xp, out, width)  # the layout of xw, where g_xw goes
        dhw = xp.empty((steps, n, width), dtype=out.dtype)
        dh = xp.zeros((n, hd), dtype=out.dtype) if g_h is None else g_h.copy()
        tmp, keep = xp.empty((n, hd), dtype=out.dtype), xp.empty((n, hd), dtype=out.dtype)
        first = steps - 1 if reverse else 0
        with self._quiet():
            for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
                if g_out is not None:
                    dh += g_out[t]
                s, d = gates[t], dx[t]
                r, z, nn = s[:, :hd], s[:, hd:2 * hd], s[:, 2 * hd:]
                h_prev = h0 if t == first else out[t + 1 if reverse else t - 1]
                d_r, d_z, d_n = d[:, :hd], d[:, hd:2 * hd], d[:, 2 * hd:]
                xp.subtract(1.0, z, out=tmp)
                xp.multiply(nn, nn, out=d_n)  # dn = dh (1 - z) (1 - n^2)
                xp.subtract(1.0, d_n, out=d_n)
                d_n *= tmp
                d_n *= dh
                tmp *= z  # dz = dh (h_prev - n) z (1 - z)
                xp.subtract(h_prev, nn, out=d_z)
                d_z *= dh
                d_z *= tmp
                xp.subtract(1.0, r, out=d_r)  # dr = dn hn r (1 - r)
                d_r *= r
                d_r *= hn[t]
                d_r *= d_n
                e = dhw[t]
                e[:, :2 * hd] = d[:, :2 * hd]
                xp.multiply(d_n, r, out=e[:, 2 * hd:])
                xp.multiply(dh, z, out=keep)
                xp.matmul(e, w_hh, out=dh)
                dh += keep
            h_prev = (xp.concatenate([out[1:], h0[None]], axis=0) if reverse else
                      xp.concatenate([h0[None], out[:-1]], axis=0))
            rows = dhw.reshape(steps * n, width)
            g_w = xp.matmul(rows.T, h_prev.reshape(steps * n, hd))
            g_b = None if b_hh is None else xp.sum(rows, axis=0)
        return dx, dh, g_w, g_b
