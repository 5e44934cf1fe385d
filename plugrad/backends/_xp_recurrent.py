"""The recurrent kernels of :class:`~plugrad.backends.xp_kernels.XpKernels` (``lstm`` and
``lstm_backward``), written once on ``self.xp`` for NumPy and CuPy.

A recurrence cannot be vectorised over time, so what is left per step is kept to the
matmul and a few in-place passes into preallocated buffers. The LSTM works on each step
gate-major, in a ``(4, N, H)`` scratch whose gate blocks are contiguous ``(N, H)`` arrays,
because a pass over a column block of an ``(N, 4H)`` array costs several times one over a
contiguous array: forward adds the step's input projection to its ``h w_hh^T`` (one
``(N, 4H)`` matmul: four per-gate matmuls would be four BLAS calls, each paying BLAS's
thread start-up) straight into that scratch and copies the activated gates once into the
saved ``(T, N, 4H)`` ``gates``; backward copies them back. The cell state goes into
``cells``, the hidden state into ``out`` (laid out batch-major when ``xw`` is, as a
batch-first caller's projection is, so the caller's next ``linear`` needs no copy).
Backward writes each step's gate gradient into the result; vectorising the gate
derivatives over all steps, or over chunks of steps, was no faster (those passes over
``(T, N, *)`` run at memory speed); the weight gradient is one matmul over all steps.
float16/bfloat16 take the composite (NumPy's matmul has no ``out=`` of those dtypes).
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


def _blocks(a, hd):
    """The ``(T, N, 4H)`` array ``a`` as each step's four gate blocks, ``(T, 4, N, H)`` (a
    view where ``a``'s last axis is contiguous, as it is in the buffers made here)."""
    return a.reshape(a.shape[0], a.shape[1], 4, hd).transpose(0, 2, 1, 3)


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
        dt = xw.dtype
        gates = xp.empty((steps, n, width), dtype=dt)
        cells = xp.empty((steps, n, hd), dtype=dt)
        out = _like(xp, xw, hd)
        wt = w_hh.T
        xw4, gates4 = _blocks(xw, hd), _blocks(gates, hd)
        zr = xp.empty((1, n, width), dtype=dt)  # a step's h w_hh^T (one matmul) ...
        zr4 = _blocks(zr, hd)[0]  # ... as its gate blocks
        zr = zr[0]
        z = xp.empty((4, n, hd), dtype=dt)  # the step's gates, gate-major
        i, f, g, o = z[0], z[1], z[2], z[3]
        tmp = xp.empty((n, hd), dtype=dt)
        h, c = h0, c0
        with self._quiet():  # exp(-z) overflows to inf for very negative z: sigmoid 0
            for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
                xp.matmul(h, wt, out=zr)
                xp.add(zr4, xw4[t], out=z)
                for s in (z[:2], o):  # sigmoid of i, f and o
                    xp.negative(s, out=s)
                    xp.exp(s, out=s)
                    s += 1.0
                    xp.reciprocal(s, out=s)
                xp.tanh(g, out=g)
                c_new = cells[t]
                xp.multiply(f, c, out=c_new)
                xp.multiply(i, g, out=tmp)
                c_new += tmp
                xp.tanh(c_new, out=tmp)
                h = out[t]
                xp.multiply(o, tmp, out=h)
                gates4[t] = z
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
        dt = cells.dtype
        dz = _like(xp, out, width)  # the layout of xw, where g_xw goes
        dh = xp.zeros((n, hd), dtype=dt) if g_h is None else g_h.copy()
        dc = xp.zeros((n, hd), dtype=dt) if g_c is None else g_c.copy()
        tc, tmp = xp.empty((n, hd), dtype=dt), xp.empty((n, hd), dtype=dt)
        s = xp.empty((4, n, hd), dtype=dt)  # a step's gates, gate-major
        q = xp.empty((4, n, hd), dtype=dt)
        p = xp.empty((4, n, hd), dtype=dt)
        i, f, g, o = s[0], s[1], s[2], s[3]
        qg = q[2]
        gates4, dz4 = _blocks(gates, hd), _blocks(dz, hd)
        first = steps - 1 if reverse else 0  # the step whose state before is (h0, c0)
        with self._quiet():
            for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
                s[...] = gates4[t]
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
                xp.multiply(g, g, out=qg)
                xp.subtract(1.0, qg, out=qg)
                # dz = [dc g, dc c_prev, dc i, dh tanh(c)] * q
                xp.multiply(dc, g, out=p[0])
                xp.multiply(dc, c0 if t == first else cells[t + 1 if reverse else t - 1],
                            out=p[1])
                xp.multiply(dc, i, out=p[2])
                xp.multiply(dh, tc, out=p[3])
                z = dz[t]
                xp.multiply(p, q, out=dz4[t])
                dc *= f
                xp.matmul(z, w_hh, out=dh)
            # the weight gradient: one matmul over the steps in dz's memory order
            ax = 1 if _batch_major(dz) else 0  # the step axis of the buffers
            src, rows_dz = (out.transpose(1, 0, 2), dz.transpose(1, 0, 2)) if ax else (out, dz)
            h_prev = xp.empty(src.shape, dtype=dt)  # the state before each step
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
