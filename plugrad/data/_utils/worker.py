"""The worker side of ``DataLoader(num_workers > 0)`` (``torch.utils.data._utils.worker``).

A worker process receives ``(epoch, task, index)`` on its own index queue, fetches and
collates the samples, and sends the result back as bytes it pickled itself: its tensors
travel as NumPy arrays (plugrad tensors are deliberately not picklable) and are rebuilt on
their device by the parent, and a result that cannot be pickled becomes an error the
parent raises instead of a batch that silently never arrives.
"""
from __future__ import annotations

import os
import pickle
import queue
import random
import sys
import traceback

import numpy as np

import plugrad

_worker_info = None


class WorkerInfo:
    """What :func:`get_worker_info` tells code running in a worker."""

    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id: int, num_workers: int, seed: int, dataset):
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self) -> str:
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r})")


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker: its id, the worker count, its seed and its copy of the
    dataset (to shard an ``IterableDataset``); ``None`` in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the parent with its traceback."""

    def __init__(self, exc_type, where: str, text: str):
        self.exc_type, self.where, self.text = exc_type, where, text

    @classmethod
    def current(cls, where: str) -> "ExceptionWrapper":
        exc_type, exc, tb = sys.exc_info()
        return cls(exc_type, where, "".join(traceback.format_exception(exc_type, exc, tb)))

    def reraise(self):
        """Raise the worker's exception type with the worker's traceback in its message."""
        message = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.text}"
        if self.exc_type is KeyError:  # KeyError reprs its message: keep it readable
            message = KeyErrorMessage(message)
        try:
            exc = self.exc_type(message)
        except Exception:
            raise RuntimeError(message) from None
        raise exc


class KeyErrorMessage(str):
    def __repr__(self):
        return self


class IterableStop:
    """Sent by a worker whose ``IterableDataset`` iterator is exhausted."""

    def __init__(self, worker_id: int):
        self.worker_id = worker_id


class _Array:
    """A tensor in transit: its values as a NumPy array, its dtype and device by name."""

    __slots__ = ("array", "dtype", "device")

    def __init__(self, t):
        self.array = np.ascontiguousarray(np.asarray(t.detach()))
        self.dtype, self.device = t.dtype.name, str(t.device)

    def __getstate__(self):
        return self.array, self.dtype, self.device

    def __setstate__(self, state):
        self.array, self.dtype, self.device = state

    def rebuild(self):
        device = plugrad.device(self.device)
        if device.type == "cpu":
            return plugrad.from_numpy(self.array)
        return plugrad.tensor(self.array, dtype=getattr(plugrad, self.dtype), device=device)


def _convert(obj, leaf, is_leaf):
    """``obj`` with every leaf replaced by ``leaf(x)``; containers keep their types."""
    if is_leaf(obj):
        return leaf(obj)
    if isinstance(obj, dict):
        return type(obj)((k, _convert(v, leaf, is_leaf)) for k, v in obj.items()) \
            if type(obj) is not dict else {k: _convert(v, leaf, is_leaf) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        return type(obj)(*(_convert(v, leaf, is_leaf) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_convert(v, leaf, is_leaf) for v in obj)
    return obj


def pack(obj) -> bytes:
    """Pickle a batch for the trip to the parent, tensors as arrays."""
    return pickle.dumps(_convert(obj, _Array, lambda x: isinstance(x, plugrad.Tensor)),
                        protocol=pickle.HIGHEST_PROTOCOL)


def unpack(payload: bytes):
    """The parent's side of :func:`pack`: arrays become tensors on their devices again."""
    return _convert(pickle.loads(payload), _Array.rebuild, lambda x: isinstance(x, _Array))


def _seed_worker(seed: int, worker_id: int) -> None:
    """As PyTorch seeds a worker: ``random`` and plugrad with ``seed``, NumPy's global
    generator with a 32-bit state derived from ``(seed, worker_id)``."""
    random.seed(seed)
    plugrad.manual_seed(seed)
    np.random.seed(np.random.SeedSequence([seed % 2 ** 63, worker_id]).generate_state(1)[0])


def _fetch(kind, dataset, stream, index, auto_collation, collate_fn, batch_size, drop_last):
    if kind == "iterable":
        if not auto_collation:
            return collate_fn(next(stream))
        batch = []
        for sample in stream:
            batch.append(sample)
            if len(batch) == batch_size:
                break
        if not batch or (drop_last and len(batch) < batch_size):
            raise StopIteration
        return collate_fn(batch)
    if auto_collation:
        return collate_fn([dataset[i] for i in index])
    return collate_fn(dataset[index])


def worker_loop(kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn,
                batch_size, drop_last, seed, init_fn, worker_id, num_workers, parent_pid):
    """The body of one worker process."""
    global _worker_info
    try:
        _seed_worker(seed, worker_id)
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
        except Exception:
            init_error = ExceptionWrapper.current(where)
        stream, stream_epoch, exhausted = None, None, False
        while True:
            try:
                task = index_queue.get(timeout=5.0)
            except queue.Empty:
                if os.getppid() != parent_pid or done_event.is_set():
                    break
                continue
            if task is None or done_event.is_set():
                break
            epoch, idx, index = task
            if kind == "iterable" and epoch != stream_epoch:
                stream, stream_epoch, exhausted = None, epoch, False
            if init_error is not None:
                result, init_error = init_error, None
            elif exhausted:
                result = IterableStop(worker_id)
            else:
                try:
                    if kind == "iterable" and stream is None:
                        stream = iter(dataset)
                    result = _fetch(kind, dataset, stream, index, auto_collation, collate_fn,
                                    batch_size, drop_last)
                except StopIteration:
                    if kind != "iterable":
                        result = ExceptionWrapper.current(where)
                    else:
                        result, exhausted = IterableStop(worker_id), True
                except Exception:
                    result = ExceptionWrapper.current(where)
            try:
                payload = pack(result)
            except Exception:
                payload = pack(ExceptionWrapper.current(
                    f"{where} while sending a batch to the main process (a batch may hold "
                    f"tensors, arrays, numbers, strings and containers of them)"))
            data_queue.put((epoch, idx, payload))
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
    data_queue.close()
