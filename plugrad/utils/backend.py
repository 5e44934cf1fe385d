"""``plugrad.utils.backend``: a tensor's backend array and backend, for interoperation.

These reach past the Tensor to the array the backend holds (a NumPy array on ``cpu``, a
CuPy array on ``cuda``, a plugin's own type elsewhere), without a copy, so a tensor can be
handed to the array's library and back. Writing into the array changes the tensor behind
autograd's back (no version counting), as writing ``t.numpy()`` does in PyTorch.
"""
from plugrad.core.dtypes import get_dtype
from plugrad.core.errors import check_dtype_supported
from plugrad.core.factories import _finish, resolve_device
from plugrad.core.registry import get_registry
from plugrad.core.tensor import Tensor

__all__ = ["array", "backend", "from_array"]


def _check(t, name):
    if not isinstance(t, Tensor):
        raise TypeError(f"plugrad.utils.backend.{name}: expected a Tensor, got "
                        f"{type(t).__name__}")


def array(t: Tensor):
    """The backend array holding ``t``'s values (shared, not a copy; a 0-d result on ``cpu``
    may be an immutable NumPy scalar)."""
    _check(t, "array")
    return t._data


def backend(t: Tensor):
    """The :class:`plugrad.backends.Backend` serving ``t``'s device."""
    _check(t, "backend")
    return t._k.backend


def from_array(a, device, requires_grad: bool = False) -> Tensor:
    """A tensor on ``device`` holding the backend array ``a`` (no copy). ``a`` must be of
    that backend's array type; its dtype is the backend's ``dtype_of(a)``."""
    dev = resolve_device(device)
    k = get_registry().table(dev.type)
    if not isinstance(a, k.backend.array_type):
        raise TypeError(f"from_array: expected an array of backend {k.name!r} "
                        f"({k.backend.array_type.__name__}), got {type(a).__name__}")
    try:
        dt = get_dtype(k.backend.dtype_of(a))
    except TypeError as exc:  # e.g. complex
        raise TypeError(f"from_array: {exc}") from exc
    check_dtype_supported("from_array", k, dt)
    return _finish(a, dt, dev, k, requires_grad)
