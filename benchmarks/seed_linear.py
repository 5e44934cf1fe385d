"""The seeds' ``nn.Linear`` training loop (fit y = 2x + 1), for peak-memory comparisons.

Run as ``python benchmarks/seed_linear.py --framework plugrad|torch|numpy [--device D]``;
it prints one JSON line with the peak resident set size of the process (``VmHWM``, else
``getrusage().ru_maxrss``; see :func:`peak_rss_kib`)
and the learned parameters. ``plugrad`` and ``torch`` run the seed's code verbatim (but for
the import line); ``numpy`` runs the same loop written by hand (the floor).

Used by ``benchmarks/compare.py`` in a subprocess; not an asv benchmark.
"""
import argparse
import json
import resource
import sys


def _seed_loop(torch, device=None):
    if device:
        torch.set_default_device(device)
    import_nn = torch.nn
    optim = torch.optim

    # 1. Prepare synthetic dataset
    # 100 samples, 1 feature
    X_train = torch.randn(100, 1)
    y_train = 2 * X_train + 1 + torch.randn(100, 1) * 0.1  # y = 2x + 1 + noise

    # 2. Define Model, Loss, and Optimizer
    model = import_nn.Linear(1, 1)  # Single linear layer (weights & bias)
    criterion = import_nn.MSELoss()  # Mean Squared Error loss
    optimizer = optim.SGD(model.parameters(), lr=0.01)  # Stochastic Gradient Descent

    # 3. Training Loop
    epochs = 100
    for epoch in range(epochs):
        predictions = model(X_train)
        loss = criterion(predictions, y_train)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.weight.item(), model.bias.item()


def _numpy_loop():
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal((100, 1)).astype(np.float32)
    y = (2 * x + 1 + rng.standard_normal((100, 1)) * 0.1).astype(np.float32)
    w = rng.uniform(-1, 1, (1, 1)).astype(np.float32)
    b = rng.uniform(-1, 1, (1,)).astype(np.float32)
    lr = np.float32(0.01)
    for _ in range(100):
        pred = x @ w.T + b
        g = (pred - y) * np.float32(2.0 / pred.size)
        w -= lr * (g.T @ x)
        b -= lr * g.sum(axis=0)
    return float(w[0, 0]), float(b[0])


def _ru_maxrss_kib():
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss // 1024 if sys.platform == "darwin" else rss     # bytes there, KiB on Linux


def peak_rss_kib():
    """Peak RSS of this process in KiB.

    On Linux ``ru_maxrss`` survives ``exec``: a child that a large parent spawned (compare.py
    after PyTorch's matmuls) reports the parent's peak. ``VmHWM`` belongs to this process's
    own address space, so it is used where it exists; ``getrusage`` elsewhere.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return _ru_maxrss_kib()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--framework", choices=("plugrad", "torch", "numpy"), default="plugrad")
    ap.add_argument("--device", default=None)
    args = ap.parse_args(argv)
    if args.framework == "numpy":
        w, b = _numpy_loop()
    else:
        lib = __import__(args.framework)
        lib.manual_seed(0)
        w, b = _seed_loop(lib, args.device)
    print(json.dumps({"framework": args.framework, "maxrss_kib": peak_rss_kib(),
                      "ru_maxrss_kib": _ru_maxrss_kib(), "weight": w, "bias": b}))


if __name__ == "__main__":
    main()
