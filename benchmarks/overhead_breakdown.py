"""Where the time of a tiny op goes: NumPy kernel, backend call, dispatch, graph recording.

    python benchmarks/overhead_breakdown.py [--device cpu] [--n 16] [--json out.json]

For each op on ``n`` float32 elements (default 16, the compare.py tiny op) it times, with
``timeit`` (best of several repeats, since a floor is what is wanted on a noisy machine):

  numpy      the raw NumPy call (``np.add(a, b)``, ``a.sum()``)      -> the kernel
  backend    the backend's kernel (``x._k.add(a, b)``)             -> + backend wrapper
  no_grad    ``x + y`` under ``plugrad.no_grad()``                  -> + dispatch, Tensor wrap
  grad       ``x + y`` with ``x.requires_grad``                     -> + graph recording
  backward   ``(x + y).sum().backward()``                          (whole fwd+bwd, for scale)

and prints each as a time and as the increment over the previous level. PyTorch's
``no_grad`` and ``grad`` times are shown alongside when it is installed. ``_k`` and ``_data``
are plugrad internals: this script is a diagnostic, not an API user.

Not an asv benchmark (asv imports this module during discovery; nothing runs on import).
"""
from __future__ import annotations

import argparse
import json
import sys
import timeit

import numpy as np


def _best(stmt, number, repeat):
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def breakdown(device="cpu", n=16, number=2000, repeat=7):
    import plugrad
    try:
        import torch
    except Exception:
        torch = None
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    x = plugrad.tensor(a, device=device)
    y = plugrad.tensor(b, device=device)
    xg = plugrad.tensor(a, device=device, requires_grad=True)
    k = x._k
    xd, yd = x._data, y._data
    ops = {
        # name: (numpy kernel, backend kernel, plugrad op)
        "add": (lambda: np.add(a, b), lambda: k.add(xd, yd), lambda u, v: u + v),
        "mul": (lambda: np.multiply(a, b), lambda: k.mul(xd, yd), lambda u, v: u * v),
        "exp": (lambda: np.exp(a), lambda: k.exp(xd), lambda u, v: u.exp()),
        "sum": (lambda: a.sum(), lambda: k.sum(xd, None, False), lambda u, v: u.sum()),
    }
    rows = []
    for name, (np_fn, k_fn, op) in ops.items():
        r = {"op": name}
        r["numpy"] = _best(np_fn, number, repeat)
        r["backend"] = _best(k_fn, number, repeat)
        with plugrad.no_grad():
            r["no_grad"] = _best(lambda: op(x, y), number, repeat)
        r["grad"] = _best(lambda: op(xg, y), number, repeat)

        def fwd_bwd():
            xg.grad = None
            out = op(xg, y)
            (out.sum() if out.ndim else out).backward()
        r["backward"] = _best(fwd_bwd, max(1, number // 4), repeat)
        if torch is not None:
            tx = torch.tensor(a)
            ty = torch.tensor(b)
            txg = torch.tensor(a, requires_grad=True)
            with torch.no_grad():
                r["torch_no_grad"] = _best(lambda: op(tx, ty), number, repeat)
            r["torch_grad"] = _best(lambda: op(txg, ty), number, repeat)
        rows.append(r)
    return rows


def render(rows, device, n):
    us = 1e6
    out = [f"# per-op cost on {n} float32 elements, plugrad device {device!r} "
           "(best of repeats, microseconds)",
           f"{'op':6} {'numpy':>8} {'backend':>8} {'no_grad':>8} {'grad':>8} {'fwd+bwd':>8}"
           f" | {'kernel':>7} {'backend':>8} {'dispatch':>9} {'record':>7}"
           + (f" | {'torch ng':>9} {'torch g':>8}" if rows and "torch_grad" in rows[0] else "")]
    for r in rows:
        line = (f"{r['op']:6} {r['numpy'] * us:8.2f} {r['backend'] * us:8.2f} "
                f"{r['no_grad'] * us:8.2f} {r['grad'] * us:8.2f} {r['backward'] * us:8.2f}"
                f" | {r['numpy'] * us:7.2f} {(r['backend'] - r['numpy']) * us:8.2f} "
                f"{(r['no_grad'] - r['backend']) * us:9.2f} {(r['grad'] - r['no_grad']) * us:7.2f}")
        if "torch_grad" in r:
            line += f" | {r['torch_no_grad'] * us:9.2f} {r['torch_grad'] * us:8.2f}"
        out.append(line)
    out.append("kernel = raw NumPy call; backend = the backend method around it; dispatch = "
               "no_grad op minus backend call (argument checks, dtype/device, Tensor wrap); "
               "record = grad op minus no_grad op (graph node, saved tensors)")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description="per-op overhead breakdown of a tiny op")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--number", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args(argv)
    rows = breakdown(args.device, args.n, args.number, args.repeat)
    print(render(rows, args.device, args.n))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "n": args.n, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
