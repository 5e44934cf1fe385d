"""Run under mpiexec: DDP on per-rank halves of each batch vs one process on the joined
batches; each rank prints one ``RESULT {json}`` line (the test checks the numbers)."""
import json

import plugrad
from _result import save as _save
import plugrad.distributed as dist
from plugrad import nn
from plugrad.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
out = {"rank": rank}


def make_model(seed, device):
    plugrad.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 4)).to(device)


def batches(n_steps, n_micro, per_rank):
    g = plugrad.Generator()
    g.manual_seed(1234)
    data = []
    for _ in range(n_steps):
        step = []
        for _ in range(n_micro):
            x = plugrad.randn(per_rank * world, 8, generator=g)
            y = plugrad.randint(0, 4, (per_rank * world,), generator=g)
            step.append((x, y))
        data.append(step)
    return data


def flat_params(model):
    return [v for p in model.parameters() for v in p.detach().to("cpu").reshape(-1).tolist()]


def max_diff(a, b):
    return max(abs(u - v) for u, v in zip(a, b))


def run(device, n_steps, n_micro, bucket_cap_mb, per_rank=4):
    loss_fn = nn.CrossEntropyLoss()
    # every rank starts from different weights: DDP must broadcast rank 0's
    ddp = DDP(make_model(100 + rank, device), bucket_cap_mb=bucket_cap_mb)
    ref = make_model(100, device)  # rank 0's initial weights, trained on whole batches
    init = flat_params(ref)
    start_equal = max_diff(flat_params(ddp.module), init)
    opt = plugrad.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ref_opt = plugrad.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    local_grad_differs = None
    losses = []
    for step in batches(n_steps, n_micro, per_rank):
        opt.zero_grad()
        ref_opt.zero_grad()
        for m, (x, y) in enumerate(step):
            x, y = x.to(device), y.to(device)
            mine = slice(rank * per_rank, (rank + 1) * per_rank)  # this rank's half
            xs, ys = x[mine], y[mine]
            if m < n_micro - 1:
                with ddp.no_sync():
                    loss_fn(ddp(xs), ys).backward()
                if local_grad_differs is None:  # after a no_sync backward grads are local
                    g = [p.grad.to("cpu").reshape(-1).tolist() for p in ddp.parameters()]
                    gathered = []
                    dist.all_gather_object(gathered, g)
                    local_grad_differs = gathered[0] != gathered[1]
            else:
                loss_fn(ddp(xs), ys).backward()
            ref_loss = loss_fn(ref(x), y)
            ref_loss.backward()
        losses.append(ref_loss.item())
        opt.step()
        ref_opt.step()
    mine = flat_params(ddp.module)
    everyone = []
    dist.all_gather_object(everyone, mine)
    return {"start_equal": start_equal, "vs_reference": max_diff(mine, flat_params(ref)),
            "between_ranks": max_diff(everyone[0], everyone[1]),
            "moved": max_diff(mine, init), "losses": losses,
            "buckets": ddp.bucket_sizes, "n_params": len(list(ddp.parameters())),
            "local_grad_differs": local_grad_differs}


out["cpu_buckets"] = run("cpu", n_steps=6, n_micro=1, bucket_cap_mb=0.0005)
out["cpu_one_bucket"] = run("cpu", n_steps=3, n_micro=1, bucket_cap_mb=25)
out["ref"] = run("ref", n_steps=3, n_micro=1, bucket_cap_mb=0.0005)
out["no_sync"] = run("cpu", n_steps=3, n_micro=3, bucket_cap_mb=0.0005)


# unused parameters: an error by default, averaged with find_unused_parameters=True
class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.unused = nn.Linear(4, 4)

    def forward(self, x):
        return self.body(x)


for find in (False, True):
    plugrad.manual_seed(7)
    model = DDP(TwoHeads(), find_unused_parameters=find)
    x = plugrad.randn(3, 4) * (rank + 1)
    try:
        for _ in range(2):
            model.zero_grad()
            model(x).sum().backward()
        g = model.module.body.weight.grad.reshape(-1).tolist()
        gathered = []
        dist.all_gather_object(gathered, g)
        out[f"unused/{find}"] = {"ok": True, "equal": gathered[0] == gathered[1]}
    except RuntimeError as e:
        out[f"unused/{find}"] = {"ok": False, "error": str(e)}

dist.destroy_process_group()
_save(out)
