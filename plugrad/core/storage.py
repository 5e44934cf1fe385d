"""``Tensor.storage()``: PyTorch's legacy (typed) storage view, for the
tutorials that read values through it (``x.data.storage().tolist()``).

plugrad keeps no strides or storage offsets (a backend array is the unit), so the storage
of a tensor is its own elements in row-major order: what PyTorch gives for any tensor that
owns its memory. (A PyTorch view's storage is its base's, all of it.)
"""
from __future__ import annotations


class TypedStorage:
    """A flat, read-mostly sequence of a tensor's elements."""

    def __init__(self, tensor):
        self._t = tensor.detach().reshape(-1)

    @property
    def dtype(self):
        return self._t.dtype

    @property
    def device(self):
        return self._t.device

    def size(self) -> int:
        return self._t.numel()

    __len__ = size

    def element_size(self) -> int:
        return self._t.dtype.itemsize

    def nbytes(self) -> int:
        return self.size() * self.element_size()

    def tolist(self) -> list:
        return self._t.tolist()

    def __getitem__(self, i):
        return self._t[i].item() if isinstance(i, int) else self._t[i].tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        return (f"{body}\n[{type(self).__module__}.TypedStorage(dtype={self.dtype}, "
                f"device={self.device}) of size {self.size()}]")
