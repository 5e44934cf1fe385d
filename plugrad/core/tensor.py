"""The Tensor: a backend array plus dtype, device and autograd state.

This module keeps what a tensor *is*: its state, host conversions and printing. What it
*does* is bound by :mod:`plugrad.core.methods` from the floors above: the ops, device and
dtype moves (``to``, ``float``, ...: ``ops/conversion.py``), the autograd entry points
(``backward``, hooks: ``autograd/tensor_api.py``) and the legacy constructor
(``factories.py``).
"""
from __future__ import annotations

import copy
import warnings

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core import aliasing, grad_mode, naming, printing
from plugrad.core.device import Device, get_default_device, is_host
from plugrad.core.registry import get_registry


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``plugrad.Size([2, 3])`` (``torch.Size`` under
    the torch alias)."""

    def __repr__(self) -> str:
        return f"{naming.prefix}.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


def table_for(device: Device):
    """The kernel table serving ``device`` (cached by the registry)."""
    return get_registry().table(device.type)


class Tensor:
    """An n-dimensional array on a device that can record how it was computed."""

    __slots__ = ("_data", "_k", "dtype", "device", "_rg", "grad_fn", "_grad", "_vc",
                 "_output_nr", "_accum", "_hooks", "_retains_grad", "__dict__", "__weakref__")

    __array_priority__ = 1000  # NumPy defers `ndarray op Tensor` to us

    # Storage sharing (plugrad.core.aliasing): set in a view's ``__dict__`` only, so a tensor
    # that owns its elements pays nothing for them.
    _root = None  # the tensor owning the elements a view shows
    _steps = ()  # how the view's array is taken from the root's
    _ad_base = None  # the tensor whose history an in-place op on the view rewrites
    _ad_steps = ()
    _grad_view = True  # made while grad mode was on (PyTorch refuses in-place otherwise)
    _views = None  # on a root: weak references to its views
    _multi_view = None  # (op name, output number) of a view from split/chunk/unbind

    # ------------------------------------------------------------------ basics
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        shape = self._data.shape
        if dim is None:
            return Size(shape)
        return shape[_wrap_dim(dim, len(shape), "size")]

    def dim(self) -> int:
        return len(self._data.shape)

    @property
    def ndim(self) -> int:
        return len(self._data.shape)

    ndimension = dim

    def numel(self) -> int:
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.dtype.itemsize * self.numel()

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_floating_point_(self) -> bool:
        return self.dtype.is_floating_point

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return False

    def get_device(self) -> int:
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def __len__(self) -> int:
        if not self._data.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if not self._data.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.numel()} values is "
                               f"ambiguous")
        return bool(self.item())

    def __repr__(self) -> str:
        return printing.tensor_repr(self, _dt.get_default_dtype())

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self.numel() == 1 and not self._data.shape:
            return format(self.item(), spec)
        return format(repr(self), spec)

    # ------------------------------------------------------------------ conversions
    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self._rg and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self.device.type != "cpu" and not force and not is_host(self.device):
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                            f"Tensor.cpu() to copy the tensor to host memory first.")
        return np.asarray(self._k.to_numpy(self._data))

    def __array__(self, dtype=None, copy=None):
        out = np.asarray(self._k.to_numpy(self._data))
        return out.astype(dtype) if dtype is not None else out

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted "
                               f"to Scalar")
        return np.asarray(self._k.to_numpy(self._data)).reshape(()).item()

    def tolist(self):
        return np.asarray(self._k.to_numpy(self._data)).tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iu" or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    # ------------------------------------------------------------------ autograd state
    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. "
                                   "If you want to use a computed variable in a subgraph that "
                                   "doesn't require differentiation use var_no_grad = "
                                   "var.detach().")
            return self
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError(f"only Tensors of floating point dtype can require gradients "
                               f"(got {self.dtype})")
        self._rg = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being "
                          "accessed. Its .grad attribute won't be populated during "
                          "autograd.backward(). If you indeed want the .grad field to be "
                          "populated for a non-leaf Tensor, use .retain_grad() on the non-leaf "
                          "Tensor.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"{type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"assigned grad has data of a different size: "
                                   f"{list(value.shape)} vs {list(self.shape)}")
            if value.device is not self.device:
                raise RuntimeError(f"assigned grad has data located on {value.device}, but "
                                   f"the tensor is on {self.device}")
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def _version(self) -> int:
        return self._vc[0]

    # ------------------------------------------------------------------ aliasing
    def _alias(self) -> Tensor:
        """A tensor sharing this one's array and version counter, outside the graph."""
        out = _wrap(self._data, self.dtype, self.device, self._k)
        out._vc = self._vc
        return out

    def detach(self) -> Tensor:
        out = self._alias()
        aliasing.link(out, self, None, alias=True)
        return out

    @property
    def _base(self):
        """The tensor this one is a (differentiable) view of, as PyTorch's ``_base``."""
        base = self._ad_base
        return base if self._root is not None and base is not self else None

    def _is_view(self) -> bool:
        return self._base is not None

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the elements lie in row-major order in their storage (PyTorch's rule:
        size-1 dimensions don't count). Asked of a channels-last format: whether row-major
        order is also that one's, as where C is 1 or every spatial size is (arrays are never
        stored channels-last here)."""
        rank = getattr(memory_format, "_rank", None)
        if rank is not None and self.ndim == rank:
            if not aliasing.is_contiguous(self):
                return False
            shape = self._data.shape
            return shape[1] == 1 or all(n == 1 for n in shape[2:])
        return aliasing.is_contiguous(self)

    def stride(self, dim: int | None = None):
        """The strides PyTorch would give this tensor, in elements of its storage."""
        strides = aliasing.geometry(self)[1]
        return strides if dim is None else strides[_wrap_dim(dim, len(strides), "stride")]

    def storage_offset(self) -> int:
        return aliasing.geometry(self)[2]

    def detach_(self) -> Tensor:
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._rg = False
        return self

    @property
    def data(self) -> Tensor:
        """The same array outside autograd, with its own version counter (as in PyTorch,
        ``p.data.add_()`` does not invalidate graphs that saved ``p``)."""
        out = _wrap(self._data, self.dtype, self.device, self._k)
        aliasing.link(out, self, None, alias=True)
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        """This tensor takes ``value``'s array; its former views keep the old elements.
        (PyTorch's tensors would then share storage; ``p.data = p.data - lr * p.grad``, the
        common use, cannot tell, and a root of its own keeps ``p``'s updates cheap.)"""
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        aliasing.unlink(self)
        self._data = value._data
        self.dtype = value.dtype
        self.device = value.device
        self._k = value._k

    def __dlpack__(self, *, stream=None, **kwargs):
        """Export through DLPack: the backend's own array, without a copy, where the backend
        declares ``dlpack_device_type`` (NumPy, CuPy, plugins); else a host copy."""
        data = self._dlpack_array()
        return data.__dlpack__(stream=stream, **kwargs) if stream is not None else \
            data.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        data = self._data
        if self._k.backend.dlpack_device_type is None or not hasattr(data, "__dlpack__"):
            return (1, 0)  # kDLCPU: the host copy below
        return data.__dlpack_device__()

    def _dlpack_array(self):
        data = self._data
        if self._k.backend.dlpack_device_type is None or not hasattr(data, "__dlpack__"):
            return np.array(self._k.to_numpy(data), order="C")  # keeps 0-d as 0-d
        return data

    def __reduce_ex__(self, protocol):
        raise TypeError("plugrad tensors are not picklable; use plugrad.save (safetensors)")

    def __deepcopy__(self, memo):
        """A leaf copy with the same values, dtype, device and ``requires_grad`` (PyTorch
        allows deepcopy of leaves only)."""
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        out = _wrap(self._k.copy(self._data), self.dtype, self.device, self._k, type(self))
        out._rg = self._rg
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        for key, value in getattr(self, "__dict__", {}).items():
            if key not in _ALIASING:  # the copy owns its elements
                setattr(out, key, copy.deepcopy(value, memo))
        memo[id(self)] = out
        return out


_new = object.__new__
_ALIASING = frozenset({"_root", "_steps", "_ad_base", "_ad_steps", "_grad_view", "_views",
                       "_multi_view"})


def _adopt(t, src) -> None:
    """Give ``t`` (made by ``Tensor(...)``) the state of the freshly made ``src``."""
    for name in Tensor.__slots__:
        if name not in ("__dict__", "__weakref__"):
            setattr(t, name, getattr(src, name))


def _wrap(data, dtype, device, k, cls=Tensor) -> Tensor:
    """A new tensor around a backend array: the one constructor every op uses."""
    t = _new(cls)
    t._data = data
    t.dtype = dtype
    t.device = device
    t._k = k
    t._rg = False
    t.grad_fn = None
    t._grad = None
    t._vc = [0]
    t._output_nr = 0
    t._accum = None
    t._hooks = None
    t._retains_grad = False
    return t


def _wrap_dim(dim: int, ndim: int, op: str) -> int:
    """Normalise a possibly negative ``dim``; 0-d tensors accept 0 and -1 as PyTorch does."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def default_device() -> Device:
    return get_default_device()


def is_grad_enabled() -> bool:
    return grad_mode._state.enabled
