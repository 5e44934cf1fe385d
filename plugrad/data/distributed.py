"""``DistributedSampler``: each rank visits its own share of a dataset (as in PyTorch)."""
from __future__ import annotations

import math

import plugrad
from plugrad.data.sampler import Sampler


class DistributedSampler(Sampler):
    """Indices ``rank, rank + num_replicas, ...`` of a (shuffled) order of the dataset.

    Every rank gets the same number of indices, ``num_samples``: without ``drop_last`` the
    order is padded by repeating its first indices up to a multiple of ``num_replicas``;
    with it, the tail that does not divide evenly is dropped. The shuffle depends only on
    ``seed + epoch``, so all ranks agree on it; call ``set_epoch(e)`` at the start of each
    epoch to get a new order. ``num_replicas`` and ``rank`` default to those of the
    initialized process group (``plugrad.distributed``).
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False):
        if num_replicas is None or rank is None:
            import plugrad.distributed as dist
            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler: pass num_replicas and rank, or call "
                                   "plugrad.distributed.init_process_group first")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if num_replicas < 1:
            raise ValueError(f"num_replicas must be at least 1, got {num_replicas}")
        if not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = int(num_replicas)
        self.rank = int(rank)
        self.shuffle = shuffle
        self.seed = int(seed)
        self.drop_last = drop_last
        self.epoch = 0
        n = len(dataset)
        if drop_last and n % self.num_replicas:
            self.num_samples = n // self.num_replicas
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = plugrad.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = plugrad.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            while pad > 0:  # repeat from the start (several times if n < num_replicas)
                indices += indices[:pad]
                pad = self.total_size - len(indices)
        indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)


__all__ = ["DistributedSampler"]
