"""``plugrad.utils.dlpack``: PyTorch's ``torch.utils.dlpack`` names.

``to_dlpack(t)`` is ``t.__dlpack__()`` (zero-copy where the backend's arrays export DLPack,
e.g. NumPy, CuPy, or a plugin declaring ``dlpack_device_type``; a host copy otherwise);
``from_dlpack(obj)`` is :func:`plugrad.from_dlpack`, which sends an object to the backend
that declares its DLPack device type.
"""
from plugrad.core.factories import from_dlpack

__all__ = ["from_dlpack", "to_dlpack"]


def to_dlpack(tensor):
    """A DLPack capsule of ``tensor``'s values (PyTorch's ``torch.utils.dlpack.to_dlpack``)."""
    return tensor.detach().__dlpack__()
