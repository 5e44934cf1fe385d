"""The pooling functions beyond the core's 2-D ones: ``max_pool1d``, ``avg_pool1d``,
``lp_pool1d/2d``, ``adaptive_max_pool1d/2d``, ``adaptive_avg_pool1d``.

The 1-D pools are the 2-D ones over a height of 1 (as PyTorch computes them); the
Lp pools are PyTorch's composition of an average pool; adaptive max pooling is a max over
gathered windows (a ``max_pool2d`` when the windows tile the input evenly).
"""
from __future__ import annotations

import plugrad
from plugrad.core.autograd.constant_grads import records as _records
from plugrad.core.autograd.node import present_as as _named
from plugrad.core.ops.pooling import adaptive_avg_pool2d as _adaptive_avg_pool2d
from plugrad.core.ops.pooling import avg_pool2d as _avg_pool2d
from plugrad.core.ops.pooling import max_pool2d as _max_pool2d
from plugrad.nn._dtypes import expect_dtype as _expect
from plugrad.nn._pool_windows import adaptive_table as _adaptive_table
from plugrad.nn._pool_windows import sliding_max as _sliding_max
from plugrad.nn._pool_windows import window_max as _window_max

__all__ = ["max_pool1d", "avg_pool1d", "lp_pool1d", "lp_pool2d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_avg_pool1d"]


def _one(name, v, what):
    """An int, or a 1-tuple of one (PyTorch's ``_single`` arguments)."""
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise ValueError(f"{name}: {what} must be an int or a tuple of one int, got {v}")
        v = v[0]
    return int(v)


def _rank(name, x, spatial):
    if not (name == "avg_pool1d" and x.dtype == plugrad.int64):  # PyTorch's avg_pool2d kernel
        _expect(name, x)
    if x.ndim not in (spatial + 1, spatial + 2):
        raise plugrad.ShapeError(f"{name}: Expected {spatial + 1}D (unbatched) or "
                                 f"{spatial + 2}D (batched) input, but got input of size: "
                                 f"{list(x.shape)}")


# ---------------------------------------------------------------------- 1-D windows
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode=False, return_indices=False):
    """Max over windows of ``(N, C, L)`` or ``(C, L)``; indices into ``L``."""
    name = "max_pool1d"
    if return_indices and not input.dtype.is_floating_point:
        # PyTorch's max_pool1d_with_indices: its kernel takes integers (plain max_pool1d not)
        return _sliding_max(name, input, 1, kernel_size, stride, padding, dilation, ceil_mode)
    _rank(name, input, 1)
    k = _one(name, kernel_size, "kernel_size")
    s = k if stride is None or stride == () or stride == [] else _one(name, stride, "stride")
    out, idx = _max_pool2d(input.unsqueeze(-2), (1, k), (1, s),
                           (0, _one(name, padding, "padding")),
                           (1, _one(name, dilation, "dilation")), ceil_mode, True)
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True):
    """Mean over windows of ``(N, C, L)`` or ``(C, L)``."""
    name = "avg_pool1d"
    _rank(name, input, 1)
    k = _one(name, kernel_size, "kernel_size")
    s = k if stride is None or stride == () or stride == [] else _one(name, stride, "stride")
    out = _avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _one(name, padding, "padding")),
                      ceil_mode, count_include_pad)
    return out.squeeze(-2)


def _lp_finish(out, norm_type, count):
    """PyTorch's ``(sign(out) relu(|out|) * count) ** (1 / p)`` of the averaged powers. The
    sign is a constant of the gradient (PyTorch's sign backward is zeros, whatever the
    incoming gradient; ``g * 0`` would turn a window's ``0 * inf`` into NaN for every tap)."""
    sign = plugrad.sign(out).detach()
    return (sign * plugrad.relu(plugrad.abs(out))).mul(count).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """Power-average pooling: ``(sum over the window of x^p) ** (1/p)``."""
    k = _one("lp_pool1d", kernel_size, "kernel_size")
    out = avg_pool1d(input.pow(norm_type), k, stride, 0, ceil_mode)  # ints: float powers
    return _lp_finish(out, norm_type, k)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """2-D power-average pooling over ``(N, C, H, W)`` or ``(C, H, W)``."""
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    x = input.pow(norm_type)
    _rank("lp_pool2d", x, 2)
    out = _avg_pool2d(x, (kh, kw), stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, kh * kw)


# ---------------------------------------------------------------------- adaptive
def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """Mean over PyTorch's adaptive windows of ``(N, C, L)`` or ``(C, L)``."""
    name = "adaptive_avg_pool1d"
    _rank(name, input, 1)
    o = _one(name, output_size, "output_size")
    return _adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def _adaptive_max2d(x, oh, ow):
    """Values and flat ``H * W`` indices of the max of each adaptive window of 4-D ``x``."""
    n, c, h, w = x.shape
    if h % oh == 0 and w % ow == 0:
        return _max_pool2d(x, (h // oh, w // ow), return_indices=True)
    return _window_max(x, *_adaptive_table((h, w), (oh, ow)), (oh, ow))


def _adaptive_sizes(name, x, output_size, spatial):
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * spatial
    output_size = tuple(output_size)
    if len(output_size) != spatial:
        raise ValueError(f"{name}: output_size must be {spatial} integers, got {output_size}")
    sizes = tuple(x.shape[x.ndim - spatial + i] if s is None else int(s)
                  for i, s in enumerate(output_size))
    if min(sizes) < 1:
        raise ValueError(f"{name}: elements of output_size must be positive, got {sizes}")
    for d in range(x.ndim - spatial, x.ndim):
        if x.shape[d] == 0:
            raise plugrad.ShapeError(f"{name}(): Expected input to have non-zero size for "
                                     f"non-batch dimensions, but input has sizes "
                                     f"{list(x.shape)} with dimension {d} being empty")
    return sizes


def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    """Max over PyTorch's adaptive windows of ``(N, C, H, W)`` or ``(C, H, W)``."""
    name = "adaptive_max_pool2d"
    _rank(name, input, 2)
    oh, ow = _adaptive_sizes(name, input, output_size, 2)
    x = input.unsqueeze(0) if input.ndim == 3 else input
    out, idx = _adaptive_max2d(x, oh, ow)
    out = _named(_records(out, x), "AdaptiveMaxPool2DBackward0")
    if input.ndim == 3:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):  # noqa: A002
    """Max over PyTorch's adaptive windows of ``(N, C, L)`` or ``(C, L)``; indices into L."""
    name = "adaptive_max_pool1d"
    _rank(name, input, 1)
    (o,) = _adaptive_sizes(name, input, (_one(name, output_size, "output_size"),), 1)
    x = input.unsqueeze(0) if input.ndim == 2 else input
    out, idx = _adaptive_max2d(x.unsqueeze(2), 1, o)
    out, idx = _records(out, x).squeeze(2), idx.squeeze(2)
    if input.ndim == 2:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out
