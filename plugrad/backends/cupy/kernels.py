"""Fused CuPy elementwise kernels of the ``cuda`` backend, and their NumPy references.

Each kernel is written once as a :class:`KernelSpec`: the parameter lists and the C++ body that
``cupy.ElementwiseKernel`` compiles (one launch instead of one per operator, and no temporary
arrays), plus a NumPy expression of the same maths. Bodies use only C++ that both NVCC and a
host compiler accept (``T(0.5)`` casts, ``erf``/``tanh``/``exp``/``fabs`` overloads of
``<cmath>``), so the test suite compiles and runs the *same text* on the CPU through
``tests/cuda/fake_cupy.py`` and compares it with the reference.

Kernels are built lazily, on first use, and only for ``float32``/``float64`` (the backend
falls back to unfused CuPy ops for ``float16``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class KernelSpec:
    name: str
    in_params: str
    out_params: str
    operation: str
    reference: Callable  # NumPy implementation with the same inputs, returning the output


def _erf_np(x):
    # Reference only (tests): math.erf per element, in float64, cast back.
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)


def _sigmoid_ref(x):
    e = np.exp(-np.abs(x))
    r = 1.0 / (1.0 + e)
    return np.where(x < 0, e * r, r).astype(x.dtype)


def _gelu_tanh_grad(x):
    c = math.sqrt(2.0 / math.pi)
    t = np.tanh(c * (x + 0.044715 * x ** 3))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3 * 0.044715 * x * x)


SPECS = {s.name: s for s in (
    KernelSpec(
        "plugrad_gelu_erf", "T x", "T y",
        "y = T(0.5) * x * (T(1) + erf(x * T(0.70710678118654752440)))",
        lambda x: (0.5 * x * (1.0 + _erf_np(x * math.sqrt(0.5)))).astype(x.dtype)),
    KernelSpec(
        "plugrad_gelu_tanh", "T x", "T y",
        "T u = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);"
        " y = T(0.5) * x * (T(1) + tanh(u))",
        lambda x: (0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi)
                                            * (x + 0.044715 * x ** 3)))).astype(x.dtype)),
    KernelSpec(
        "plugrad_sigmoid", "T x", "T y",
        "T e = exp(-fabs(x)); T r = T(1) / (T(1) + e); y = x < T(0) ? e * r : r",
        _sigmoid_ref),
    KernelSpec(
        "plugrad_silu", "T x", "T y",
        "T e = exp(-fabs(x)); T r = T(1) / (T(1) + e); y = x * (x < T(0) ? e * r : r)",
        lambda x: (x * _sigmoid_ref(x)).astype(x.dtype)),
    KernelSpec(
        # exp(x - m) for softmax / logsumexp: one pass instead of two.
        "plugrad_sub_exp", "T x, T m", "T y", "y = exp(x - m)",
        lambda x, m: np.exp(x - m).astype(x.dtype)),
    # ---- backward kernels (the gradient as one expression)
    KernelSpec(
        "plugrad_gelu_erf_backward", "T g, T x", "T y",
        "T cdf = T(0.5) * (T(1) + erf(x * T(0.70710678118654752440)));"
        " T pdf = exp(T(-0.5) * x * x) * T(0.39894228040143267794); y = g * (cdf + x * pdf)",
        lambda g, x: (g * (0.5 * (1.0 + _erf_np(x * math.sqrt(0.5)))
                           + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))).astype(x.dtype)),
    KernelSpec(
        "plugrad_gelu_tanh_backward", "T g, T x", "T y",
        "T x2 = x * x; T t = tanh(T(0.79788456080286535588) * (x + T(0.044715) * x2 * x));"
        " T right = T(0.5) * x * (T(1) - t * t) * T(0.79788456080286535588)"
        " * (T(1) + T(0.134145) * x2); y = g * (T(0.5) * (T(1) + t) + right)",
        lambda g, x: (g * _gelu_tanh_grad(x)).astype(x.dtype)),
    KernelSpec(
        "plugrad_silu_backward", "T g, T x", "T y",
        "T e = exp(-fabs(x)); T r = T(1) / (T(1) + e); T s = x < T(0) ? e * r : r;"
        " y = g * s * (T(1) + x * (T(1) - s))",
        lambda g, x: (g * _sigmoid_ref(x) * (1.0 + x * (1.0 - _sigmoid_ref(x)))).astype(x.dtype)),
    KernelSpec(
        # softmax's gradient from its output y and s = sum(g * y) over the axis
        "plugrad_softmax_backward", "T g, T y, T s", "T out", "out = y * (g - s)",
        lambda g, y, s: (y * (g - s)).astype(y.dtype)),
    KernelSpec(
        # log_softmax's gradient from its output y and s = sum(g) over the axis
        "plugrad_log_softmax_backward", "T g, T y, T s", "T out", "out = g - exp(y) * s",
        lambda g, y, s: (g - np.exp(y) * s).astype(y.dtype)),
    KernelSpec(
        "plugrad_standardize", "T x, T mean, T rstd", "T y", "y = (x - mean) * rstd",
        lambda x, mean, rstd: ((x - mean) * rstd).astype(x.dtype)),
    KernelSpec(
        # layer_norm's input gradient: a = mean(gh), b = mean(gh * xhat), gh = g * weight
        "plugrad_layer_norm_grad_input", "T gh, T xhat, T a, T b, T rstd", "T y",
        "y = (gh - a - xhat * b) * rstd",
        lambda gh, xhat, a, b, rstd: ((gh - a - xhat * b) * rstd).astype(gh.dtype)),
    # layer_norm's output from the centred input d = x - mean (computed once, for the variance)
    KernelSpec(
        "plugrad_normalize", "T d, T rstd", "T y", "y = d * rstd",
        lambda d, rstd: (d * rstd).astype(d.dtype)),
    KernelSpec(
        "plugrad_normalize_affine", "T d, T rstd, T w, T b", "T y", "y = d * rstd * w + b",
        lambda d, rstd, w, b: (d * rstd * w + b).astype(d.dtype)),
    KernelSpec(
        "plugrad_normalize_scale", "T d, T rstd, T w", "T y", "y = d * rstd * w",
        lambda d, rstd, w: (d * rstd * w).astype(d.dtype)),
)}

#: The dtypes the fused kernels are used for.
FUSED_DTYPES = frozenset({"float32", "float64"})


class Kernels:
    """Compiled kernels of one CuPy module, built on first use (CuPy caches the binaries)."""

    def __init__(self, cp):
        self._cp = cp
        self._built: dict = {}

    def __getattr__(self, name):
        spec = SPECS.get("plugrad_" + name)
        if spec is None:
            raise AttributeError(name)
        k = self._cp.ElementwiseKernel(spec.in_params, spec.out_params, spec.operation,
                                       spec.name)
        setattr(self, name, k)  # cached: later lookups skip __getattr__
        return k
