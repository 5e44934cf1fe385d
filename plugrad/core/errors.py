"""plugrad's errors about op arguments, and the checks that raise them.

They sit at the bottom of the core (below the Tensor), so factories, ops and the engine
share one wording: every message names the op, the shapes, dtypes or devices involved and
what was expected, as PyTorch's do.
"""
from __future__ import annotations


class OpError(RuntimeError):
    """Base of plugrad's errors about op arguments (shape, dtype, device)."""


class ShapeError(OpError, ValueError):
    """Shapes that do not fit the op."""


class ArgumentError(OpError, ValueError):
    """An argument outside what the op accepts (a negative size, a zero step, low >= high):
    PyTorch raises RuntimeError there; a ValueError too, as Python code would expect."""


class IndexOutOfRangeError(OpError, IndexError):
    """An index past a dimension's end in an index-taking op: PyTorch raises RuntimeError
    for some (gather, scatter) and IndexError for others (index_select, index_add)."""


class DeviceError(OpError):
    """Tensors on different devices in one op."""


class DTypeError(OpError, TypeError):
    """A dtype the op or the backend does not support."""


class DTypeNotImplementedError(DTypeError, NotImplementedError):
    """A dtype PyTorch has no kernel of the op for (``"abs_cpu" not implemented for
    'Bool'``): a NotImplementedError there, so ``except NotImplementedError`` still works."""


def no_bool_kernel(op: str, kernel: str, *tensors) -> None:
    """PyTorch's refusal of a bool operand where it has no kernel: the same class and
    wording (``"median_cpu" not implemented for 'Bool'``), naming the op."""
    for t in tensors:
        if getattr(getattr(t, "dtype", None), "name", None) == "bool":
            raise DTypeNotImplementedError(f"{op}: \"{kernel}\" not implemented for 'Bool'")


def shape_str(shape) -> str:
    return f"[{', '.join(str(s) for s in shape)}]"


def broadcast_shapes(op: str, *shapes) -> tuple:
    """The broadcast of ``shapes``, or a ShapeError naming the op and the shapes."""
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        size = 1
        for s in shapes:
            d = s[i - ndim + len(s)] if i - ndim + len(s) >= 0 else 1
            if d != 1:
                if size not in (1, d):
                    raise ShapeError(
                        f"{op}: shapes {' and '.join(shape_str(s) for s in shapes)} cannot be "
                        f"broadcast together (size {size} vs {d} at dimension {i - ndim})")
                size = d
        out.append(size)
    return tuple(out)


def check_device(op: str, a, b) -> None:
    if a.device is not b.device:
        raise DeviceError(f"{op}: Expected all tensors to be on the same device, but found at "
                          f"least two devices, {a.device} and {b.device}!")


def c_dtype_name(dtype) -> str:
    """PyTorch's C++ name of a dtype, as its messages say it (``Float``, ``Double``)."""
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(dtype.name, dtype.name)


def check_dtype_supported(op: str, k, dtype) -> None:
    if dtype.name not in k.dtypes:
        raise DTypeError(f"{op}: dtype {dtype} is not supported by backend {k.name!r} "
                         f"(device type {k.device_type!r}); it supports "
                         f"{', '.join(sorted(k.dtypes))}")


def kernel_error(op: str, exc: Exception, *operands) -> Exception:
    """A backend's exception turned into one naming the op and the operands (the one place
    kernel failures are translated)."""
    shapes = [t._data.shape if hasattr(t, "_data") else () for t in operands]
    try:
        broadcast_shapes(op, *shapes)
    except ShapeError as err:
        return err
    described = ", ".join(f"{t.dtype.name}{shape_str(t._data.shape)} on {t.device}"
                          if hasattr(t, "_data") else repr(t) for t in operands)
    return OpError(f"{op} failed for {described}: {type(exc).__name__}: {exc}")
