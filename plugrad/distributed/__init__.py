"""``plugrad.distributed``: multi-process training over MPI, as in ``torch.distributed``.

Launch one process per rank with ``mpiexec -n N python train.py`` (or ``srun``), then::

    import plugrad.distributed as dist
    dist.init_process_group("mpi")
    dist.all_reduce(t, op=dist.ReduceOp.SUM)      # in place, any backend

See ``plugrad.nn.parallel.DistributedDataParallel`` and ``docs/distributed.md``.
"""
from plugrad.distributed.process_group import (GroupMember, ReduceOp, Work, abort, all_gather,
                                               all_gather_object, all_reduce,
                                               all_reduce_coalesced, barrier, broadcast,
                                               broadcast_object_list, destroy_process_group,
                                               get_backend, get_rank, get_world_size, group,
                                               init_process_group, is_available,
                                               is_initialized, is_mpi_available,
                                               is_nccl_available, reduce_scatter)

__all__ = ["init_process_group", "destroy_process_group", "is_available", "is_initialized",
           "is_mpi_available", "is_nccl_available", "get_rank", "get_world_size",
           "get_backend", "barrier", "all_reduce", "all_reduce_coalesced", "broadcast",
           "all_gather", "reduce_scatter", "all_gather_object", "broadcast_object_list",
           "abort", "ReduceOp", "Work", "GroupMember", "group"]
