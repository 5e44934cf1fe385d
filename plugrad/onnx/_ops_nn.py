"""Kernel -> ONNX node(s) for the optional nn kernels (``plugrad/backends/contract_nn.py``):
activations, softmax, layer norm, attention, 2-D convolution, pooling and sliding windows.
Batch and group norm reach the export as the elementwise kernels and reductions they are
made of; their backward kernels never appear in a forward under no_grad."""
from __future__ import annotations

import math

import numpy as np

from plugrad.onnx._ops import converts, operands
from plugrad.onnx._trace import Dyn


@converts("softmax", "log_softmax")
def _softmax(g, args, ins):
    x, axis = args
    op = "Softmax" if ins.name == "softmax" else "LogSoftmax"
    return g.node(op, [g.value(x)], axis=int(axis))


@converts("silu")
def _silu(g, args, ins):
    x = g.value(args[0])
    return g.node("Mul", [x, g.node("Sigmoid", [x])])


@converts("gelu")
def _gelu(g, args, ins):
    x, approximate = args
    dt, (name,) = operands(g, x)
    half = g.node("Mul", [name, g.value(0.5, dt)])
    if approximate == "tanh":
        cube = g.node("Mul", [g.node("Mul", [name, name]), name])
        inner = g.node("Add", [name, g.node("Mul", [cube, g.value(0.044715, dt)])])
        t = g.node("Tanh", [g.node("Mul", [inner, g.value(math.sqrt(2 / math.pi), dt)])])
    else:
        t = g.node("Erf", [g.node("Mul", [name, g.value(1 / math.sqrt(2), dt)])])
    return g.node("Mul", [half, g.node("Add", [t, g.value(1.0, dt)])])


@converts("layer_norm")
def _layer_norm(g, args, ins):
    x, weight, bias, n_axes, eps = args
    dt = g.dtype(x)
    dims = g.dims(x)
    normalized = dims[len(dims) - n_axes:]
    if any(isinstance(d, Dyn) for d in normalized):
        g.unsupported("layer norm over a dynamic axis")
    xn = g.value(x)
    w = g.value(weight) if weight is not None else g.const(np.ones(normalized), dtype=dt)
    b = g.value(bias) if bias is not None else None
    axis = len(dims) - n_axes
    if g.opset >= 17:
        y, mean, rstd = g.node("LayerNormalization", [xn, w, b], n_out=3, axis=axis,
                               epsilon=float(eps))
        return y, mean, rstd
    axes = list(range(axis, len(dims)))
    mean = g.reduce("ReduceMean", xn, axes, True)
    centred = g.node("Sub", [xn, mean])
    var = g.reduce("ReduceMean", g.node("Mul", [centred, centred]), axes, True)
    rstd = g.node("Reciprocal", [g.node("Sqrt", [g.node("Add", [var, g.value(eps, dt)])])])
    y = g.node("Mul", [g.node("Mul", [centred, rstd]), w])
    if b is not None:
        y = g.node("Add", [y, b])
    return y, mean, rstd


@converts("scaled_dot_product_attention")
def _attention(g, args, ins):
    q, k, v, mask, scale = args
    dt, (qn, kn, vn) = operands(g, q, k, v)
    rank = len(g.dims(k))
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    scores = g.node("MatMul", [g.node("Mul", [qn, g.value(scale, dt)]),
                               g.node("Transpose", [kn], perm=perm)])
    if mask is not None:
        scores = g.node("Add", [scores, g.value(mask, dt)])
    attn = g.node("Softmax", [scores], axis=-1)
    if mask is not None:  # a row whose keys are all masked: weights 0 (softmax gave NaN)
        attn = g.node("Where", [g.node("IsNaN", [attn]), g.value(0.0, dt), attn])
    return g.node("MatMul", [attn, vn]), attn


def _pads(padding):
    (top, bottom), (left, right) = padding
    return [int(top), int(left), int(bottom), int(right)]


@converts("conv2d")
def _conv2d(g, args, ins):
    x, w, stride, padding, dilation, groups = args
    kernel = list(g.static_shape(w)[2:])
    return g.node("Conv", [g.value(x), g.value(w)], kernel_shape=kernel,
                  strides=list(stride), pads=_pads(padding), dilations=list(dilation),
                  group=int(groups))


@converts("conv2d_grad_input")
def _conv_transpose2d(g, args, ins):
    """The gradient of a convolution w.r.t. its input: a transposed convolution (what
    ``conv_transpose2d`` is made of), its output padding chosen to give ``input_hw``."""
    gy, w, input_hw, stride, padding, dilation, groups = args
    kernel = list(g.static_shape(w)[2:])
    oh, ow = g.static_shape(gy)[2:]
    pads = _pads(padding)
    extra = []
    for i, (n_out, full) in enumerate(zip((oh, ow), input_hw)):
        made = stride[i] * (n_out - 1) + (kernel[i] - 1) * dilation[i] + 1 - pads[i] - pads[i + 2]
        extra.append(int(full) - made)
    if any(e < 0 for e in extra):
        g.unsupported("a transposed convolution cropped below its natural size")
    return g.node("ConvTranspose", [g.value(gy), g.value(w)], kernel_shape=kernel,
                  strides=list(stride), pads=pads, dilations=list(dilation),
                  group=int(groups), output_padding=extra if any(extra) else None)


@converts("max_pool2d")
def _max_pool2d(g, args, ins):
    x, kernel, stride, padding, dilation = args
    out, indices = g.node("MaxPool", [g.value(x)], n_out=2, kernel_shape=list(kernel),
                          strides=list(stride), pads=_pads(padding),
                          dilations=list(dilation))
    if ins.outs[1] not in g.live:
        return out, None
    h, w = g.static_shape(x)[2:]
    # ONNX counts indices over the whole (N, C, H, W) array; the contract within a plane
    return out, g.node("Mod", [indices, g.value(int(h * w), "int64")], fmod=0)


@converts("unfold2d")
def _unfold2d(g, args, ins):
    """Sliding windows as a grouped convolution with one-hot filters: each of the
    ``kh * kw`` output channels of a plane copies one window position."""
    x, kernel, stride, padding, dilation, value = args
    dt = g.dtype(x)
    if not dt.startswith(("float", "bfloat")):
        g.unsupported("sliding windows of a non-floating tensor")
    dims = g.dims(x)
    n, c = dims[0], dims[1]
    h, w = g.static_shape(x)[2:]
    kh, kw = kernel
    pads = _pads(padding)
    xn = g.node("Reshape", [g.value(x), g.ints([-1, 1, h, w])])
    if value != 0:
        if not math.isfinite(value):
            g.unsupported("sliding windows padded with an infinite value")
        xn = g.node("Pad", [xn, g.ints([0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]]),
                            g.value(value, dt)], mode="constant")
        pads = [0, 0, 0, 0]
    eye = np.eye(kh * kw).reshape(kh * kw, 1, kh, kw)
    cols = g.node("Conv", [xn, g.const(eye, "onehot", dtype=dt)], kernel_shape=[kh, kw],
                  strides=list(stride), pads=pads, dilations=list(dilation))
    out_dims = g.trace.dims[ins.outs]
    return g.reshape(cols, (), (n, c) + tuple(out_dims[2:]))


@converts("lstm")
def _lstm(g, args, ins):
    """The recurrence unrolled over its (static) steps, as the kernel's composite: a MatMul
    and the gates' elementwise update per step; the gates only where something reads them."""
    xw, h0, c0, w_hh, reverse = args
    _, (xn, h, c, w) = operands(g, xw, h0, c0, w_hh)
    steps, _, width = g.dims(xw)
    if isinstance(steps, Dyn) or isinstance(width, Dyn):
        g.unsupported("an LSTM over a dynamic number of steps or features")
    hd = width // 4
    wt = g.node("Transpose", [w], perm=[1, 0])
    axis0, axis1 = g.ints([0]), g.ints([1])

    def cut(a, lo, hi, axis):
        return g.node("Slice", [a, g.ints([lo]), g.ints([hi]), axis])

    want_gates = ins.outs[2] in g.live
    outs, cells, gates = [None] * steps, [None] * steps, [None] * steps
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        z = g.node("Add", [g.node("Squeeze", [cut(xn, t, t + 1, axis0), axis0]),
                           g.node("MatMul", [h, wt])])
        s = g.node("Sigmoid", [z])
        i, f, o = cut(s, 0, hd, axis1), cut(s, hd, 2 * hd, axis1), cut(s, 3 * hd, width, axis1)
        gg = g.node("Tanh", [cut(z, 2 * hd, 3 * hd, axis1)])
        c = g.node("Add", [g.node("Mul", [f, c]), g.node("Mul", [i, gg])])
        h = g.node("Mul", [o, g.node("Tanh", [c])])
        outs[t], cells[t] = g.node("Unsqueeze", [h, axis0]), g.node("Unsqueeze", [c, axis0])
        if want_gates:
            gates[t] = g.node("Unsqueeze", [g.node("Concat", [i, f, gg, o], axis=1), axis0])

    def join(parts):
        return parts[0] if steps == 1 else g.node("Concat", parts, axis=0)
    return join(outs), join(cells), (join(gates) if want_gates else None)


@converts("gru")
def _gru(g, args, ins):
    """As ``lstm``'s: the GRU steps unrolled, the gates and ``hw_n`` only where read."""
    xw, h0, w_hh, b_hh, reverse = args
    _, (xn, h, w) = operands(g, xw, h0, w_hh)
    steps, _, width = g.dims(xw)
    if isinstance(steps, Dyn) or isinstance(width, Dyn):
        g.unsupported("a GRU over a dynamic number of steps or features")
    hd = width // 3
    wt = g.node("Transpose", [w], perm=[1, 0])
    bias = None if b_hh is None else g.value(b_hh)
    axis0, axis1 = g.ints([0]), g.ints([1])

    def cut(a, lo, hi, axis):
        return g.node("Slice", [a, g.ints([lo]), g.ints([hi]), axis])

    want_gates, want_hn = ins.outs[1] in g.live, ins.outs[2] in g.live
    outs, gates, hns = [None] * steps, [None] * steps, [None] * steps
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        x = g.node("Squeeze", [cut(xn, t, t + 1, axis0), axis0])
        hw = g.node("MatMul", [h, wt])
        if bias is not None:
            hw = g.node("Add", [hw, bias])
        rz = g.node("Sigmoid", [g.node("Add", [cut(x, 0, 2 * hd, axis1),
                                                cut(hw, 0, 2 * hd, axis1)])])
        r, z, hn = cut(rz, 0, hd, axis1), cut(rz, hd, 2 * hd, axis1), cut(hw, 2 * hd, width, axis1)
        n = g.node("Tanh", [g.node("Add", [cut(x, 2 * hd, width, axis1), g.node("Mul", [r, hn])])])
        h = g.node("Add", [n, g.node("Mul", [z, g.node("Sub", [h, n])])])
        outs[t] = g.node("Unsqueeze", [h, axis0])
        if want_gates:
            gates[t] = g.node("Unsqueeze", [g.node("Concat", [r, z, n], axis=1), axis0])
        if want_hn:
            hns[t] = g.node("Unsqueeze", [hn, axis0])

    def join(parts):
        return parts[0] if steps == 1 else g.node("Concat", parts, axis=0)
    return join(outs), (join(gates) if want_gates else None), (join(hns) if want_hn else None)
