"""plugrad on ``cuda`` (CuPy) against PyTorch CUDA eager: training-step time of an MLP and a
small GPT-style transformer, and a check that both learn alike.

    python benchmarks/gpu_compare.py            # both models, default sizes
    python benchmarks/gpu_compare.py --steps 50 --model mlp --json out.json

On a machine without a GPU (or without CuPy) it prints "no GPU" and exits 0. PyTorch is
optional: without it only plugrad is timed. Times are medians over ``--steps`` steps after
``--warmup`` steps, with the device synchronised around each step.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time


def _plugrad_cuda_ok() -> tuple[bool, str]:
    try:
        import plugrad
    except Exception as exc:  # noqa: BLE001
        return False, f"plugrad does not import: {exc}"
    if not plugrad.cuda.is_available():
        from plugrad.core.registry import get_registry
        return False, get_registry().backends["cuda"].unavailable_reason()
    return True, ""


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


# ---------------------------------------------------------------------------- models
def build(lib, kind, args):
    """The same architecture in plugrad or torch (``lib`` is the module)."""
    nn = lib.nn
    if kind == "mlp":
        return nn.Sequential(nn.Linear(args.mlp_in, args.mlp_hidden), nn.GELU(),
                             nn.Linear(args.mlp_hidden, args.mlp_hidden), nn.GELU(),
                             nn.Linear(args.mlp_hidden, args.mlp_classes))
    d, h, layers, vocab, block = args.d_model, args.n_head, args.n_layer, args.vocab, args.block

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.act = nn.GELU()

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.reshape(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))
            y = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(self.act(self.fc1(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(lib.arange(idx.shape[1], device=idx.device))
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    return GPT()


def batch(lib, kind, args, device, rng):
    import numpy as np
    if kind == "mlp":
        x = rng.standard_normal((args.batch, args.mlp_in)).astype(np.float32)
        y = rng.integers(0, args.mlp_classes, args.batch)
    else:
        x = rng.integers(0, args.vocab, (args.batch, args.block))
        y = rng.integers(0, args.vocab, (args.batch, args.block))
    return lib.tensor(x, device=device), lib.tensor(y, device=device)


def copy_weights(src_model, dst_model, lib_dst, device):
    """Give ``dst_model`` (torch) the parameters of ``src_model`` (plugrad), by name."""
    src = {k: v.detach().cpu().numpy() for k, v in src_model.state_dict().items()}
    dst = dst_model.state_dict()
    missing = set(dst) ^ set(src)
    if missing:
        raise SystemExit(f"parameter names differ between plugrad and torch: {sorted(missing)}")
    dst_model.load_state_dict({k: lib_dst.tensor(src[k], device=device) for k in dst})


# ---------------------------------------------------------------------------- timing
def run(lib, model, kind, args, device, sync):
    import numpy as np
    F = lib.nn.functional
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    batches = [batch(lib, kind, args, device, rng) for _ in range(4)]
    losses, times = [], []
    for step in range(args.warmup + args.steps):
        x, y = batches[step % len(batches)]
        sync()
        t0 = time.perf_counter()
        opt.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        sync()
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
        losses.append(float(loss.item()))
    return statistics.median(times), losses


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=["mlp", "gpt", "both"], default="both")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--mlp-in", type=int, default=1024)
    p.add_argument("--mlp-hidden", type=int, default=2048)
    p.add_argument("--mlp-classes", type=int, default=10)
    p.add_argument("--vocab", type=int, default=128)
    p.add_argument("--block", type=int, default=128)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--n-head", type=int, default=8)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = p.parse_args(argv)

    ok, why = _plugrad_cuda_ok()
    if not ok:
        print(f"no GPU: plugrad's cuda backend is unavailable ({why}); nothing to compare")
        return 0
    import plugrad
    torch = _torch()
    if torch is None:
        print("PyTorch with CUDA is not installed: timing plugrad only")
    print(f"device: {plugrad.cuda.get_device_name()}")

    results = []
    kinds = ["mlp", "gpt"] if args.model == "both" else [args.model]
    for kind in kinds:
        plugrad.manual_seed(0)
        pg_model = build(plugrad, kind, args).to("cuda")
        row = {"model": kind}
        if torch is not None:  # same initial weights for both
            tmodel = build(torch, kind, args).to("cuda")
            copy_weights(pg_model, tmodel, torch, "cuda")
        t_pg, l_pg = run(plugrad, pg_model, kind, args, "cuda", plugrad.cuda.synchronize)
        row.update(plugrad_ms=1e3 * t_pg, plugrad_first_loss=l_pg[0], plugrad_last_loss=l_pg[-1],
                   plugrad_peak_reserved_mb=plugrad.cuda.memory_reserved() / 2 ** 20)
        if torch is not None:
            t_t, l_t = run(torch, tmodel, kind, args, "cuda", torch.cuda.synchronize)
            row.update(torch_ms=1e3 * t_t, torch_first_loss=l_t[0], torch_last_loss=l_t[-1],
                       ratio=t_pg / t_t,
                       first_loss_close=math.isclose(l_pg[0], l_t[0], rel_tol=1e-3))
        results.append(row)
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in row.items()))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": plugrad.cuda.get_device_name(), "args": vars(args),
                       "results": results}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
