"""Tensor spellings that real PyTorch programs use and plugrad lacked: ``select``,
``ravel``, ``type_as``, ``nan_to_num``.

Each is an exact composition of existing differentiable ops (a view where PyTorch gives a
view), so it needs no gradient rule of its own.
"""
from __future__ import annotations

from plugrad.core.autograd.node import present_as
from plugrad.core.ops.compare import isinf, isnan
from plugrad.core.ops.declare import op
from plugrad.core.ops.join import narrow
from plugrad.core.ops.select import where
from plugrad.core.ops.shape import reshape, squeeze
from plugrad.core.tensor import Tensor, _wrap_dim
from plugrad.core.type_info import finfo


@op("select", method="select")
def select(x, dim, index):
    """The slice at ``index`` along ``dim``, that dimension removed (a view, as ``x[:, i]``)."""
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    axis = _wrap_dim(dim, x.ndim, "select")
    if isinstance(index, Tensor):
        index = int(index.item())
    n = x.shape[axis]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {axis}")
    index = index + n if index < 0 else index
    return present_as(squeeze(narrow(x, axis, index, 1), axis), "SelectBackward0")


@op("ravel", method="ravel")
def ravel(x):
    """The elements as one dimension (a view where the layout allows, as ``reshape(-1)``)."""
    return reshape(x, -1)


@op(method="type_as")
def type_as(x, other):
    """``x`` in ``other``'s dtype (and on CUDA if ``other`` is, as ``x.type(other.type())``)."""
    if (x.device.type == "cuda") != (other.device.type == "cuda"):
        return x.to(device=other.device, dtype=other.dtype)
    return x.to(dtype=other.dtype)


@op("nan_to_num", method="nan_to_num", inplace="nan_to_num_")
def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf``, ``neginf`` (the dtype's largest
    and lowest finite values by default); integer and bool tensors come back unchanged."""
    if not x.dtype.is_floating_point:
        return x.clone()
    info = finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    nan = 0.0 if nan is None else nan
    inf = isinf(x)
    out = where(isnan(x), nan, where(inf & (x > 0), posinf, where(inf, neginf, x)))
    return present_as(out if out.dtype is x.dtype else out.to(x.dtype), "NanToNumBackward0")


__all__ = ["select", "ravel", "type_as", "nan_to_num"]
