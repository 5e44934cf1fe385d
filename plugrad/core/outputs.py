"""``out=``: an op's result written into a tensor the caller passes, as PyTorch does it.

One implementation for every op that takes ``out=`` (the declared ops get it from
:mod:`plugrad.core.ops.declare`, the factories call :func:`write_out`). PyTorch's rules:
the result's dtype must be castable to ``out``'s (no float into an integer tensor, nothing
but bool into bool), or equal to it for the ops that ask so (``matmul``, ``where``, ...);
``out`` of another shape is resized (with PyTorch's deprecation warning when it held
elements); ``out=`` does not record a graph, so it refuses while grad mode records and an
input or ``out`` requires grad; the result is ``out`` itself (its version bumped).
"""
from __future__ import annotations

import warnings

from plugrad.core import aliasing
from plugrad.core.grad_mode import _state
from plugrad.core.tensor import Tensor

_TITLE = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
          "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
          "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _title(dtype) -> str:
    return _TITLE.get(dtype.name, dtype.name)


def can_cast(src, dst) -> bool:
    """PyTorch's ``can_cast``: no floating into integral, nothing but bool into bool."""
    if src.kind == "f" and dst.kind != "f":
        return False
    return not (dst.kind == "b" and src.kind != "b")


def check_out(op: str, out, result: Tensor, exact: bool = False) -> None:
    """Raise as PyTorch does if ``result`` cannot be written into ``out``."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if _state.enabled and (out._rg or result._rg):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad.")
    if out.device != result.device:
        raise RuntimeError(f"{op}(): Expected out tensor to have device {result.device}, but "
                           f"got {out.device} instead")
    if exact and out.dtype is not result.dtype:
        raise RuntimeError(f"{op}(): Expected out tensor to have dtype {result.dtype.name}, "
                           f"but got {out.dtype.name} instead")
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{op}(): result type {_title(result.dtype)} can't be cast to the "
                           f"desired output type {_title(out.dtype)}")


def write_out(op: str, out, result: Tensor, exact: bool = False, warn: bool = True,
              stacklevel: int = 3) -> Tensor:
    """Write ``result`` into ``out`` (checked, cast, resized as PyTorch does); returns
    ``out``. ``warn=False`` for ops whose output size is not known in advance (``arange``
    says so in its own words); ``stacklevel`` points the warning at the caller's line."""
    check_out(op, out, result, exact)
    k = out._k
    data = result._data if result.dtype is out.dtype else k.astype(result._data,
                                                                  out.dtype.name)
    if tuple(out.shape) == tuple(result.shape):
        out._data = k.assign(out._data, (), data)
    else:
        if warn and out.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
                f"release outputs will not be resized unless they have zero elements. You can "
                f"explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                f"with t.resize_(0).", UserWarning, stacklevel=stacklevel)
        # a new array of the result's shape, never the result's own (it may be an input's)
        out._data = k.copy(data) if data is result._data else data
    out._vc[0] += 1
    if out._root is not None or out._views:
        aliasing.written(out)
    return out


def write_outs(op: str, out, results: tuple, exact: bool = False) -> tuple:
    """``out=(values, indices)`` of an op returning several tensors."""
    if not isinstance(out, (tuple, list)) or len(out) != len(results):
        raise TypeError(f"{op}(): argument 'out' must be a tuple of {len(results)} Tensors, "
                        f"not {type(out).__name__}")
    for o, r in zip(out, results):
        check_out(op, o, r, exact)
    for o, r in zip(out, results):
        write_out(op, o, r, exact, stacklevel=4)
    return type(results)(*out) if hasattr(results, "_fields") else tuple(out)
