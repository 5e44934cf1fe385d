"""Argument checks and window geometry shared by the nn ops (linear, conv, pooling, norms)."""
from __future__ import annotations

from plugrad.core.errors import ArgumentError, DTypeError, ShapeError, check_device, shape_str
from plugrad.core.ops.shape import unsqueeze
from plugrad.core.tensor import Tensor


#: the integer dtypes PyTorch's CPU kernels compute in (integer GEMM convolutions, max
#: pooling); its transposed convolutions and average pools have an int64 kernel only
INTS = ("uint8", "int8", "int16", "int32", "int64")
INT64 = ("int64",)


def tensor_args(op, x, *others, ints=()):
    """Check that ``x`` and the non-None ``others`` are tensors on one device with one dtype,
    a floating one or one of ``ints`` (names of the integer dtypes the op computes in)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected input to be a Tensor, got {type(x).__name__}")
    for t in others:
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected a Tensor, got {type(t).__name__}")
        if t.device is not x.device:
            check_device(op, x, t)
        if t.dtype is not x.dtype:
            raise DTypeError(f"{op}: expected input ({x.dtype.name}) and parameters "
                             f"({t.dtype.name}) to have the same dtype")
    if not x.dtype.is_floating_point and x.dtype.name not in ints:
        raise DTypeError(f"{op}: expected a floating point input, got {x.dtype.name}")


def dilated_ints(op, x, dilation):
    """PyTorch's dilated convolutions (``slow_conv_dilated``) compute floats and int64 only."""
    if any(d != 1 for d in dilation) and not x.dtype.is_floating_point \
            and x.dtype.name not in INT64:
        raise DTypeError(f"{op}: a dilated convolution (dilation={tuple(dilation)}) of a "
                         f"{x.dtype.name} input is not implemented (PyTorch's "
                         f"slow_conv_dilated computes floating and int64 tensors)")


def pair(v, op, name):
    if isinstance(v, int):
        return (v, v)
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return (v[0], v[0])
    if len(v) != 2:
        raise ValueError(f"{op}: {name} must be an int or a pair of ints, got {v}")
    return v


def window_geometry(op, kernel, stride, padding, dilation):
    """``(kernel, stride, ((pt, pb), (pl, pr)), dilation)`` from PyTorch-style arguments;
    ``padding`` may be ``'valid'`` or ``'same'`` (stride 1 only; any odd pad goes right)."""
    kernel = pair(kernel, op, "kernel_size")
    stride = kernel if stride is None or stride == () or stride == [] else pair(stride, op,
                                                                                 "stride")
    dilation = pair(dilation, op, "dilation")
    if min(stride) < 1 or min(dilation) < 1 or min(kernel) < 1:
        raise ArgumentError(f"{op}: kernel_size, stride and dilation must be positive, got "
                         f"{kernel}, {stride}, {dilation}")
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0), (0, 0))
        elif padding == "same":
            if stride != (1, 1):
                raise ValueError(f"{op}: padding='same' is not supported for strided "
                                 f"convolutions (stride={stride})")
            totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
            pads = tuple((t // 2, t - t // 2) for t in totals)
        else:
            raise ValueError(f"{op}: invalid padding string {padding!r}, should be one of "
                             f"'valid', 'same'")
    else:
        ph, pw = pair(padding, op, "padding")
        if ph < 0 or pw < 0:
            raise ArgumentError(f"{op}: negative padding is not supported, got {(ph, pw)}")
        pads = ((ph, ph), (pw, pw))
    return kernel, stride, pads, dilation


def out_size(op, size, k, s, pads, d, ceil_mode=False):
    """PyTorch's output length: with ``ceil_mode`` a last partial window counts (even one
    longer than the padded input) unless it would start past the left padding and input."""
    span = size + pads[0] + pads[1] - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + pads[0]:
        out -= 1  # the last window must start inside the input or the left padding
    if out < 1:
        raise ShapeError(f"{op}: Calculated output size is too small (input size {size}, "
                         f"padding {pads}, dilation {d}, kernel size {k}): the kernel does "
                         f"not fit in the padded input")
    return out


def batched(op, x, weight_ndim=4):
    """``x`` as a batch (adds the batch dim of an unbatched input) and whether it was added."""
    if x.ndim == weight_ndim:
        return x, False
    if x.ndim == weight_ndim - 1:
        return unsqueeze(x, 0), True
    raise ShapeError(f"{op}: Expected {weight_ndim - 1}D (unbatched) or {weight_ndim}D "
                     f"(batched) input, but got input of size: {shape_str(x.shape)}")


def single(v):
    return v if isinstance(v, int) else int(tuple(v)[0])
