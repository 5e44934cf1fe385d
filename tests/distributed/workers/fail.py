"""Run under mpiexec: rank 1 fails at step 3 of a DDP training loop (``raise``,
``sys.exit(3)`` or a hard crash ``os._exit(4)``) while rank 0 goes on into the next
all-reduce; the job must end non-zero instead of hanging."""
import os
import sys

import plugrad
import plugrad.distributed as dist
from plugrad import nn
from plugrad.nn.parallel import DistributedDataParallel as DDP

mode = sys.argv[1]
dist.init_process_group("mpi")
rank = dist.get_rank()
model = DDP(nn.Linear(4, 2))
opt = plugrad.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    if rank == 1 and step == 3:
        if mode == "raise":
            raise RuntimeError("injected failure in rank 1")
        if mode == "exit":
            sys.exit(3)
        if mode == "crash":
            os._exit(4)
    opt.zero_grad()
    model(plugrad.randn(8, 4)).sum().backward()
    opt.step()
    print(f"rank {rank} step {step}", flush=True)
print(f"rank {rank} finished all steps", flush=True)
