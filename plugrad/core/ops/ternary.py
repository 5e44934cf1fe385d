"""Pointwise ops of three operands (``lerp``, ``addcmul``, ``addcdiv``).

They compute at the promoted precision of all their operands (not pairwise:
``addcmul(float64, float16, float16)`` multiplies in float64), in PyTorch's order of
operations, and float16/bfloat16 in float32 rounded once (PyTorch's CPU "opmath").
"""
from __future__ import annotations

import numpy as _np

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import input_meta, record, recording
from plugrad.core.errors import DTypeError, c_dtype_name
from plugrad.core.grad_mode import no_grad as _no_grad
from plugrad.core.ops.declare import op
from plugrad.core.ops.select import where as _where
from plugrad.core.tensor import Tensor


def _promoted(*ts):
    dt = _dt.result_type_of(tuple((t.dtype, not t._data.shape) for t in ts
                                  if isinstance(t, Tensor)))
    work = _dt.float32 if dt.kind == "f" and dt.itemsize == 2 else dt
    return [t.to(work) if isinstance(t, Tensor) and t.dtype is not work else t
            for t in ts], dt, work


def _rounded(v, work):
    """A Python float as the kernel sees it in ``work`` (float32: rounded to float32)."""
    return float(_np.float32(v)) if work is _dt.float32 else v


def _finish(r, dt):
    return r if r.dtype is dt else r.to(dt)


@op("lerp", method="lerp", inplace="lerp_")
def lerp(a, b, weight):
    """PyTorch's formula: ``a + w (b - a)`` for ``|w| < 0.5``, else ``b - (b - a)(1 - w)``
    (exact at both ends); ``end`` and a Tensor ``weight`` must have ``a``'s dtype."""
    for what, t in (("end", b), ("weight", weight)):
        if isinstance(t, Tensor) and isinstance(a, Tensor) and t.dtype is not a.dtype:
            raise DTypeError(f"lerp: expected dtype {c_dtype_name(a.dtype).lower()} for "
                             f"`{what}` but got dtype {c_dtype_name(t.dtype).lower()}")
    (a, b, w), dt, work = _promoted(a, b, weight)
    if not dt.is_floating_point:
        raise NotImplementedError(f'lerp: "lerp_kernel_scalar" not implemented for '
                                  f"'{c_dtype_name(dt)}' (lerp takes floating point tensors)")
    d = b - a
    if isinstance(w, Tensor):
        return _finish(_where(w.abs() < 0.5, a + w * d, b - d * (1.0 - w)), dt)
    w = _rounded(float(w), work)
    return _finish(a + w * d if abs(w) < 0.5 else b - d * _rounded(1.0 - w, work), dt)


@op("addcmul", method="addcmul", inplace="addcmul_")
def addcmul(x, t1, t2, *, value=1):
    """``x + value * t1 * t2``; integer operands take ``value`` converted to their dtype
    (``value=0.5`` is 0, as in PyTorch)."""
    (x, t1, t2), dt, work = _promoted(x, t1, t2)
    if dt is _dt.bool_:
        raise NotImplementedError("addcmul: \"addcmul_cpu_out\" not implemented for 'Bool'")
    if dt.kind in "iu":
        value = _dt.checked_scalar("addcmul", value, dt)
    if not recording(x, t1, t2) or not all(isinstance(t, Tensor) for t in (x, t1, t2)):
        if value == 1:
            return _finish(x + t1 * t2, dt)
        return _finish(x + (t1 * _rounded(value, work)) * t2, dt)
    v = _rounded(value, work)
    with _no_grad():
        r = x + t1 * t2 if value == 1 else x + (t1 * v) * t2
    node = AddcmulBackward0()
    node.value = v
    record(r, node, (x, t1, t2), (t1, t2))
    node.meta = input_meta(r, (x, t1, t2))
    return _finish(r, dt)


class AddcmulBackward0(Node):
    """PyTorch's rule, term by term at the result's shape: ``g * (t2 * value)`` and
    ``g * (t1 * value)``, then summed over broadcast dims (summing ``g`` first and then
    multiplying gave ``0 * inf = NaN`` where an empty ``x`` broadcasts the product away)."""

    def grad(self, F, g, t1, t2):
        v = self.value
        return (g if self.next[0] else None,
                F.mul(g, F.mul(t2, v)) if self.next[1] else None,
                F.mul(g, F.mul(t1, v)) if self.next[2] else None)


@op("addcdiv", method="addcdiv", inplace="addcdiv_")
def addcdiv(x, t1, t2, *, value=1):
    """``x + value * t1 / t2`` (integer operands are an error, as in PyTorch)."""
    if all(isinstance(t, Tensor) and not t.dtype.is_floating_point for t in (t1, t2)):
        raise DTypeError("addcdiv: Integer division with addcdiv is no longer supported, and "
                         "in a future release addcdiv will perform a true division of tensor1 "
                         "and tensor2. The historic addcdiv behavior can be implemented as "
                         "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                         "for integer inputs and as (input + value * tensor1 / tensor2) for "
                         "float inputs. The future addcdiv behavior is just the latter "
                         "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    (x, t1, t2), dt, work = _promoted(x, t1, t2)
    v = _rounded(value, work)
    if not recording(x, t1, t2) or not all(isinstance(t, Tensor) for t in (x, t1, t2)):
        return _finish(x + t1 / t2 if value == 1 else x + (t1 * v) / t2, dt)
    with _no_grad():
        r = x + t1 / t2 if value == 1 else x + (t1 * v) / t2
    node = AddcdivBackward0()
    node.value = v
    record(r, node, (x, t1, t2), (t1, t2))
    node.meta = input_meta(r, (x, t1, t2))
    return _finish(r, dt)


class AddcdivBackward0(Node):
    """PyTorch's rule, term by term: ``g * (value / t2)`` and
    ``-g * (value * t1 / (t2 * t2))`` at the result's shape, then summed over broadcast
    dims (summing ``g`` first gives ``±inf`` where PyTorch's ``inf - inf`` is NaN)."""

    def grad(self, F, g, t1, t2):
        v = self.value
        return (g if self.next[0] else None,
                F.mul(g, F.div(v, t2)) if self.next[1] else None,
                F.mul(F.neg(g), F.div(F.mul(t1, v), F.mul(t2, t2))) if self.next[2] else None)
