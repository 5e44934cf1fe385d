"""The composite fallbacks of the nn kernels (part of :mod:`plugrad.backends.composites`).

Same rules as there: only other kernels, called through ``self`` (and the two helpers at the
end, ``_mT`` and ``_sum_to``, module functions of the namespace written so). Geometry arguments of the
2-D window kernels: ``kernel``, ``stride``, ``dilation`` are ``(h, w)`` pairs of ints;
``padding`` is ``((top, bottom), (left, right))``; inputs are ``(N, C, H, W)``.
"""
from __future__ import annotations

import math

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def is_scalar(v) -> bool:
    return isinstance(v, (bool, int, float))


def is_floating(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


def _window_rows(i, d, s, out_n):
    """The slice of padded rows (or columns) that kernel tap ``i`` reads for ``out_n`` outputs."""
    return slice(i * d, i * d + s * (out_n - 1) + 1, s)


class NNComposites:
    """Composite bodies of the nn kernels (mixed into the backend base class)."""

    def unfold2d(self, x, kernel, stride, padding, dilation, value=0):
        """One strided ``slice`` of the padded input per kernel tap, concatenated."""
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        xp = self.pad(x, ((0, 0), (0, 0)) + tuple(padding), value)
        n, c, hp, wp = xp.shape
        oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
        taps = []
        for i in range(kh):
            for j in range(kw):
                key = (slice(0, n, 1), slice(0, c, 1), _window_rows(i, dh, sh, oh),
                       _window_rows(j, dw, sw, ow))
                taps.append(self.reshape(self.slice(xp, key), (n, c, 1, oh, ow)))
        cols = taps[0] if len(taps) == 1 else self.concat(taps, 2)
        return self.reshape(cols, (n, c, kh, kw, oh, ow))

    def fold2d(self, cols, input_hw, kernel, stride, padding, dilation):
        """Each tap's ``(N, C, OH, OW)`` values spread ``stride`` apart (zero ``pad`` between
        them), shifted to the tap's offset by ``pad``, and summed; then the padding is cut
        off. Functional, with no ``assign``: it runs on differentiable ops too."""
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        (pt, pb), (pl, pr) = padding
        n, c, _, _, oh, ow = cols.shape
        hp, wp = input_hw[0] + pt + pb, input_hw[1] + pl + pr
        out = None
        for i in range(kh):
            for j in range(kw):
                tap = self.slice(cols, (slice(0, n, 1), slice(0, c, 1), slice(i, i + 1, 1),
                                        slice(j, j + 1, 1), slice(0, oh, 1), slice(0, ow, 1)))
                tap = self.reshape(tap, (n, c, oh, 1, ow, 1))
                if sh > 1 or sw > 1:
                    tap = self.pad(tap, ((0, 0),) * 3 + ((0, sh - 1), (0, 0), (0, sw - 1)), 0)
                tap = self.reshape(tap, (n, c, oh * sh, ow * sw))
                rows, colz = i * dh, j * dw  # where the tap's first value lands
                tap = self.pad(tap, ((0, 0), (0, 0), (rows, max(0, hp - rows - oh * sh)),
                                     (colz, max(0, wp - colz - ow * sw))), 0)
                tap = self.slice(tap, (slice(0, n, 1), slice(0, c, 1), slice(0, hp, 1),
                                       slice(0, wp, 1)))
                out = tap if out is None else self.add(out, tap)
        return self.slice(out, (slice(0, n, 1), slice(0, c, 1), slice(pt, pt + input_hw[0], 1),
                                slice(pl, pl + input_hw[1], 1)))

    def conv2d(self, x, w, stride, padding, dilation, groups):
        """im2col (:meth:`unfold2d`) and one batched ``matmul`` per group."""
        o, cg, kh, kw = w.shape
        cols = self.unfold2d(x, (kh, kw), stride, padding, dilation)
        n, _, _, _, oh, ow = cols.shape
        cols = self.reshape(cols, (n, groups, cg * kh * kw, oh * ow))
        wm = self.reshape(w, (1, groups, o // groups, cg * kh * kw))
        return self.reshape(self.matmul(wm, cols), (n, o, oh, ow))

    def conv2d_grad_input(self, g, w, input_hw, stride, padding, dilation, groups):
        """``w^T g`` per group, folded back (:meth:`fold2d`)."""
        o, cg, kh, kw = w.shape
        n, _, oh, ow = g.shape
        gm = self.reshape(g, (n, groups, o // groups, oh * ow))
        wt = self.permute(self.reshape(w, (1, groups, o // groups, cg * kh * kw)), (0, 1, 3, 2))
        cols = self.reshape(self.matmul(wt, gm), (n, groups * cg, kh, kw, oh, ow))
        return self.fold2d(cols, input_hw, (kh, kw), stride, padding, dilation)

    def conv2d_grad_weight(self, g, x, weight_shape, stride, padding, dilation, groups):
        """``g cols^T`` per group, summed over the batch."""
        o, cg, kh, kw = weight_shape
        cols = self.unfold2d(x, (kh, kw), stride, padding, dilation)
        n, _, _, _, oh, ow = cols.shape
        cols = self.permute(self.reshape(cols, (n, groups, cg * kh * kw, oh * ow)), (0, 1, 3, 2))
        gm = self.reshape(g, (n, groups, o // groups, oh * ow))
        return self.reshape(self.sum(self.matmul(gm, cols), (0,), False), weight_shape)

    def max_pool2d(self, x, kernel, stride, padding, dilation):
        """``max``/``argmax`` over the taps of :meth:`unfold2d` (padded with ``-inf``); the tap
        index becomes a flat input index (the offsets are built with ``arange``)."""
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        (pt, _), (pl, _) = padding
        _, _, h, w = x.shape
        cols = self.unfold2d(x, kernel, stride, padding, dilation, -math.inf)
        n, c, _, _, oh, ow = cols.shape
        cols = self.reshape(cols, (n, c, kh * kw, oh, ow))
        tap = self.argmax(cols, 2, False)
        ki = self.floordiv(tap, kw)
        kj = self.sub(tap, self.mul(ki, kw))
        rows = self.reshape(self.arange(0, oh * sh, sh, "int64", None), (oh, 1))
        colsi = self.reshape(self.arange(0, ow * sw, sw, "int64", None), (1, ow))
        r = self.add(self.sub(rows, pt), self.mul(ki, dh))
        q = self.add(self.sub(colsi, pl), self.mul(kj, dw))
        return self.max(cols, (2,), False), self.add(self.mul(r, w), q)

    def layer_norm(self, x, weight, bias, n_axes, eps):
        """Two-pass statistics (mean, then the mean of squared deviations)."""
        axes = tuple(range(len(x.shape) - n_axes, len(x.shape)))
        count = 1
        for a in axes:
            count *= x.shape[a]
        mean = self.div(self.sum(x, axes, True), count)
        d = self.sub(x, mean)
        var = self.div(self.sum(self.mul(d, d), axes, True), count)
        rstd = self.div(1.0, self.sqrt(self.add(var, eps)))
        y = self.mul(d, rstd)
        if weight is not None:
            y = self.mul(y, weight)
        if bias is not None:
            y = self.add(y, bias)
        return y, mean, rstd

    def gelu(self, x, approximate):
        """``x/2 (1 + erf(x/√2))``, or ``x/2 (1 + tanh(√(2/π) (x + 0.044715 x³)))``."""
        if approximate == "tanh":
            inner = self.mul(self.add(x, self.mul(self.mul(self.mul(x, x), x), 0.044715)),
                             math.sqrt(2.0 / math.pi))
            return self.mul(self.mul(x, 0.5), self.add(self.tanh(inner), 1.0))
        return self.mul(self.mul(x, 0.5), self.add(self.erf(self.mul(x, math.sqrt(0.5))), 1.0))

    def silu(self, x):
        return self.mul(x, self.sigmoid(x))

    # ------------------------------------------------------------------ backward kernels
    def silu_backward(self, g, x):
        s = self.sigmoid(x)
        return self.mul(g, self.mul(s, self.add(self.mul(x, self.sub(1.0, s)), 1.0)))

    def gelu_backward(self, g, x, approximate):
        """``g * (Phi(x) + x phi(x))``, or the derivative of the tanh form,
        ``g * ((1 + t)/2 + x/2 (1 - t²) √(2/π) (1 + 3·0.044715 x²))`` with ``t`` the tanh."""
        if approximate == "tanh":
            x2 = self.mul(x, x)
            inner = self.mul(self.add(x, self.mul(self.mul(x2, x), 0.044715)), _SQRT_2_OVER_PI)
            t = self.tanh(inner)
            left = self.mul(self.add(t, 1.0), 0.5)
            d_inner = self.mul(self.add(self.mul(x2, 3 * 0.044715), 1.0), _SQRT_2_OVER_PI)
            right = self.mul(self.mul(self.mul(x, 0.5), self.sub(1.0, self.mul(t, t))), d_inner)
            return self.mul(g, self.add(left, right))
        cdf = self.mul(self.add(self.erf(self.mul(x, _SQRT_HALF)), 1.0), 0.5)
        pdf = self.mul(self.exp(self.mul(self.mul(x, x), -0.5)), _INV_SQRT_2PI)
        return self.mul(g, self.add(cdf, self.mul(x, pdf)))

    def softmax_backward(self, g, y, axis):
        """As specified: ``y * (g - sum(g * y))``."""
        return self.mul(y, self.sub(g, self.sum(self.mul(g, y), (axis,), True)))

    def log_softmax_backward(self, g, y, axis):
        """As specified: ``g - exp(y) * sum(g)``."""
        return self.sub(g, self.mul(self.exp(y), self.sum(g, (axis,), True)))

    def layer_norm_backward(self, g, x, weight, mean, rstd, n_axes, output_mask):
        """With ``xhat = (x - mean) * rstd`` and ``gh = g * weight``:
        ``gx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat))`` over the normalised axes,
        ``gw = sum(g * xhat)`` and ``gb = sum(g)`` over the leading ones."""
        nd = len(x.shape)
        axes, lead = tuple(range(nd - n_axes, nd)), tuple(range(nd - n_axes))
        count = 1
        for a in axes:
            count *= x.shape[a]
        xhat = self.mul(self.sub(x, mean), rstd)
        gx = gw = gb = None
        if output_mask[0]:
            gh = g if weight is None else self.mul(g, weight)
            a = self.div(self.sum(gh, axes, True), count)
            b = self.div(self.sum(self.mul(gh, xhat), axes, True), count)
            gx = self.mul(self.sub(self.sub(gh, a), self.mul(xhat, b)), rstd)
        if output_mask[1] and weight is not None:
            gw = self.sum(self.mul(g, xhat), lead, False)
        if output_mask[2]:
            gb = self.sum(g, lead, False)
        return gx, gw, gb

    def max_pool2d_backward(self, g, indices, input_shape):
        """One ``scatter_add`` into zeros of ``(N, C, H * W)``."""
        n, c, h, w = input_shape
        flat = (n, c, g.shape[2] * g.shape[3])
        out = self.scatter_add(self.full((n, c, h * w), 0, self.dtype_of(g), None), 2,
                               self.reshape(indices, flat), self.reshape(g, flat))
        return self.reshape(out, tuple(input_shape))

    def cross_entropy_backward(self, g, x, target, valid, scale):
        """As specified, the one-hot made by comparing ``target`` with an ``arange`` of the
        classes."""
        dtype = self.dtype_of(x)
        nd, c = len(x.shape), x.shape[1]
        classes = self.reshape(self.arange(0, c, 1, "int64", None), (1, c) + (1,) * (nd - 2))
        with_class = tuple(target.shape[:1]) + (1,) + tuple(target.shape[1:])
        one_hot = self.astype(self.eq(self.reshape(target, with_class), classes), dtype)
        grad = self.mul(self.sub(self.softmax(x, 1), one_hot), self.mul(g, scale))
        if valid is not None:  # an ignored row is exactly +0 (PyTorch), not (p - 1) * 0
            grad = self.where(self.reshape(valid, with_class), grad, 0.0)
        return grad

    # ------------------------------------------------------------------ attention
    def scaled_dot_product_attention(self, q, k, v, mask, scale):
        """``(q * scale) k^T`` plus the mask, a softmax whose all-masked rows give 0 (their
        maximum is taken as 0 and their sum as 1), then ``attn v``."""
        s = self.matmul(self.mul(q, scale), _mT(self, k))
        if mask is not None:
            s = self.add(s, mask)
        if not s.shape[-1]:  # no keys: no weights, and an output of zeros
            return self.matmul(s, v), s
        last = len(s.shape) - 1
        m = self.max(s, (last,), True)
        e = self.exp(self.sub(s, self.where(self.eq(m, -math.inf), 0.0, m)))
        den = self.sum(e, (last,), True)
        attn = self.div(e, self.where(self.eq(den, 0.0), 1.0, den))
        return self.matmul(attn, v), attn

    def scaled_dot_product_attention_backward(self, g, q, k, v, attn, scale):
        """``gv = attn^T g``; ``gs = softmax_backward(g v^T, attn)``; ``gq = gs k scale``;
        ``gk = gs^T q scale``; each summed to its input's shape."""
        gv = self.matmul(_mT(self, attn), g)
        gs = self.softmax_backward(self.matmul(g, _mT(self, v)), attn, len(attn.shape) - 1)
        gq = self.mul(self.matmul(gs, k), scale)
        gk = self.mul(self.matmul(_mT(self, gs), q), scale)
        return _sum_to(self, gq, q.shape), _sum_to(self, gk, k.shape), _sum_to(self, gv, v.shape)

    # ------------------------------------------------------------------ recurrence
    def lstm(self, xw, h0, c0, w_hh, reverse):
        """The steps one by one: a ``matmul`` and the gates' elementwise update each."""
        steps, n, width = xw.shape
        hd = width // 4
        wt = _mT(self, w_hh)
        h, c = h0, c0
        outs, cells, gates = [None] * steps, [None] * steps, [None] * steps
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            z = self.add(_step(self, xw, t), self.matmul(h, wt))
            s = self.sigmoid(z)
            i, f, o = _cols(self, s, 0, hd), _cols(self, s, hd, hd), _cols(self, s, 3 * hd, hd)
            g = self.tanh(_cols(self, z, 2 * hd, hd))
            c = self.add(self.mul(f, c), self.mul(i, g))
            h = self.mul(o, self.tanh(c))
            outs[t], cells[t] = self.reshape(h, (1, n, hd)), self.reshape(c, (1, n, hd))
            gates[t] = self.reshape(self.concat([i, f, g, o], 1), (1, n, width))
        return self.concat(outs, 0), self.concat(cells, 0), self.concat(gates, 0)

    def lstm_backward(self, g_out, g_h, g_c, h0, c0, w_hh, out, cells, gates, reverse):
        """Back through time, last step first: each step's gate gradients from the state's,
        then ``dh = dz w_hh``; ``g_w_hh`` one ``matmul`` over every step's ``dz`` and ``h``."""
        steps, n, hd = cells.shape
        order = list(range(steps - 1, -1, -1)) if reverse else list(range(steps))
        dh = self.zeros_like(h0) if g_h is None else g_h
        dc = self.zeros_like(c0) if g_c is None else g_c
        dzs, hprev = [None] * steps, [None] * steps
        for k in range(steps - 1, -1, -1):
            t = order[k]
            if g_out is not None:
                dh = self.add(dh, _step(self, g_out, t))
            gt = _step(self, gates, t)
            i, f = _cols(self, gt, 0, hd), _cols(self, gt, hd, hd)
            g, o = _cols(self, gt, 2 * hd, hd), _cols(self, gt, 3 * hd, hd)
            tc = self.tanh(_step(self, cells, t))
            c_prev = c0 if k == 0 else _step(self, cells, order[k - 1])
            dc = self.add(dc, self.mul(self.mul(dh, o), self.sub(1.0, self.mul(tc, tc))))
            dz = self.concat([self.mul(self.mul(dc, g), self.mul(i, self.sub(1.0, i))),
                              self.mul(self.mul(dc, c_prev), self.mul(f, self.sub(1.0, f))),
                              self.mul(self.mul(dc, i), self.sub(1.0, self.mul(g, g))),
                              self.mul(self.mul(dh, tc), self.mul(o, self.sub(1.0, o)))], 1)
            dzs[t] = self.reshape(dz, (1, n, 4 * hd))
            hprev[t] = self.reshape(h0 if k == 0 else _step(self, out, order[k - 1]),
                                    (1, n, hd))
            dc = self.mul(dc, f)
            dh = self.matmul(dz, w_hh)
        g_xw = self.concat(dzs, 0)
        g_w = self.matmul(_mT(self, self.reshape(g_xw, (steps * n, 4 * hd))),
                          self.reshape(self.concat(hprev, 0), (steps * n, hd)))
        return g_xw, dh, dc, g_w

    def gru(self, xw, h0, w_hh, b_hh, reverse):
        """The steps one by one, as :meth:`lstm`'s."""
        steps, n, width = xw.shape
        hd = width // 3
        wt = _mT(self, w_hh)
        h = h0
        outs, gates, hns = [None] * steps, [None] * steps, [None] * steps
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            x = _step(self, xw, t)
            hw = self.matmul(h, wt)
            if b_hh is not None:
                hw = self.add(hw, b_hh)
            rz = self.sigmoid(self.add(_cols(self, x, 0, 2 * hd), _cols(self, hw, 0, 2 * hd)))
            r, z = _cols(self, rz, 0, hd), _cols(self, rz, hd, hd)
            hn = _cols(self, hw, 2 * hd, hd)
            nn = self.tanh(self.add(_cols(self, x, 2 * hd, hd), self.mul(r, hn)))
            h = self.add(nn, self.mul(z, self.sub(h, nn)))
            outs[t], hns[t] = self.reshape(h, (1, n, hd)), self.reshape(hn, (1, n, hd))
            gates[t] = self.reshape(self.concat([r, z, nn], 1), (1, n, width))
        return self.concat(outs, 0), self.concat(gates, 0), self.concat(hns, 0)

    def gru_backward(self, g_out, g_h, h0, w_hh, b_hh, out, gates, hn, reverse):
        """Back through time as :meth:`lstm_backward`: each step's gradients of ``xw[t]``
        and of ``hw``, then ``dh = dh z + d_hw w_hh``; the weight and bias gradients summed
        over every step with one ``matmul`` and one ``sum``."""
        steps, n, hd = out.shape
        order = list(range(steps - 1, -1, -1)) if reverse else list(range(steps))
        dh = self.zeros_like(h0) if g_h is None else g_h
        dxs, dhws, hprev = [None] * steps, [None] * steps, [None] * steps
        for k in range(steps - 1, -1, -1):
            t = order[k]
            if g_out is not None:
                dh = self.add(dh, _step(self, g_out, t))
            gt = _step(self, gates, t)
            r, z, nn = _cols(self, gt, 0, hd), _cols(self, gt, hd, hd), _cols(self, gt, 2 * hd, hd)
            h_prev = h0 if k == 0 else _step(self, out, order[k - 1])
            dn = self.mul(self.mul(dh, self.sub(1.0, z)), self.sub(1.0, self.mul(nn, nn)))
            dr = self.mul(self.mul(dn, _step(self, hn, t)), self.mul(r, self.sub(1.0, r)))
            dz = self.mul(self.mul(dh, self.sub(h_prev, nn)), self.mul(z, self.sub(1.0, z)))
            dhw = self.concat([dr, dz, self.mul(dn, r)], 1)
            dxs[t] = self.reshape(self.concat([dr, dz, dn], 1), (1, n, 3 * hd))
            dhws[t] = self.reshape(dhw, (1, n, 3 * hd))
            hprev[t] = self.reshape(h_prev, (1, n, hd))
            dh = self.add(self.mul(dh, z), self.matmul(dhw, w_hh))
        rows = self.reshape(self.concat(dhws, 0), (steps * n, 3 * hd))
        g_w = self.matmul(_mT(self, rows), self.reshape(self.concat(hprev, 0), (steps * n, hd)))
        g_b = None if b_hh is None else self.sum(rows, (0,), False)
        return self.concat(dxs, 0), dh, g_w, g_b

    # ------------------------------------------------------------------ helpers
    # module functions of the namespace, not methods: the composites also run on the
    # differentiable Tensor ops (higher-order gradients of the fused kernels), which have
    # only the kernels' names
    def _mT(self, a):
        return _mT(self, a)

    def _sum_to(self, x, shape):
        return _sum_to(self, x, shape)


def _mT(F, a):
    """``a`` with its last two axes swapped."""
    nd = len(a.shape)
    return F.permute(a, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _sum_to(F, x, shape):
    """``x`` summed over the dims along which ``shape`` was broadcast to ``x.shape``."""
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    lead = len(x.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and x.shape[lead + i] != 1)
    return F.reshape(F.sum(x, axes, True), shape)


def _step(F, a, t):
    """Step ``t`` of a ``(T, N, W)`` array, as ``(N, W)``."""
    _, n, w = a.shape
    return F.reshape(F.slice(a, (slice(t, t + 1, 1), slice(0, n, 1), slice(0, w, 1))), (n, w))


def _cols(F, a, start, width):
    """Columns ``start:start + width`` of an ``(N, W)`` array."""
    return F.slice(a, (slice(0, a.shape[0], 1), slice(start, start + width, 1)))
