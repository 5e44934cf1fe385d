"""Clamping bare arrays to Python-number bounds with PyTorch's rule, shared by ``clamp``,
``relu`` and ``hardtanh``."""
from __future__ import annotations


def clamp_data(k, data, lo, hi, floating: bool):
    """``data`` limited to ``[lo, hi]`` (numbers, either may be None) as PyTorch's scalar
    clamp does it: an element is kept unless it lies strictly beyond a bound, so NaN stays
    NaN and a zero keeps its sign at a zero bound (``relu(-0.0)`` is -0.0). The kernels'
    ``maximum``/``minimum`` promise neither (NumPy keeps the second operand of a tie in
    float32 and the first in float16), so floats take ``where``; integers have no such ties.
    ``lo > hi`` gives ``hi`` everywhere, as PyTorch's."""
    if not floating:
        if lo is not None:
            data = k.maximum(data, lo)
        return data if hi is None else k.minimum(data, hi)
    if lo is not None:
        data = k.where(k.lt(data, lo), lo, data)
    if hi is not None:
        data = k.where(k.gt(data, hi), hi, data)
    return data
