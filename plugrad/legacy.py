"""PyTorch's legacy tensor types: ``torch.FloatTensor``, ``torch.cuda.LongTensor``, ...

Older tutorials build tensors with them (``torch.LongTensor([1, 2])``,
``torch.FloatTensor(3, 4)``), test ``isinstance(x, torch.FloatTensor)`` and convert with
``x.type(torch.FloatTensor)``. As in PyTorch each is a class of its own, not a subclass of
``Tensor``: calling it returns a plain :class:`plugrad.Tensor` of its dtype, and
``isinstance`` asks for that dtype on a CUDA device (``cuda.*``) or any other (the rest).
A CPU type builds on the default device unless that is ``cuda``, where ``cpu`` is used.
"""
from __future__ import annotations

from plugrad.core import dtypes as _dt
from plugrad.core import naming
from plugrad.core.device import Device, get_default_device
from plugrad.core.factories import legacy_new
from plugrad.core.tensor import Tensor


class _LegacyType(type):
    def __instancecheck__(cls, obj) -> bool:
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and (obj.device.type == "cuda") == cls.is_cuda)

    def __repr__(cls) -> str:
        return f"<class '{naming.prefix}.{'cuda.' if cls.is_cuda else ''}{cls.__name__}'>"


class _LegacyTensor(metaclass=_LegacyType):
    dtype = None
    is_cuda = False
    _legacy = None

    def __new__(cls, *args, device=None):
        if device is None:
            device = "cuda" if cls.is_cuda else get_default_device()
            if not cls.is_cuda and Device(device).type == "cuda":
                device = "cpu"
        return legacy_new(cls.__name__, cls.dtype, device, args)


def _make(dtype, cuda: bool):
    name = _dt.LEGACY_NAMES[dtype]
    return _LegacyType(name, (_LegacyTensor,), {
        "dtype": dtype, "is_cuda": cuda, "_legacy": (dtype, cuda),
        "__module__": "plugrad.cuda" if cuda else "plugrad",
        "__doc__": f"Legacy constructor and type of {'CUDA ' if cuda else ''}{dtype} tensors."})


_CPU = {name: _make(d, False) for d, name in _dt.LEGACY_NAMES.items()}
_CUDA = {name: _make(d, True) for d, name in _dt.LEGACY_NAMES.items()}

FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor = (
    _CPU["FloatTensor"], _CPU["DoubleTensor"], _CPU["HalfTensor"], _CPU["BFloat16Tensor"])
LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, BoolTensor = (
    _CPU["LongTensor"], _CPU["IntTensor"], _CPU["ShortTensor"], _CPU["CharTensor"],
    _CPU["ByteTensor"], _CPU["BoolTensor"])

__all__ = list(_CPU)


class _VariableType(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableType):
    """``torch.autograd.Variable`` (merged into Tensor in PyTorch 0.4): ``Variable(t)`` is
    a new leaf sharing ``t``'s values, requiring grad if asked; every tensor is an
    instance."""

    def __new__(cls, data, requires_grad: bool = False, volatile: bool = False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        if volatile:
            import warnings
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out


def range(start, end, step=1, *, dtype=None, device=None,  # noqa: A001
          requires_grad=False):
    """``torch.range``: like ``arange`` but ``end`` included, in the default float dtype;
    deprecated in PyTorch (which warns) and still in older programs."""
    import math
    import warnings
    from plugrad.core.factories import arange
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if step == 0:
        raise RuntimeError("range: step must be nonzero")
    n = int(math.floor((end - start) / step)) + 1
    if n < 0:
        raise RuntimeError("range: upper bound and larger bound inconsistent with step sign")
    out = arange(n, dtype=_dt.float64, device=device) * step + start
    out = out.to(dtype or _dt.get_default_dtype())
    return out.requires_grad_() if requires_grad else out
