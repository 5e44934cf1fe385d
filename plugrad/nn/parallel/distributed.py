"""``DistributedDataParallel``: data parallelism over ``plugrad.distributed``.

How gradients are synchronized (all of it happens inside ``loss.backward()``):

- Parameters are grouped, in reverse registration order (roughly the order their gradients
  become ready), into buckets of at most ``bucket_cap_mb`` MiB of one device and dtype.
- A hook on every parameter (``param.register_hook``, run by the autograd engine just before
  the gradient is accumulated into ``.grad``) records the gradient the parameter will hold.
  When every parameter of a bucket is ready, the bucket is flattened into one contiguous
  buffer and a non-blocking all-reduce (``MPI_Iallreduce``) is started; buckets start in
  index order on every rank, so the ranks issue the same sequence of collectives.
- The hook of the last parameter to become ready waits for all buckets, divides by the world
  size and writes the averages into every ``.grad`` (the last one through the hook's return
  value), so when ``backward()`` returns the gradients are the averages over all ranks.

What is averaged is the whole ``.grad`` (so gradients accumulated locally under
``no_sync()`` are included, as in PyTorch). Every parameter that requires a gradient must
get one in each backward after a synchronizing forward, unless
``find_unused_parameters=True`` (which walks the autograd graph after forward).
"""
from __future__ import annotations

import contextlib

import plugrad
import plugrad.distributed as dist
from plugrad.nn.modules.module import Module


def _tensors_in(obj, out: list) -> list:
    if isinstance(obj, plugrad.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)
    return out


class _Bucket:
    __slots__ = ("index", "params", "numels", "totals", "ready", "work", "flat")

    def __init__(self, index, params):
        self.index = index
        self.params = params
        self.numels = [p.numel() for p in params]
        self.reset()

    def reset(self):
        self.totals = [None] * len(self.params)
        self.ready = 0
        self.work = None
        self.flat = None

    @property
    def nbytes(self) -> int:
        return sum(n * p.element_size() for n, p in zip(self.numels, self.params))


class DistributedDataParallel(Module):
    """Wrap ``module`` so that ``backward()`` averages its gradients over all ranks.

    Parameters (and buffers) are broadcast from rank 0 at construction, so every replica
    starts equal; with ``broadcast_buffers`` the buffers are broadcast again at every
    forward (e.g. BatchNorm's running statistics follow rank 0's).
    """

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None,
                 bucket_cap_mb: float = 25, find_unused_parameters: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False):
        super().__init__()
        if not dist.is_initialized():
            raise RuntimeError("DistributedDataParallel needs the default process group: "
                               "call plugrad.distributed.init_process_group('mpi') first")
        if process_group is not None:
            raise NotImplementedError("only the default process group is supported")
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.bucket_cap_mb = bucket_cap_mb
        self.require_backward_grad_sync = True
        self.world_size = dist.get_world_size()

        params = [p for p in module.parameters() if p.requires_grad]
        shapes = [(tuple(p.shape), p.dtype.name) for p in module.parameters()]
        everyone = []
        dist.all_gather_object(everyone, shapes)
        for r, other in enumerate(everyone):
            if other != shapes:
                raise RuntimeError(f"DistributedDataParallel: rank {r}'s model has different "
                                   f"parameters (shapes/dtypes) than rank {dist.get_rank()}'s")
        with plugrad.no_grad():
            for t in list(module.parameters()) + list(module.buffers()):
                dist.broadcast(t, src=0)

        self._params = params
        self._buckets = self._make_buckets(params, bucket_cap_mb)
        self._where = {}
        for b in self._buckets:
            for j, p in enumerate(b.params):
                self._where[id(p)] = (b, j)
        self._armed = False
        self._n_ready = 0
        self._next_launch = 0
        self._handles = [p.register_hook(self._make_hook(p)) for p in params]

    # ----------------------------------------------------------------------- buckets
    @staticmethod
    def _make_buckets(params, cap_mb):
        cap = max(1, int(cap_mb * 1024 * 1024))
        buckets, current, size, key = [], [], 0, None
        for p in reversed(params):
            k = (str(p.device), p.dtype.name)
            nbytes = p.numel() * p.element_size()
            if current and (k != key or size + nbytes > cap):
                buckets.append(_Bucket(len(buckets), current))
                current, size = [], 0
            current.append(p)
            size += nbytes
            key = k
        if current:
            buckets.append(_Bucket(len(buckets), current))
        return buckets

    @property
    def bucket_sizes(self) -> list:
        """Number of parameters in each bucket, in launch order."""
        return [len(b.params) for b in self._buckets]

    # ----------------------------------------------------------------------- forward
    def forward(self, *args, **kwargs):
        self._check_previous_sync()
        if self.broadcast_buffers and self.world_size > 1:
            with plugrad.no_grad():
                for b in self.module.buffers():
                    dist.broadcast(b, src=0)
        out = self.module(*args, **kwargs)
        self._armed = (plugrad.is_grad_enabled() and self.require_backward_grad_sync
                       and bool(self._params))
        if self._armed:
            self._reset()
            if self.find_unused_parameters:
                self._mark_unused(out)
        return out

    def _check_previous_sync(self):
        if self._armed and 0 < self._n_ready < len(self._params):
            missing = [i for i, p in enumerate(self._params)
                       if self._where[id(p)][0].totals[self._where[id(p)][1]] is None]
            names = {id(p): n for n, p in self.module.named_parameters()}
            shown = ", ".join(names.get(id(self._params[i]), f"#{i}") for i in missing[:8])
            raise RuntimeError(
                f"DistributedDataParallel: the previous backward did not produce gradients "
                f"for {len(missing)} parameter(s) ({shown}), so their gradients were not "
                f"averaged and this rank may be out of step with the others. Make every "
                f"parameter take part in the loss, or pass find_unused_parameters=True.")

    def _reset(self):
        for b in self._buckets:
            b.reset()
        self._n_ready = 0
        self._next_launch = 0

    def _mark_unused(self, out):
        seen, used = set(), set()
        stack = [t.grad_fn for t in _tensors_in(out, []) if t.grad_fn is not None]
        for t in _tensors_in(out, []):
            if t.grad_fn is None and t.requires_grad:
                used.add(id(t))
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            var = getattr(node, "variable", None)
            if var is not None:
                used.add(id(var))
            for child, _ in node.next_functions:
                if child is not None and id(child) not in seen:
                    stack.append(child)
        for p in self._params:
            if id(p) not in used:  # ready now, with whatever it holds already
                g = p.grad
                self._ready(p, plugrad.zeros_like(p) if g is None else g.detach().clone())
        if self._n_ready == len(self._params):
            self._finalize(None)

    # ------------------------------------------------------------------------ hooks
    def _make_hook(self, p):
        def hook(grad):
            if not self._armed:
                return None
            base = p.grad
            total = grad.detach() if base is None else base.detach() + grad.detach()
            self._ready(p, total)
            if self._n_ready == len(self._params):
                return self._finalize(p)
            return None
        return hook

    def _ready(self, p, total):
        bucket, j = self._where[id(p)]
        if bucket.totals[j] is not None:
            raise RuntimeError("DistributedDataParallel: a parameter's gradient became ready "
                               "twice in one backward (backward run twice after one forward, "
                               "or the module used reentrantly)")
        bucket.totals[j] = total
        bucket.ready += 1
        self._n_ready += 1
        # launch, in index order, every bucket that is complete
        while (self._next_launch < len(self._buckets)
               and self._buckets[self._next_launch].ready
               == len(self._buckets[self._next_launch].params)):
            self._launch(self._buckets[self._next_launch])
            self._next_launch += 1

    def _launch(self, bucket):
        with plugrad.no_grad():
            flat = plugrad.cat([t.reshape(-1) for t in bucket.totals])
        bucket.totals = [True] * len(bucket.params)  # free the per-parameter copies
        bucket.flat = flat
        bucket.work = dist.all_reduce(flat, op=dist.ReduceOp.AVG, async_op=True)

    def _finalize(self, current):
        """Wait for every bucket and write the averages into ``.grad``; returns the value
        that replaces ``current``'s incoming gradient."""
        self._armed = False
        replacement = None
        for bucket in self._buckets:
            bucket.work.wait()
            offset = 0
            for p, n in zip(bucket.params, bucket.numels):
                avg = bucket.flat[offset:offset + n].reshape(p.shape)
                if not self.gradient_as_bucket_view:
                    avg = avg.clone()
                offset += n
                if p is current:
                    p.grad = None  # the engine stores the returned value as the gradient
                    replacement = avg
                else:
                    p.grad = avg
            bucket.work = None
            bucket.flat = None
        return replacement

    # ---------------------------------------------------------------------- helpers
    @contextlib.contextmanager
    def no_sync(self):
        """Within this context, forward/backward only accumulate gradients locally; the
        next synchronizing backward averages the accumulated ``.grad``."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def extra_repr(self) -> str:
        return (f"world_size={self.world_size}, buckets={len(self._buckets)}, "
                f"bucket_cap_mb={self.bucket_cap_mb}")


__all__ = ["DistributedDataParallel"]
