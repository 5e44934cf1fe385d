"""The process group and its collectives, over MPI (mpi4py), as in ``torch.distributed``.

One process per rank, started by ``mpiexec -n N python script.py`` (or Slurm's ``srun``);
rank and world size come from ``MPI.COMM_WORLD``. Collectives work in place on tensors of
any backend (see :mod:`plugrad.distributed._buffers` for how buffers are found).
"""
from __future__ import annotations

import enum
import sys
import time

from plugrad.distributed._buffers import Buffer

SUPPORTED_BACKENDS = ("mpi",)


class ReduceOp(enum.Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MAX = "max"
    MIN = "min"


class _State:
    def __init__(self):
        self.comm = None
        self.backend = None
        self.rank = -1
        self.size = -1
        self.prev_excepthook = None
        self.prev_exit = None


_state = _State()


def is_available() -> bool:
    """Whether a distributed backend (mpi4py with an MPI library) can be imported here."""
    try:
        from mpi4py import MPI  # noqa: F401
    except Exception:  # ImportError, or an MPI shared library that fails to load
        return False
    return True


def is_initialized() -> bool:
    return _state.comm is not None


def is_mpi_available() -> bool:
    return is_available()


def is_nccl_available() -> bool:
    return False


def _require():
    if _state.comm is None:
        raise RuntimeError("Default process group has not been initialized, please make sure "
                           "to call init_process_group.")
    return _state.comm


def init_process_group(backend: str | None = "mpi", init_method=None, timeout=None,
                       world_size: int = -1, rank: int = -1, store=None, group_name: str = "",
                       abort_on_error: bool = True) -> None:
    """Join the default process group.

    ``backend="mpi"`` (the default and only one): world size and rank are MPI's. Passing
    ``world_size``/``rank`` only checks them against MPI's. ``init_method``, ``timeout``,
    ``store`` are accepted for PyTorch compatibility and ignored (mpiexec did the rendezvous).

    With ``abort_on_error`` (default), an uncaught exception or ``sys.exit(n)`` with
    ``n != 0`` on any rank prints the error and calls ``MPI_Abort``, so the whole job ends
    with a non-zero status instead of the other ranks waiting forever in a collective.
    """
    backend = "mpi" if backend is None else str(backend).lower()
    if backend not in SUPPORTED_BACKENDS:
        raise ValueError(f"unknown distributed backend {backend!r}; plugrad.distributed "
                         f"supports: {', '.join(repr(b) for b in SUPPORTED_BACKENDS)} (for "
                         f"GPUs, 'mpi' stages CuPy buffers or passes them to a CUDA-aware MPI; "
                         f"see docs/distributed.md for NCCL)")
    if _state.comm is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    if not is_available():
        raise RuntimeError("init_process_group('mpi') needs mpi4py and an MPI library: "
                           "pip install 'plugrad[distributed]' (mpi4py, mpich)")
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    if world_size not in (-1, None) and int(world_size) != comm.Get_size():
        raise ValueError(f"world_size={world_size} but MPI started {comm.Get_size()} "
                         f"processes (mpiexec -n {world_size} ...)")
    if rank not in (-1, None) and int(rank) != comm.Get_rank():
        raise ValueError(f"rank={rank} but MPI says this process is rank {comm.Get_rank()}")
    _state.comm = comm
    _state.backend = backend
    _state.rank = comm.Get_rank()
    _state.size = comm.Get_size()
    if abort_on_error and _state.size > 1:
        _install_abort_handlers()


def destroy_process_group(group=None) -> None:
    """Leave the default process group (MPI itself is finalized at interpreter exit)."""
    _check_group(group)
    if _state.comm is None:
        return
    _state.comm.Barrier()
    _remove_abort_handlers()
    _state.comm = None
    _state.backend = None
    _state.rank = _state.size = -1


def abort(code: int = 1, message: str | None = None) -> None:
    """End the whole job now, on every rank, with exit status ``code`` (``MPI_Abort``)."""
    if message:
        print(message, file=sys.stderr, flush=True)
    sys.stderr.flush()
    time.sleep(0.25)  # let the launcher forward what this rank printed before it is killed
    from mpi4py import MPI
    MPI.COMM_WORLD.Abort(int(code))


def _install_abort_handlers() -> None:
    rank = _state.rank
    prev_hook = sys.excepthook
    prev_exit = sys.exit

    def excepthook(exc_type, exc, tb):
        prev_hook(exc_type, exc, tb)
        abort(1, f"plugrad.distributed: rank {rank} raised an uncaught {exc_type.__name__}; "
                 f"aborting all {_state.size} ranks (MPI_Abort)")

    def exit_(code=None):
        if code not in (None, 0) and _state.comm is not None:
            status = code if isinstance(code, int) else 1
            if not isinstance(code, int):
                print(code, file=sys.stderr, flush=True)
            abort(status, f"plugrad.distributed: rank {rank} called sys.exit({code!r}); "
                          f"aborting all {_state.size} ranks (MPI_Abort)")
        prev_exit(code)

    _state.prev_excepthook, _state.prev_exit = prev_hook, prev_exit
    sys.excepthook = excepthook
    sys.exit = exit_


def _remove_abort_handlers() -> None:
    if _state.prev_excepthook is not None:
        sys.excepthook = _state.prev_excepthook
        sys.exit = _state.prev_exit
        _state.prev_excepthook = _state.prev_exit = None


def get_rank(group=None) -> int:
    _check_group(group)
    return _state.rank if _state.comm is not None else -1


def get_world_size(group=None) -> int:
    _check_group(group)
    return _state.size if _state.comm is not None else -1


def get_backend(group=None) -> str:
    _check_group(group)
    _require()
    return _state.backend


def _check_group(group) -> None:
    if group is not None and group is not GroupMember.WORLD:
        raise NotImplementedError("plugrad.distributed has only the default (world) group")


class GroupMember:
    WORLD = object()


group = GroupMember


def barrier(group=None, async_op: bool = False):
    _check_group(group)
    comm = _require()
    if async_op:
        return Work(comm.Ibarrier(), ())
    comm.Barrier()
    return None


# ------------------------------------------------------------------------------ Work
class Work:
    """Handle of an asynchronous collective (``async_op=True``): ``wait()`` completes it
    and writes the result into the tensors."""

    def __init__(self, request, buffers, scale=None, after=None):
        self._request = request
        self._buffers = buffers
        self._scale = scale
        self._after = after
        self._done = False

    def is_completed(self) -> bool:
        if self._done:
            return True
        if self._request is None or self._request.Test():
            self._finish()
        return self._done

    def wait(self, timeout=None) -> bool:
        if not self._done:
            if self._request is not None:
                self._request.Wait()
            self._finish()
        return True

    def _finish(self) -> None:
        if self._done:
            return
        self._done = True
        for b in self._buffers:
            b.finish(self._scale)
        if self._after is not None:
            self._after()

    def result(self):
        return [b.tensor for b in self._buffers]


def _run(comm_call, nonblocking_name, args_fn, buffers, async_op, scale=None, after=None):
    """Issue a collective blocking or not; both paths share the write-back."""
    comm = _require()
    if async_op:
        request = getattr(comm, nonblocking_name)(*args_fn())
        return Work(request, buffers, scale, after)
    getattr(comm, comm_call)(*args_fn())
    Work(None, buffers, scale, after).wait()
    return None


def _mpi_op(op):
    from mpi4py import MPI
    if isinstance(op, str):
        op = ReduceOp(op.lower())
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MAX: MPI.MAX, ReduceOp.MIN: MPI.MIN}[ReduceOp(op)], ReduceOp(op)


def _check_avg(tensor, op) -> float | None:
    if op is not ReduceOp.AVG:
        return None
    if not tensor.dtype.is_floating_point:
        raise TypeError(f"ReduceOp.AVG needs a floating-point tensor, got {tensor.dtype.name}")
    return 1.0 / _state.size


def _check_tensor(tensor, name="tensor"):
    from plugrad import Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{name} must be a plugrad.Tensor, got {type(tensor).__name__}")


# ------------------------------------------------------------------------ collectives
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` over all ranks, in place; every rank gets the result."""
    _check_group(group)
    _check_tensor(tensor)
    from mpi4py import MPI
    _require()
    mpi_op, op = _mpi_op(op)
    scale = _check_avg(tensor, op)
    b = Buffer(tensor, reduction=True)
    return _run("Allreduce", "Iallreduce", lambda: (MPI.IN_PLACE, b.buf, mpi_op), [b],
                async_op, scale)


def broadcast(tensor, src: int, group=None, async_op: bool = False):
    """Copy ``tensor`` of rank ``src`` into ``tensor`` of every rank, in place."""
    _check_group(group)
    _check_tensor(tensor)
    _require()
    if not 0 <= int(src) < _state.size:
        raise ValueError(f"broadcast: src={src} is not a rank of a world of {_state.size}")
    b = Buffer(tensor)
    return _run("Bcast", "Ibcast", lambda: (b.buf, int(src)), [b], async_op)


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """Fill ``tensor_list[r]`` with ``tensor`` of rank ``r`` (same shape and dtype on all)."""
    _check_group(group)
    _check_tensor(tensor)
    _require()
    import numpy as np
    if len(tensor_list) != _state.size:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors, the world "
                         f"has {_state.size} ranks")
    for i, t in enumerate(tensor_list):
        _check_tensor(t, f"tensor_list[{i}]")
        if tuple(t.shape) != tuple(tensor.shape) or t.dtype is not tensor.dtype:
            raise ValueError(f"all_gather: tensor_list[{i}] is {t.dtype.name}{list(t.shape)}, "
                             f"expected {tensor.dtype.name}{list(tensor.shape)}")
    send = Buffer(tensor, writable=False)
    recv = np.empty((_state.size,) + tuple(send.buf.shape), dtype=_host_dtype(send.buf))
    send_buf = _to_host(send.buf)

    def scatter_back():
        for t, part in zip(tensor_list, recv):
            _write(t, part)
    return _run("Allgather", "Iallgather", lambda: (send_buf, recv), [], async_op,
                after=scatter_back)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``input_list[r]`` over all ranks into ``output`` of rank ``r``."""
    _check_group(group)
    _check_tensor(output, "output")
    _require()
    import numpy as np
    mpi_op, op = _mpi_op(op)
    scale = _check_avg(output, op)
    if len(input_list) != _state.size:
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors, the "
                         f"world has {_state.size} ranks")
    parts = []
    for i, t in enumerate(input_list):
        _check_tensor(t, f"input_list[{i}]")
        if tuple(t.shape) != tuple(output.shape):
            raise ValueError(f"reduce_scatter: input_list[{i}] has shape {list(t.shape)}, "
                             f"output has {list(output.shape)}")
        parts.append(_to_host(Buffer(t, reduction=True, writable=False).buf))
    send = np.ascontiguousarray(np.stack(parts))
    recv = np.empty(send.shape[1:], dtype=send.dtype)

    def write():
        if scale is not None:
            recv[...] *= scale
        _write(output, recv)
    return _run("Reduce_scatter_block", "Ireduce_scatter_block",
                lambda: (send, recv, mpi_op), [], async_op, after=write)


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """All-reduce a list of tensors as one flat message per (device, dtype)."""
    works = [all_reduce(t, op, group, async_op=True) for t in tensors]
    if async_op:
        return _Multi(works)
    for w in works:
        w.wait()
    return None


class _Multi:
    def __init__(self, works):
        self._works = works

    def wait(self, timeout=None) -> bool:
        for w in self._works:
            w.wait()
        return True

    def is_completed(self) -> bool:
        return all(w.is_completed() for w in self._works)


def all_gather_object(object_list, obj, group=None) -> None:
    """Fill ``object_list[r]`` with the picklable ``obj`` of rank ``r``."""
    _check_group(group)
    comm = _require()
    gathered = comm.allgather(obj)
    object_list[:] = gathered if len(object_list) == 0 else gathered[:len(object_list)]


def broadcast_object_list(object_list, src: int = 0, group=None) -> None:
    """Replace ``object_list``'s items with those of rank ``src`` (picklable objects)."""
    _check_group(group)
    comm = _require()
    object_list[:] = comm.bcast(list(object_list), root=int(src))


# ---------------------------------------------------------------------------- helpers
def _host_dtype(buf):
    import numpy as np
    return np.dtype(str(buf.dtype))


def _to_host(buf):
    import numpy as np
    if isinstance(buf, np.ndarray):
        return np.ascontiguousarray(buf)
    return buf.get()  # CuPy: gather/scatter shapes are staged through host


def _write(t, values) -> None:
    """Write host ``values`` into tensor ``t`` in place (any backend)."""
    import numpy as np
    arr = t._data
    values = np.asarray(values)
    if isinstance(arr, np.ndarray) and arr.flags.writeable:
        arr[...] = values.reshape(arr.shape).astype(arr.dtype, copy=False)
    else:
        new = t._k.from_numpy(values.reshape(tuple(t.shape)), t.dtype.name, t.device.index)
        t._data = t._k.assign(t._data, (), new)
    t._vc[0] += 1

