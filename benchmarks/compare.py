"""plugrad against the hand-written NumPy floor and PyTorch, in one process.

    python benchmarks/compare.py                  # full run (a few minutes on 2 cores)
    python benchmarks/compare.py --quick          # a few rounds, fewer Celsius steps
    python benchmarks/compare.py --device ref --quick
    python benchmarks/compare.py --json out.json  # also write the numbers

Every workload is run by plugrad (on ``--device``), by NumPy written by hand, forward and
backward (``benchmarks/numpy_reference.py``: the floor), and by PyTorch on CPU when it is
installed (its column is left out otherwise). The three are interleaved: each round times
each framework once, in rotating order, after a warm-up; the table reports the median
per-iteration time over the rounds, and the ratios plugrad/numpy and plugrad/torch.

All three start from the same float32 weights and data, and ``--check`` compares the loss of
their first step, so the floor is known to compute the same thing.

Not an asv benchmark: asv imports this module during discovery, so nothing runs on import
and no name here starts with an asv prefix.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import numpy_reference as npref  # noqa: E402
import numpy_reference_lm as nplm  # noqa: E402
import compare_lm  # noqa: E402

FRAMEWORKS = ("plugrad", "numpy", "torch")


# ============================================================================ workloads
# Each fw_* builds the plugrad or PyTorch version (``lib`` is the module) from the NumPy
# step's initial state, and returns a zero-argument step returning the loss tensor.

def _t(lib, arr, device, **kw):
    return lib.tensor(np.array(arr, copy=True), device=device, **kw)


def _load(lib, param, arr):
    with lib.no_grad():
        param.copy_(lib.from_numpy(np.array(arr, copy=True)).to(param.device))


def fw_tiny(lib, device, st):
    x = _t(lib, st["x"], device, requires_grad=True)
    y = _t(lib, st["y"], device)

    def step():
        x.grad = None
        s = (x * y + x).sum()
        s.backward()
        return s
    return step


def fw_matmul(lib, device, st):
    a = _t(lib, st["a"], device, requires_grad=True)
    b = _t(lib, st["b"], device, requires_grad=True)

    def step():
        a.grad = None
        b.grad = None
        s = (a @ b).sum()
        s.backward()
        return s
    return step


def _train_step(lib, model, x, y, lr=0.01):
    F = lib.nn.functional
    opt = lib.optim.SGD(model.parameters(), lr=lr)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def fw_mlp(lib, device, st):
    nn = lib.nn
    layers = []
    params = st["params"]
    for i, (w, b) in enumerate(params):
        lin = nn.Linear(w.shape[1], w.shape[0])
        _load(lib, lin.weight, w)
        _load(lib, lin.bias, b)
        layers.append(lin)
        if i < len(params) - 1:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers).to(device)
    x = _t(lib, st["x"], device)
    y = _t(lib, st["y"], device, dtype=lib.int64)
    return _train_step(lib, model, x, y)


def fw_conv(lib, device, st):
    nn = lib.nn
    wc, bc, wf, bf = st["params"]
    conv = nn.Conv2d(1, wc.shape[0], wc.shape[2])
    fc = nn.Linear(wf.shape[1], wf.shape[0])
    for p, a in ((conv.weight, wc), (conv.bias, bc), (fc.weight, wf), (fc.bias, bf)):
        _load(lib, p, a)
    model = nn.Sequential(conv, nn.ReLU(), nn.Flatten(), fc).to(device)
    x = _t(lib, st["x"], device)
    y = _t(lib, st["y"], device, dtype=lib.int64)
    return _train_step(lib, model, x, y)


def fw_attention(lib, device, st):
    p = st["params"]
    d_model = p["out_proj.weight"].shape[0]
    heads = st.get("heads", 4)
    mha = lib.nn.MultiheadAttention(d_model, heads, batch_first=True)
    params = dict(mha.named_parameters())
    for name, arr in p.items():
        _load(lib, params[name], arr)
    mha = mha.to(device)
    x = _t(lib, st["x"], device, requires_grad=True)

    def step():
        mha.zero_grad()
        x.grad = None
        out, _ = mha(x, x, x, need_weights=False)
        loss = out.sum()
        loss.backward()
        return loss
    return step


def fw_celsius(lib, device, st):
    # the seed's loop body, verbatim but for ``nonlocal`` (it lives in a closure here)
    torch = lib
    celsius = torch.tensor([0.0, 100.0], device=device)
    fahrenheit = torch.tensor([32.0, 212.0], device=device)
    weight = torch.tensor(0.0, requires_grad=True, device=device)
    bias = torch.tensor(0.0, requires_grad=True, device=device)
    learning_rate = 0.0001

    def step():
        nonlocal weight, bias
        prediction = weight * celsius + bias
        error = ((prediction - fahrenheit) ** 2).mean()
        error.backward()
        with torch.no_grad():
            weight -= learning_rate * weight.grad
            bias -= learning_rate * bias.grad
            weight.grad.zero_()
            bias.grad.zero_()
        return error
    return step


@dataclass
class Workload:
    name: str
    description: str
    make_numpy: Callable
    make_fw: Callable
    ref_ok: bool = False      # small enough for the pure-Python backend
    heavy: bool = False       # fewer iterations per measurement
    check: bool = True        # --check compares the first losses (not where orders differ)


WORKLOADS = [
    Workload("tiny_op", "(x*y + x).sum().backward(), 16 elements",
             lambda: npref.make_tiny(16), fw_tiny, ref_ok=True),
    Workload("mlp_step", "MLP 784-512-512-10, batch 128, ReLU, CE, SGD step",
             lambda: npref.make_mlp(128, (784, 512, 512, 10)), fw_mlp),
    Workload("matmul_1024", "1024x1024 matmul, fwd+bwd",
             lambda: npref.make_matmul(1024), fw_matmul, heavy=True),
    Workload("conv_step", "conv 1->8 3x3 on 32x1x28x28, ReLU, linear 10, CE, SGD step",
             lambda: npref.make_conv(32, 8, 28, 3, 10), fw_conv),
    Workload("attention", "self-attention B16 T64 D128 H4, fwd+bwd",
             lambda: npref.make_attention(16, 64, 128, 4), fw_attention),
    Workload("gpt_block", "GPT block LM B16 T64 D128 H4 V65 (embedding+positional, "
             "F.layer_norm, causal F.scaled_dot_product_attention, x @ W, ReLU MLP, CE), "
             "fwd+bwd", lambda: nplm.make_gpt(16, 64, 128, 4, 65), compare_lm.fw_gpt),
    Workload("lstm_lm", "LSTM LM B32 T32 E64 H128 V65 (nn.Embedding, nn.LSTM, nn.Linear, "
             "CE), fwd+bwd", lambda: nplm.make_lstm(32, 32, 64, 128, 65), compare_lm.fw_lstm),
    Workload("loader_epoch", "one epoch: DataLoader(TensorDataset 2048x784, batch 64, "
             "shuffle) into MLP 784-128-10, CE, SGD",
             lambda: nplm.make_loader_epoch(2048, 784, 128, 10, 64), compare_lm.fw_loader,
             heavy=True, check=False),
]


# ============================================================================ timing
def _sync_for(name, device):
    if name == "plugrad" and device.startswith("cuda"):
        import plugrad
        return plugrad.cuda.synchronize
    if name == "torch" and device.startswith("cuda"):
        import torch
        return torch.cuda.synchronize
    return None


def _time_calls(fn, number, sync):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    if sync is not None:
        sync()
    return (time.perf_counter() - t0) / number


#: idle seconds before each timed block: long enough for the BLAS and OpenMP worker threads of
#: the previous block's library to stop spinning (0.05 s sufficed on the 2-core VM)
SETTLE_S = 0.1


def measure_interleaved(fns: dict, rounds: int, target: float, warmup: int, syncs: dict):
    """Median seconds per call of each function, measured in interleaved rounds.

    Each timed block starts as if its library ran alone: after :data:`SETTLE_S` idle and one
    untimed call. Without the pause, a library's first calls share the machine with the
    previous one's threads, which keep spinning after their last call; on 2 cores PyTorch's
    LSTM step took 14 ms right after a NumPy block and 7 ms after a 0.05 s pause (NumPy's,
    after PyTorch, 12 ms against 11 ms). Rounds take the functions in a fresh, seeded random
    order, so no function always follows the same one.
    """
    numbers = {}
    for name, fn in fns.items():
        for _ in range(warmup):
            fn()
        one = max(_time_calls(fn, 1, syncs.get(name)), 1e-7)
        numbers[name] = max(1, int(target / one))
    samples = {name: [] for name in fns}
    order, rng = list(fns), random.Random(0)
    for _ in range(rounds):
        rng.shuffle(order)
        for name in order:
            time.sleep(SETTLE_S)
            _time_calls(fns[name], 1, syncs.get(name))
            samples[name].append(_time_calls(fns[name], numbers[name], syncs.get(name)))
    return {name: statistics.median(s) for name, s in samples.items()}, samples, numbers


# ============================================================================ environment
def _have_torch():
    try:
        import torch  # noqa: F401
        return True
    except Exception:
        return False


def _cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git_commit():
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "")
    except Exception:
        return "unknown"


def _numpy_blas():
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except Exception:
        return "unknown"


def _threadpools():
    try:
        from threadpoolctl import threadpool_info
        return ", ".join(f"{i['internal_api']} {i.get('version')} x{i['num_threads']}"
                         for i in threadpool_info())
    except Exception:
        return None


def environment(device, threads):
    import plugrad
    env = {
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()} {_cpu_model()}",
        "os": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numpy_blas": _numpy_blas(),
        "plugrad": f"{plugrad.__version__} ({_git_commit()})",
        "device": device,
        "threads": threads,
        "threadpools": _threadpools(),
    }
    if _have_torch():
        import torch
        env["torch"] = torch.__version__
        env["torch_threads"] = torch.get_num_threads()
        try:
            cfg = torch.__config__.show()
            parts = [tok.strip(" ,") for tok in cfg.replace(",", " ").split()
                     if tok.startswith(("BLAS_INFO=", "LAPACK_INFO="))]
            parts += [ln.strip(" -") for ln in cfg.splitlines()
                      if "Math Kernel Library" in ln or "OpenBLAS" in ln or "MKL-DNN" in ln]
            env["torch_blas"] = "; ".join(p.split(" (Git")[0] for p in parts)
        except Exception:
            env["torch_blas"] = "unknown"
    return env


# ============================================================================ subprocess rows
def _run_python(code_or_args, env=None):
    args = [sys.executable] + (["-c", code_or_args] if isinstance(code_or_args, str)
                               else list(code_or_args))
    t0 = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, cwd=str(ROOT), env=env,
                          timeout=600)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{args} failed:\n{proc.stderr[-2000:]}")
    return dt, proc.stdout


def import_times(frameworks, repeats):
    stmts = {"plugrad": "import plugrad", "numpy": "import numpy", "torch": "import torch"}
    samples = {f: [] for f in frameworks}
    base = []
    # As users import: with bytecode caches (some sandboxes set PYTHONDONTWRITEBYTECODE,
    # which makes every import recompile its sources).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    _run_python("pass", env)                  # warm the file cache
    for f in frameworks:
        _run_python(stmts[f], env)            # and write the bytecode caches
    for r in range(repeats):
        base.append(_run_python("pass", env)[0])
        k = r % len(frameworks)
        for f in frameworks[k:] + frameworks[:k]:
            samples[f].append(_run_python(stmts[f], env)[0])
    return ({f: statistics.median(s) for f, s in samples.items()}, samples,
            statistics.median(base))


def seed_linear_rss(frameworks, device, repeats):
    out = {}
    for f in frameworks:
        vals = []
        for _ in range(repeats):
            args = [str(HERE / "seed_linear.py"), "--framework", f]
            if f == "plugrad" and device != "cpu":
                args += ["--device", device]
            _, stdout = _run_python(args)
            vals.append(json.loads(stdout.strip().splitlines()[-1])["maxrss_kib"] / 1024.0)
        out[f] = statistics.median(vals)
    return out


# ============================================================================ main
@dataclass
class Row:
    name: str
    description: str
    unit: str                                  # "s" (per iteration) or "MiB"
    values: dict = field(default_factory=dict)  # framework -> number
    note: str = ""
    samples: dict = field(default_factory=dict)

    def ratio(self, other, this="plugrad"):
        """``this`` over ``other``: the median of the rounds' ratios where both have timed
        rounds (paired samples, taken within a round of each other, cancel the machine's
        drift between rounds that a ratio of medians keeps), else the ratio of the values."""
        pa, pb = self.samples.get(this), self.samples.get(other)
        if pa and pb and len(pa) == len(pb) and len(pa) >= 3 and all(pb):
            return statistics.median(x / y for x, y in zip(pa, pb))
        a, b = self.values.get(this), self.values.get(other)
        return a / b if a and b else None


def _fmt_time(s):
    if s is None:
        return "-"
    for unit, mult in (("s", 1.0), ("ms", 1e3), ("us", 1e6), ("ns", 1e9)):
        if s * mult >= 1.0 or unit == "ns":
            return f"{s * mult:.3g} {unit}" if s * mult < 1000 else f"{s * mult:.0f} {unit}"
    return str(s)


def _fmt(row, f):
    v = row.values.get(f)
    if v is None:
        return "-"
    return f"{v:.1f} MiB" if row.unit == "MiB" else _fmt_time(v)


def render_table(rows, frameworks, env):
    lines = []
    lines.append(f"# plugrad vs hand-written NumPy vs PyTorch  ({env['date']})")
    lines.append(f"# machine: {env['machine']}; {env['cpus']} CPUs; load average "
                 f"{', '.join(f'{x:.2f}' for x in env['loadavg'] or [])}")
    lines.append(f"# {env['os']}; Python {env['python']}")
    lines.append(f"# plugrad {env['plugrad']} on {env['device']!r}; numpy {env['numpy']} "
                 f"(BLAS: {env['numpy_blas']})")
    if "torch" in env:
        lines.append(f"# torch {env['torch']} CPU, {env['torch_threads']} threads "
                     f"(BLAS: {env.get('torch_blas', '?')})")
    else:
        lines.append("# torch: not installed (its column is left out)")
    if env.get("threadpools"):
        lines.append(f"# thread pools: {env['threadpools']}")
    lines.append("# times: median per iteration over interleaved rounds; lower is better")
    compiled = any("compiled" in row.values for row in rows)
    columns = list(frameworks) + (["compiled"] if compiled else [])
    headers = ["workload"] + columns + ["plugrad/numpy"]
    if "torch" in frameworks:
        headers.append("plugrad/torch")
    if compiled:  # plugrad.compile: the same step captured and replayed
        headers += ["compiled/numpy", "eager/compiled"]
    table = []
    for row in rows:
        cells = [row.name] + [_fmt(row, f) for f in columns]
        r = row.ratio("numpy")
        cells.append(f"{r:.2f}x" if r else "-")
        if "torch" in frameworks:
            r = row.ratio("torch")
            cells.append(f"{r:.2f}x" if r else "-")
        if compiled:
            r = row.ratio("numpy", "compiled")
            cells.append(f"{r:.2f}x" if r else "-")
            r = row.ratio("compiled")
            cells.append(f"{r:.2f}x" if r else "-")
        table.append(cells)
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *table)]

    def line(cells):
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))
    lines.append(line(headers))
    lines.append(line(["-" * w for w in widths]))
    lines.extend(line(c) for c in table)
    notes = [f"  {row.name}: {row.description}" + (f" [{row.note}]" if row.note else "")
             for row in rows]
    lines.append("")
    lines.append("workloads:")
    lines.extend(notes)
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description="plugrad vs hand-written NumPy vs PyTorch (CPU)")
    ap.add_argument("--quick", action="store_true", help="few rounds and Celsius steps")
    ap.add_argument("--device", default="cpu", help="plugrad device (cpu, ref, cuda, ...)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 3 quick, 9 full)")
    ap.add_argument("--celsius-steps", type=int,
                    help="Celsius loop steps per framework (default 100000; 2000 with --quick)")
    ap.add_argument("--only", help="comma-separated workload names to run")
    ap.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    ap.add_argument("--no-compile", action="store_true",
                    help="leave out the 'compiled' column (plugrad.compile of each step)")
    ap.add_argument("--no-subprocess", action="store_true",
                    help="skip the import-time and peak-memory rows")
    ap.add_argument("--scaling", action="store_true",
                    help="also the scaling table: GPT step at widths 64-512 x seq 64, 256 and "
                         "MLP at batch 1, 32, 512, with peak memory (several minutes)")
    ap.add_argument("--check", action="store_true",
                    help="compare the first-step losses of the three implementations")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="torch.set_num_threads (NumPy's BLAS keeps its own default; set "
                         "OPENBLAS_NUM_THREADS to change it)")
    args = ap.parse_args(argv)

    quick = args.quick
    rounds = args.rounds or (3 if quick else 9)
    target = 0.02 if quick else 0.15
    warmup = 2 if quick else 5
    celsius_steps = args.celsius_steps or (2000 if quick else 100_000)
    device = args.device
    only = set(args.only.split(",")) if args.only else None

    import plugrad
    if device.startswith("cuda") and not plugrad.cuda.is_available():
        ap.error("--device cuda: plugrad.cuda.is_available() is False here")
    frameworks = ["plugrad", "numpy"]
    torch_device = "cpu"
    if not args.no_torch and _have_torch():
        import torch
        torch.set_num_threads(max(1, args.threads))
        frameworks.append("torch")
        if device.startswith("cuda") and torch.cuda.is_available():
            torch_device = device
    with_compile = not args.no_compile and hasattr(plugrad, "compile")
    libs = {"plugrad": plugrad}
    if "torch" in frameworks:
        libs["torch"] = torch
    devices = {"plugrad": device, "torch": torch_device}
    env = environment(device, args.threads)
    env.update(quick=quick, rounds=rounds, celsius_steps=celsius_steps, torch_device=torch_device)

    rows = []
    check_failures = []
    for wl in WORKLOADS:
        if only and wl.name not in only:
            continue
        row = Row(wl.name, wl.description, "s")
        if device == "ref" and not wl.ref_ok:
            row.note = "skipped: too large for the pure-Python ref backend"
            rows.append(row)
            print(f"{wl.name}: {row.note}", file=sys.stderr)
            continue
        np_step = wl.make_numpy()
        fns = {}
        for f in frameworks:
            if f == "numpy":
                continue
            plugrad.manual_seed(0) if f == "plugrad" else libs[f].manual_seed(0)
            fns[f] = wl.make_fw(libs[f], devices[f], np_step.state)
        fns["numpy"] = np_step          # built first, run after the others copied its state
        fns = {f: fns[f] for f in frameworks}
        if with_compile and wl.name != "matmul_1024":  # one call per round there: no gain
            plugrad.manual_seed(0)
            fns["compiled"] = plugrad.compile(wl.make_fw(plugrad, device, np_step.state))
        if args.check:
            losses = {}
            for f, fn in fns.items():
                out = fn()
                losses[f] = float(out.item() if hasattr(out, "item") else out)
            row.note = "first losses " + ", ".join(f"{f}={v:.6g}" for f, v in losses.items())
            lo, hi = min(losses.values()), max(losses.values())
            if wl.check and not hi - lo <= 1e-3 * max(1.0, abs(hi)):
                check_failures.append(f"{wl.name}: {row.note}")
        t0 = time.perf_counter()
        med, samples, numbers = measure_interleaved(
            fns, rounds, target * (0.5 if wl.heavy else 1.0), warmup,
            {f: _sync_for("plugrad" if f == "compiled" else f, devices.get(f, device))
             for f in fns})
        row.values, row.samples = med, samples
        rows.append(row)
        del fns, np_step
        gc.collect()
        print(f"{wl.name}: done in {time.perf_counter() - t0:.1f} s "
              f"({', '.join(f'{f} x{n}' for f, n in numbers.items())} per round)",
              file=sys.stderr)

    if not only or "celsius" in only:
        row = Row("celsius_step", f"the seeds' Celsius loop, per step ({celsius_steps} steps "
                  "each, interleaved in chunks)", "s")
        fns = {}
        for f in frameworks:
            fns[f] = (npref.make_celsius() if f == "numpy"
                      else fw_celsius(libs[f], devices[f], None))
        if with_compile:
            fns["compiled"] = plugrad.compile(fw_celsius(plugrad, device, None))
        timed = list(fns)
        chunk = max(1, celsius_steps // rounds)
        for fn in fns.values():
            for _ in range(min(200, chunk)):
                fn()
        samples = {f: [] for f in timed}
        syncs = {f: _sync_for("plugrad" if f == "compiled" else f, devices.get(f, device))
                 for f in timed}
        t0 = time.perf_counter()
        for r in range(rounds):
            k = r % len(timed)
            for f in timed[k:] + timed[:k]:
                samples[f].append(_time_calls(fns[f], chunk, syncs[f]))
        row.values = {f: statistics.median(s) for f, s in samples.items()}
        row.samples = samples
        row.note = ", ".join(f"{f} total {_fmt_time(sum(samples[f]) * chunk)}"
                             for f in timed)
        rows.append(row)
        print(f"celsius: done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    if not args.no_subprocess and (not only or "import" in only):
        repeats = 3 if quick else 9
        med, samples, base = import_times(frameworks, repeats)
        row = Row("import", "wall time of `python -c 'import X'` (numpy column: import numpy)",
                  "s", med, f"bare interpreter {_fmt_time(base)}", samples)
        rows.append(row)
        print("import: done", file=sys.stderr)
    if not args.no_subprocess and (not only or "memory" in only):
        rss = seed_linear_rss(frameworks, device, 1 if quick else 3)
        rows.append(Row("peak_rss", "peak RSS of the seeds' nn.Linear script "
                        "(benchmarks/seed_linear.py; numpy: the same loop by hand)", "MiB", rss))
        print("memory: done", file=sys.stderr)

    scaling = []
    if args.scaling and device == "cpu":
        def measure(fns):
            return measure_interleaved(fns, max(3, rounds // 3), target, 1, {})[0]
        scaling = compare_lm.run_scaling(frameworks, measure, memory=not args.no_subprocess,
                                         log=lambda m: print(m, file=sys.stderr))

    print(render_table(rows, frameworks, env))
    if scaling:
        print("\n" + compare_lm.render_scaling(scaling, frameworks))
    if args.json:
        out = {"environment": env, "frameworks": frameworks,
               "results": [{"name": r.name, "description": r.description, "unit": r.unit,
                            "values": r.values, "note": r.note,
                            "ratio_plugrad_numpy": r.ratio("numpy"),
                            "ratio_plugrad_torch": r.ratio("torch"),
                            "ratio_compiled_numpy": r.ratio("numpy", "compiled"),
                            "ratio_eager_compiled": r.ratio("compiled"),
                            "samples": r.samples} for r in rows]}
        if scaling:
            out["scaling"] = scaling
        Path(args.json).write_text(json.dumps(out, indent=2, default=float) + "\n")
        print(f"\nwrote {args.json}")
    if check_failures:
        print("\n--check: the implementations disagree:\n  " + "\n  ".join(check_failures),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
