"""PyTorch's window functions: ``hann_window``, ``hamming_window``, ``blackman_window``,
``bartlett_window`` and ``kaiser_window`` (host-computed values, made into a tensor)."""
from __future__ import annotations

import math

from plugrad.core import dtypes as _dt
from plugrad.core.factories import tensor
from plugrad.core.ops.declare import op


# ---------------------------------------------------------------------- windows
def _window(name, window_length, periodic, dtype, device, requires_grad, fn):
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    dt = _dt.get_default_dtype() if dtype is None else _dt.get_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt.name}")
    if window_length == 0:
        vals = []
    elif window_length == 1:
        vals = [1.0]
    else:
        n = window_length + 1 if periodic else window_length
        vals = [fn(i, n) for i in range(n)][:window_length]
    return tensor(vals, dtype=dt, device=device, requires_grad=requires_grad)



def _cosine_sum(*coefs):
    def fn(i, n):
        return sum(c * (-1) ** k * math.cos(2 * math.pi * k * i / (n - 1))
                   for k, c in enumerate(coefs))
    return fn


@op("hann_window")
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.5, 0.5))


@op("hamming_window")
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(alpha, beta))


@op("blackman_window")
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.42, 0.5, 0.08))


@op("bartlett_window")
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, n: 1.0 - abs(2.0 * i / (n - 1) - 1.0))


def _i0(x: float) -> float:
    term = total = 1.0
    q = x * x / 4.0
    k = 1
    while term > 1e-17 * total:
        term *= q / (k * k)
        total += term
        k += 1
    return total


@op("kaiser_window")
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    def fn(i, n):
        r = 2.0 * i / (n - 1) - 1.0
        return _i0(beta * math.sqrt(max(0.0, 1.0 - r * r))) / _i0(beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, fn)
