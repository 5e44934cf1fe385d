"""The :class:`DataLoader`: batches of a dataset, in order or shuffled, epoch after epoch.

With ``num_workers=0`` batches are loaded in the calling process. With ``num_workers > 0``
worker processes load them (``plugrad.data._utils.worker``), ``prefetch_factor`` batches
ahead per worker, and hand them back in sampler order, as PyTorch's loader does. Workers are
forked where the platform allows (Linux), so a dataset holding tensors needs no pickling.
"""
from __future__ import annotations

import itertools
import multiprocessing
import queue
import sys
import time

import plugrad
from plugrad.data._utils import worker as _worker
from plugrad.data._utils.collate import default_collate, default_convert  # noqa: F401
from plugrad.data._utils.worker import get_worker_info  # noqa: F401 - PyTorch exports it here
from plugrad.data.dataset import IterableDataset, TensorDataset
from plugrad.data.sampler import BatchSampler, RandomSampler, SequentialSampler


def _default_context():
    """Fork where it is safe and available (Linux): the workers then share the parent's
    dataset as it is. Elsewhere the platform's default, which pickles the dataset."""
    if sys.platform != "darwin" and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _gatherable(dataset, collate_fn) -> bool:
    """A TensorDataset collated by default: its batch is one gather per tensor."""
    return (type(dataset) is TensorDataset and collate_fn is default_collate
            and not any(t.requires_grad for t in dataset.tensors))


def _gathered(dataset, batch) -> list:
    """What ``default_collate([dataset[i] for i in batch])`` gives (the columns, stacked, in a
    list), with one index per tensor instead of a row each and a stack: the same values,
    dtypes and shapes, and the same IndexError for an index out of range."""
    if not all(type(i) is int for i in batch):
        return default_collate([dataset[i] for i in batch])
    out = []
    for t in dataset.tensors:
        n = t.shape[0]
        for i in batch:
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension 0 with size {n}")
        out.append(t[plugrad.tensor(batch, dtype=plugrad.int64, device=t.device)])
    return out


class DataLoader:
    """Iterate ``dataset`` in batches; each ``iter()`` is a new epoch (a new shuffle)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers: int = 0, collate_fn=None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 "
                             "to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = 2 if num_workers and prefetch_factor is None else prefetch_factor
        self.persistent_workers = persistent_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        self._iterator = None
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 "sampler and batch_sampler options")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        if collate_fn is None:
            auto = batch_size is not None or batch_sampler is not None
            collate_fn = default_collate if auto else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None or (self._iterable and self.batch_size is not None)

    def _base_seed(self) -> int:
        """Drawn from ``generator`` at the start of each epoch (with or without workers, as
        PyTorch does, so that both load the same batches): the workers' seeds."""
        return int(plugrad.randint(0, 2 ** 62, (1,), generator=self.generator).item())

    def __iter__(self):
        if self.num_workers == 0:
            self._base_seed()
            return self._iter_here()
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _WorkerIter(self)
            else:
                self._iterator._reset()
            return self._iterator
        return _WorkerIter(self)

    def _iter_here(self):
        if self._iterable:
            return self._iter_stream()
        if self.batch_sampler is not None:
            if _gatherable(self.dataset, self.collate_fn):
                return (_gathered(self.dataset, batch) for batch in self.batch_sampler)
            return (self.collate_fn([self.dataset[i] for i in batch])
                    for batch in self.batch_sampler)
        return (self.collate_fn(self.dataset[i]) for i in self.sampler)

    def _iter_stream(self):
        stream = iter(self.dataset)
        if self.batch_size is None:
            for sample in stream:
                yield self.collate_fn(sample)
            return
        while True:
            batch = list(itertools.islice(stream, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)

    def _index_source(self):
        """What the parent sends the workers, one item per batch: the (batch) sampler's
        output, ``None`` for a stream (an iterable to pass to :func:`iter` each epoch)."""
        if self._iterable:
            return None
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)


class _WorkerIter:
    """Batches from worker processes, in sampler order; one instance per epoch, or one for
    the loader's life with ``persistent_workers`` (then :meth:`_reset` starts each epoch)."""

    _POLL = 1.0  # seconds between liveness checks while waiting for a batch

    def __init__(self, loader: DataLoader):
        # no reference to the loader: a persistent loader holds its iterator, and a cycle
        # would leave the shutdown to the garbage collector, after it closed the queues
        self._source = loader._index_source()
        self._prefetch, self._timeout = loader.prefetch_factor, loader.timeout
        self._persistent = loader.persistent_workers
        self._kind = "iterable" if loader._iterable else "map"
        ctx = loader.multiprocessing_context
        if isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self._ctx = ctx or _default_context()
        n = loader.num_workers
        seed = loader._base_seed()
        self._data_queue = self._ctx.Queue()
        self._done = self._ctx.Event()
        self._index_queues, self._workers = [], []
        self._shut = False
        import os
        for i in range(n):
            index_queue = self._ctx.Queue()
            w = self._ctx.Process(
                target=_worker.worker_loop, daemon=True,
                args=(self._kind, loader.dataset, index_queue, self._data_queue, self._done,
                      loader._auto_collation, loader.collate_fn, loader.batch_size,
                      loader.drop_last, seed + i, loader.worker_init_fn, i, n, os.getpid()))
            try:
                w.start()
            except (TypeError, AttributeError, RuntimeError) as exc:
                self._shutdown()
                if "pickl" not in str(exc):
                    raise
                raise TypeError(
                    f"DataLoader: the {self._ctx.get_start_method()!r} start method pickles the "
                    f"dataset for each worker, and it cannot be pickled ({exc}); plugrad "
                    f"tensors are not picklable. Use multiprocessing_context='fork' (Linux), "
                    f"or a dataset that holds NumPy arrays") from None
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._epoch = -1
        self._reset()

    def _reset(self):
        """Start an epoch: a new pass of the sampler; results of an older epoch still in
        flight are dropped when they arrive."""
        self._epoch += 1
        self._indices = (itertools.repeat(None) if self._source is None
                         else iter(self._source))
        self._send_idx = self._rcvd_idx = 0
        self._tasks: dict = {}  # task number -> [worker id] or [worker id, payload]
        self._active = [True] * len(self._workers)
        self._next_worker = itertools.cycle(range(len(self._workers)))
        for _ in range(self._prefetch * len(self._workers)):
            self._put_task()

    def _put_task(self) -> None:
        if not any(self._active):
            return
        try:
            index = next(self._indices)
        except StopIteration:
            return
        for _ in range(len(self._workers)):
            wid = next(self._next_worker)
            if self._active[wid]:
                break
        self._index_queues[wid].put((self._epoch, self._send_idx, index))
        self._tasks[self._send_idx] = [wid]
        self._send_idx += 1

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._tasks[self._rcvd_idx]
                if len(info) == 2 or self._active[info[0]]:
                    break
                del self._tasks[self._rcvd_idx]  # its worker's stream ended first
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            info = self._tasks[self._rcvd_idx]
            if len(info) == 2:
                del self._tasks[self._rcvd_idx]
                return self._deliver(info[1])
            idx, payload = self._get()
            if idx not in self._tasks:  # a late reply for a task skipped above
                continue
            if idx == self._rcvd_idx:
                del self._tasks[idx]
                return self._deliver(payload)
            self._tasks[idx].append(payload)

    def _deliver(self, payload):
        self._rcvd_idx += 1
        try:
            data = _worker.unpack(payload)
        except Exception:
            self._shutdown()
            raise
        if isinstance(data, _worker.IterableStop):
            self._active[data.worker_id] = False
            self._put_task()
            return self.__next__()
        self._put_task()
        if isinstance(data, _worker.ExceptionWrapper):
            if not self._persistent:
                self._shutdown()
            data.reraise()
        return data

    def _get(self):
        """The next result of this epoch, checking meanwhile that the workers are alive."""
        timeout = self._timeout
        start = time.monotonic()
        while True:
            wait = self._POLL if not timeout else min(self._POLL, timeout)
            try:
                epoch, idx, payload = self._data_queue.get(timeout=wait)
            except queue.Empty:
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader worker (pid(s) "
                                       f"{', '.join(map(str, dead))}) exited unexpectedly")
                if timeout and time.monotonic() - start >= timeout:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds")
                continue
            if epoch == self._epoch:
                return idx, payload

    def _shutdown(self) -> None:
        """Stop the workers: ask, wait a little, then terminate the ones still running."""
        if self._shut:
            return
        self._shut = True
        self._done.set()
        for q in self._index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + 2.0  # an idle worker leaves at once; busy ones get 2 s
        for w in self._workers:
            w.join(timeout=max(0.0, deadline - time.monotonic()))
        for w in self._workers:
            if w.is_alive():
                w.terminate()
                w.join(timeout=1.0)
        for q in (*self._index_queues, self._data_queue):
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        try:
            self._shutdown()
        except Exception:
            pass
