"""Data-parallel training of an MLP on the 8x8 digits, one process per rank.

    mpiexec -n 2 python examples/ddp_digits.py [--epochs 15] [--device cpu]

(``pip install 'plugrad[distributed]'`` brings mpi4py and MPICH, whose ``mpiexec`` lands next
to your ``python``.) Each rank reads its own share of every epoch through a
``DistributedSampler``; ``DistributedDataParallel`` starts all replicas from rank 0's
weights and averages the gradients in ``backward()``, so the replicas stay identical.
Rank 0 prints the progress and the final test accuracy.
"""
import argparse
import time
from pathlib import Path

import numpy as np

import plugrad as torch
import plugrad.distributed as dist
from plugrad import nn
from plugrad.data import DataLoader, TensorDataset
from plugrad.data.distributed import DistributedSampler
from plugrad.nn.parallel import DistributedDataParallel as DDP

DATA = Path(__file__).resolve().parent / "data" / "digits.npz"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=32, help="per rank")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--device", default="cpu", help="cpu, ref or cuda")
    args = parser.parse_args()

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = args.device
    if device == "cuda":  # one GPU per rank, round robin over the GPUs of the node
        device = f"cuda:{rank % torch.cuda.device_count()}"

    digits = np.load(DATA)
    x = torch.tensor(digits["images"].reshape(-1, 64).astype(np.float32) / 16.0)
    y = torch.tensor(digits["labels"].astype(np.int64))
    order = np.random.default_rng(0).permutation(len(y))  # the same split on every rank
    train_idx, test_idx = order[:1500], order[1500:]
    train = TensorDataset(x[torch.tensor(train_idx)], y[torch.tensor(train_idx)])
    x_test, y_test = x[torch.tensor(test_idx)].to(device), y[torch.tensor(test_idx)].to(device)

    sampler = DistributedSampler(train, shuffle=True, seed=0)
    loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)

    torch.manual_seed(rank)  # different on each rank on purpose: DDP broadcasts rank 0's
    model = DDP(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(),
                              nn.Linear(64, 10)).to(device))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    if rank == 0:
        print(f"world size {world}, {len(train)} training images ({len(sampler)} per rank "
              f"per epoch), {len(test_idx)} test images, device {device}", flush=True)
    start = time.perf_counter()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        total = torch.zeros(2, dtype=torch.float64)  # [sum of losses, number of samples]
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()  # gradients are averaged over the ranks here
            optimizer.step()
            total += torch.tensor([loss.item() * len(yb), float(len(yb))], dtype=torch.float64)
        dist.all_reduce(total)  # the epoch's mean loss over all ranks
        if rank == 0:
            acc = accuracy(model.module, x_test, y_test)
            print(f"epoch {epoch + 1:2d}  train loss {total[0].item() / total[1].item():.4f}  "
                  f"test accuracy {acc:.3f}", flush=True)

    # the replicas must be identical: compare a checksum of the weights across ranks
    checksum = torch.tensor([sum(p.detach().to("cpu").double().sum().item()
                                 for p in model.parameters())], dtype=torch.float64)
    spread = checksum.clone()
    dist.all_reduce(spread, op=dist.ReduceOp.MAX)
    low = checksum.clone()
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    if rank == 0:
        acc = accuracy(model.module, x_test, y_test)
        print(f"final test accuracy {acc:.3f} after {args.epochs} epochs in "
              f"{time.perf_counter() - start:.1f}s; replicas identical: "
              f"{spread.item() == low.item()}", flush=True)
    dist.destroy_process_group()


def accuracy(model, x, y) -> float:
    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(dim=1)
    model.train()
    return (pred == y).float().mean().item()


if __name__ == "__main__":
    main()
