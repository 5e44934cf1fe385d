"""The backend contract, continued: the optional nn kernels (activations, attention, 2-D
windows, normalisation) and their fused backward kernels, which the core's autograd nodes
call. Conventions and composites as in :mod:`plugrad.backends.contract`; :class:`NNKernels`
is a base of :class:`~plugrad.backends.contract.Backend`, so these are its methods."""
from __future__ import annotations

from plugrad.backends.composites import Composites as _C


class NNKernels:
    """The spec of the optional nn kernels (each falls back to its composite)."""

    # ------------------------------------------------------------------ activations
    def softmax(self, x, axis: int):
        """``exp(x - max) / sum(exp(x - max))`` along ``axis``."""
        return _C.softmax(self, x, axis)

    def log_softmax(self, x, axis: int):
        """``x - logsumexp(x)`` along ``axis``."""
        return _C.log_softmax(self, x, axis)

    def gelu(self, x, approximate: str):
        """GELU: ``x * Phi(x)`` with the exact ``erf`` form (``"none"``), or its ``"tanh"``
        approximation."""
        return _C.gelu(self, x, approximate)

    def gelu_backward(self, g, x, approximate: str):
        """Gradient of :meth:`gelu` w.r.t. ``x``, given the output gradient ``g``."""
        return _C.gelu_backward(self, g, x, approximate)

    def silu(self, x):
        """SiLU (swish): ``x * sigmoid(x)``."""
        return _C.silu(self, x)

    def silu_backward(self, g, x):
        """Gradient of :meth:`silu` w.r.t. ``x``: ``g * s * (1 + x * (1 - s))``, ``s = sigmoid(x)``."""
        return _C.silu_backward(self, g, x)

    def softmax_backward(self, g, y, axis: int):
        """Gradient of :meth:`softmax` from its output ``y``: ``y * (g - sum(g * y, axis))``."""
        return _C.softmax_backward(self, g, y, axis)

    def log_softmax_backward(self, g, y, axis: int):
        """Gradient of :meth:`log_softmax` from its output ``y``: ``g - exp(y) * sum(g, axis)``."""
        return _C.log_softmax_backward(self, g, y, axis)

    def cross_entropy_backward(self, g, x, target, valid, scale: float):
        """Gradient w.r.t. the logits ``x`` ``(N, C, d1, ...)`` of a mean- or sum-reduced
        cross-entropy without class weights or smoothing:
        ``(softmax(x, 1) - one_hot(target)) * (g * scale)``, exactly +0 in rows where
        ``valid`` is False (whatever ``g * scale`` is, as PyTorch). ``target`` is
        int64 ``(N, d1, ...)``, in range, with ignored entries already replaced by 0;
        ``valid`` a bool array of ``target``'s shape, or None (every entry counts); ``g`` the
        0-d output gradient; ``scale`` a Python float (``1 / count`` for a mean, or 1)."""
        return _C.cross_entropy_backward(self, g, x, target, valid, scale)

    def scaled_dot_product_attention(self, q, k, v, mask, scale: float):
        """Attention ``softmax(q k^T * scale + mask) v`` of ``q`` ``(..., L, E)``, ``k``
        ``(..., S, E)``, ``v`` ``(..., S, Ev)``: ``(out, attn)``, ``attn`` being the
        ``(..., L, S)`` weights. ``mask`` is None or an additive array of ``q``'s dtype
        broadcastable to ``(..., L, S)``, ``-inf`` where masked. A query row whose keys are
        all masked gets weights 0 and output 0 (as PyTorch does). No dropout."""
        return _C.scaled_dot_product_attention(self, q, k, v, mask, scale)

    def scaled_dot_product_attention_backward(self, g, q, k, v, attn, scale: float):
        """Gradients ``(gq, gk, gv)`` of :meth:`scaled_dot_product_attention`'s ``out`` w.r.t.
        ``q``, ``k``, ``v``, given its ``attn`` weights; each has its input's shape (batch
        dims that broadcast are summed)."""
        return _C.scaled_dot_product_attention_backward(self, g, q, k, v, attn, scale)

    # ------------------------------------------------------------------ nn: windows
    # Geometry of the 2-D window kernels: ``kernel``, ``stride``, ``dilation`` are ``(h, w)``
    # pairs of ints; ``padding`` is ``((top, bottom), (left, right))``; inputs are
    # ``(N, C, H, W)`` and the core has checked that at least one window fits.

    def unfold2d(self, x, kernel, stride, padding, dilation, value=0):
        """Sliding windows (im2col) of ``x`` padded with ``value``: ``(N, C, kh, kw, OH, OW)``
        where ``out[n, c, i, j, p, q] = padded[n, c, p*sh + i*dh, q*sw + j*dw]``."""
        return _C.unfold2d(self, x, kernel, stride, padding, dilation, value)

    def fold2d(self, cols, input_hw, kernel, stride, padding, dilation):
        """The adjoint of :meth:`unfold2d` (col2im): each window value of ``cols``
        ``(N, C, kh, kw, OH, OW)`` is added back to its position in an ``(N, C, H, W)`` array."""
        return _C.fold2d(self, cols, input_hw, kernel, stride, padding, dilation)

    def conv2d(self, x, w, stride, padding, dilation, groups):
        """Cross-correlation of ``x`` ``(N, C, H, W)`` with ``w`` ``(O, C/groups, kh, kw)``
        (no bias): ``(N, O, OH, OW)``, a new array the caller owns (the bias is added into
        it with ``update_``)."""
        return _C.conv2d(self, x, w, stride, padding, dilation, groups)

    def conv2d_grad_input(self, g, w, input_hw, stride, padding, dilation, groups):
        """Gradient of :meth:`conv2d` w.r.t. its input, given the output gradient ``g``."""
        return _C.conv2d_grad_input(self, g, w, input_hw, stride, padding, dilation, groups)

    def conv2d_grad_weight(self, g, x, weight_shape, stride, padding, dilation, groups):
        """Gradient of :meth:`conv2d` w.r.t. its weight of ``weight_shape``."""
        return _C.conv2d_grad_weight(self, g, x, weight_shape, stride, padding, dilation,
                                     groups)

    def max_pool2d(self, x, kernel, stride, padding, dilation):
        """Window maxima of ``x`` padded with ``-inf``, and the int64 index of each maximum
        (the first one) into the flattened ``H * W`` input plane: ``(out, indices)``."""
        return _C.max_pool2d(self, x, kernel, stride, padding, dilation)

    def max_pool2d_backward(self, g, indices, input_shape: tuple):
        """Gradient of :meth:`max_pool2d` w.r.t. its input of ``input_shape``: each value of
        ``g`` ``(N, C, OH, OW)`` added (repeats accumulate) at its flat ``indices`` into the
        ``H * W`` plane of its ``(n, c)``."""
        return _C.max_pool2d_backward(self, g, indices, input_shape)

    # ------------------------------------------------------------------ nn: normalization
    def layer_norm(self, x, weight, bias, n_axes: int, eps: float):
        """Normalise ``x`` over its last ``n_axes`` dims, then scale and shift by ``weight`` and
        ``bias`` (either may be None): ``(y, mean, rstd)``, the statistics kept with dims."""
        return _C.layer_norm(self, x, weight, bias, n_axes, eps)

    def layer_norm_backward(self, g, x, weight, mean, rstd, n_axes: int, output_mask: tuple):
        """Gradients ``(gx, gw, gb)`` of :meth:`layer_norm`'s ``y``, given ``g``, the input
        ``x``, ``weight`` (or None) and the ``mean``/``rstd`` it returned. ``gw`` and ``gb``
        are summed over the leading axes; an entry is None where ``output_mask[i]`` is False
        (``gw`` also where ``weight`` is None)."""
        return _C.layer_norm_backward(self, g, x, weight, mean, rstd, n_axes, output_mask)

    # ------------------------------------------------------------------ nn: recurrence
    def lstm(self, xw, h0, c0, w_hh, reverse: bool):
        """One LSTM layer in one direction (PyTorch's gate order i, f, g, o). ``xw``
        ``(T, N, 4H)`` holds every step's input projection with both biases added, ``h0``
        and ``c0`` ``(N, H)`` the initial state, ``w_hh`` ``(4H, H)``. Steps run ``t = 0 ..
        T-1``, or ``T-1 .. 0`` when ``reverse``; each: ``z = xw[t] + h w_hh^T``, ``i, f, o``
        the ``sigmoid`` and ``g`` the ``tanh`` of their quarters of ``z``, ``c = f c + i g``,
        ``h = o tanh(c)``. Returns ``(out, cells, gates)``: every step's ``h`` and ``c``
        ``(T, N, H)`` and its activated gates ``[i, f, g, o]`` ``(T, N, 4H)``, all new arrays."""
        return _C.lstm(self, xw, h0, c0, w_hh, reverse)

    def lstm_backward(self, g_out, g_h, g_c, h0, c0, w_hh, out, cells, gates, reverse: bool):
        """Gradients ``(g_xw, g_h0, g_c0, g_w_hh)`` of :meth:`lstm` (back through time),
        given the gradients of ``out`` ``(T, N, H)`` and of the last step's ``h`` and ``c``
        ``(N, H)`` (step ``T-1``, or 0 when ``reverse``; each of the three may be None for
        zero), the inputs ``h0``, ``c0``, ``w_hh`` and the ``out``, ``cells``, ``gates`` that
        :meth:`lstm` returned. Each gradient has its input's shape."""
        return _C.lstm_backward(self, g_out, g_h, g_c, h0, c0, w_hh, out, cells, gates,
                                reverse)

    def gru(self, xw, h0, w_hh, b_hh, reverse: bool):
        """One GRU layer in one direction (PyTorch's gate order r, z, n). ``xw`` ``(T, N, 3H)``
        holds every step's input projection with ``b_ih`` added, ``h0`` ``(N, H)``, ``w_hh``
        ``(3H, H)``, ``b_hh`` ``(3H,)`` or None. Steps run as :meth:`lstm`'s; each:
        ``hw = h w_hh^T + b_hh``, ``r, z`` the ``sigmoid`` of ``xw[t] + hw`` on their thirds,
        ``n = tanh(xw_n + r hw_n)``, ``h = n + z (h - n)``. Returns ``(out, gates, hn)``:
        every step's ``h`` ``(T, N, H)``, its gates ``[r, z, n]`` ``(T, N, 3H)`` and its
        ``hw_n`` ``(T, N, H)``, all new arrays."""
        return _C.gru(self, xw, h0, w_hh, b_hh, reverse)

    def gru_backward(self, g_out, g_h, h0, w_hh, b_hh, out, gates, hn, reverse: bool):
        """Gradients ``(g_xw, g_h0, g_w_hh, g_b_hh)`` of :meth:`gru` given the gradients of
        ``out`` and of the last step's ``h`` (either may be None for zero) and what
        :meth:`gru` returned; ``g_b_hh`` is None where ``b_hh`` is."""
        return _C.gru_backward(self, g_out, g_h, h0, w_hh, b_hh, out, gates, hn, reverse)
