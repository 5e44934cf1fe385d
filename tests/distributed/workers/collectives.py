"""Run under mpiexec: every collective on cpu and ref tensors; each rank prints its results
as one ``RESULT {json}`` line (the test checks them)."""
import json
import sys

import plugrad
from _result import save as _save
import plugrad.distributed as dist

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
out = {"rank": rank, "world": world, "backend": dist.get_backend(),
       "initialized": dist.is_initialized()}


def vals(t):
    return t.to("cpu").tolist()


for device in ("cpu", "ref"):
    for dtype in ("float32", "float64", "int64", "float16"):
        dt = getattr(plugrad, dtype)
        base = [1.0, -2.0, 3.5, 4.0] if dt.is_floating_point else [1, -2, 3, 4]
        for op in ("SUM", "MAX", "MIN", "PRODUCT") + (("AVG",) if dt.is_floating_point else ()):
            t = plugrad.tensor([v * (rank + 1) for v in base], dtype=dt, device=device)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            out[f"all_reduce/{device}/{dtype}/{op}"] = vals(t)
    # asynchronous all-reduce: the tensor is only updated by wait()
    t = plugrad.full((2, 3), float(rank + 1), device=device)
    work = dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
    work.wait()
    out[f"all_reduce_async/{device}"] = vals(t)
    out[f"all_reduce_async_completed/{device}"] = work.is_completed()
    # a non-contiguous view is reduced and written back in place into its base
    base = plugrad.arange(6, dtype=plugrad.float32, device=device).reshape(2, 3) * (rank + 1)
    view = base.t()
    dist.all_reduce(view)
    out[f"all_reduce_view/{device}"] = vals(view)
    out[f"all_reduce_view_base/{device}"] = vals(base)
    # broadcast from the last rank
    t = plugrad.full((3,), float(rank * 10 + 7), device=device)
    dist.broadcast(t, src=world - 1)
    out[f"broadcast/{device}"] = vals(t)
    # all_gather
    t = plugrad.tensor([[rank, rank + 100]], dtype=plugrad.int64, device=device)
    parts = [plugrad.zeros(1, 2, dtype=plugrad.int64, device=device) for _ in range(world)]
    dist.all_gather(parts, t)
    out[f"all_gather/{device}"] = [vals(p) for p in parts]
    # reduce_scatter: input_list[r] on rank q is q*10 + r
    inputs = [plugrad.full((2,), float(rank * 10 + r), device=device) for r in range(world)]
    o = plugrad.zeros(2, device=device)
    dist.reduce_scatter(o, inputs, op=dist.ReduceOp.SUM)
    out[f"reduce_scatter/{device}"] = vals(o)
    o = plugrad.zeros(2, device=device)
    dist.reduce_scatter(o, inputs, op=dist.ReduceOp.MAX)
    out[f"reduce_scatter_max/{device}"] = vals(o)

# a parameter that requires grad is updated in place without autograd complaints
p = plugrad.nn.Parameter(plugrad.full((2,), float(rank)))
dist.broadcast(p, src=0)
out["broadcast_param"] = vals(p.detach())
objs = []
dist.all_gather_object(objs, {"r": rank})
out["all_gather_object"] = objs
try:
    dist.all_reduce(plugrad.ones(2, dtype=plugrad.int64), op=dist.ReduceOp.AVG)
except TypeError as e:
    out["avg_int_error"] = str(e)
try:
    dist.init_process_group("mpi")
except RuntimeError as e:
    out["twice_error"] = str(e)
dist.barrier()
dist.destroy_process_group()
out["after_destroy"] = [dist.is_initialized(), dist.get_rank()]
_save(out)
