"""Message buffers for MPI collectives, for a tensor of any backend.

- ``cpu`` (NumPy): the tensor's own array is handed to MPI through the buffer protocol and
  reduced in place (zero copy) when it is C-contiguous, writeable and of a dtype MPI can
  reduce; otherwise a contiguous host copy is used and written back.
- ``cuda`` (CuPy): with a CUDA-aware MPI (``PLUGRAD_MPI_CUDA_AWARE=1``) the device array
  is passed as is (``__cuda_array_interface__``), after the current stream is synchronized;
  otherwise it is staged through host memory.
- any other backend (``ref``, plugins): staged through a host NumPy array and written back.

This module touches tensor internals (``_data``, ``_k``) on purpose, for zero-copy buffers;
it never imports :mod:`plugrad.backends`.
"""
from __future__ import annotations

import os

import numpy as np

# dtypes MPI reduces natively with the built-in ops; others (float16, bool) are widened.
_REDUCIBLE = {np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16, np.int32,
                                    np.int64, np.uint8)}


def _is_cupy(arr) -> bool:
    return type(arr).__module__.split(".")[0] == "cupy"


def cuda_aware() -> bool:
    """Whether device (CuPy) buffers are passed straight to MPI.

    MPI has no portable query for CUDA support, so this is the user's statement, through
    ``PLUGRAD_MPI_CUDA_AWARE=1`` (e.g. Open MPI built with UCX/CUDA, MVAPICH2-GDR, or an
    MPICH configured ``--with-cuda``). Off by default: staging through host memory always works.
    """
    return os.environ.get("PLUGRAD_MPI_CUDA_AWARE", "0").lower() in ("1", "true", "yes", "on")


class Buffer:
    """A contiguous array MPI can read and write that stands for ``tensor``.

    ``buf`` is what goes to MPI; ``finish()`` writes it back into the tensor when it was a
    copy (``direct`` is False) and bumps the tensor's version counter either way.
    """

    __slots__ = ("tensor", "buf", "direct", "reduce_dtype")

    def __init__(self, tensor, *, reduction: bool = False, writable: bool = True):
        self.tensor = tensor
        arr = tensor._data
        self.reduce_dtype = None
        if isinstance(arr, np.ndarray):
            if reduction and arr.dtype not in _REDUCIBLE:
                self._widen(arr)
            elif arr.flags.c_contiguous and (arr.flags.writeable or not writable):
                self.buf, self.direct = arr, True
            else:
                self.buf, self.direct = np.ascontiguousarray(arr), False
        elif _is_cupy(arr) and cuda_aware() and not (reduction and str(arr.dtype) not in
                                                     {str(d) for d in _REDUCIBLE}):
            import cupy
            if not arr.flags.c_contiguous:
                arr = cupy.ascontiguousarray(arr)
                self.buf, self.direct = arr, False
            else:
                self.buf, self.direct = arr, True
            cupy.cuda.get_current_stream().synchronize()
        else:
            host = np.asarray(tensor._k.to_numpy(arr))
            if reduction and host.dtype not in _REDUCIBLE:
                self._widen(host)
            else:
                # always a private copy: to_numpy may share memory with the tensor
                self.buf, self.direct = np.array(host, copy=True, order="C"), False

    def _widen(self, arr) -> None:
        wide = np.float32 if arr.dtype == np.float16 else (
            np.uint8 if arr.dtype == np.bool_ else np.float64)
        self.reduce_dtype = arr.dtype
        self.buf, self.direct = np.ascontiguousarray(arr, dtype=wide), False

    def finish(self, scale: float | None = None) -> None:
        """Make the tensor hold what MPI left in ``buf`` (times ``scale``, for averages)."""
        t = self.tensor
        if scale is not None:
            self.buf *= scale
        if not self.direct:
            buf = self.buf
            if self.reduce_dtype is not None:
                buf = buf.astype(self.reduce_dtype)
            arr = t._data
            if isinstance(arr, np.ndarray) and arr.flags.writeable:
                arr[...] = buf.reshape(arr.shape)
            elif _is_cupy(arr) and _is_cupy(buf):
                arr[...] = buf.reshape(arr.shape)
            else:
                new = t._k.from_numpy(np.asarray(buf).reshape(tuple(t.shape)), t.dtype.name,
                                      t.device.index)
                t._data = t._k.assign(t._data, (), new)
        t._vc[0] += 1

