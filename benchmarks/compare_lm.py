"""The language-model and data-loading workloads of ``compare.py``, and its scaling table.

``fw_gpt``, ``fw_lstm`` and ``fw_loader`` build the plugrad or PyTorch version of the
floors in :mod:`numpy_reference_lm` the way user code writes them: the GPT block with
``F.embedding``, ``F.layer_norm``, ``F.scaled_dot_product_attention(is_causal=True)`` and
``x @ W``; the LSTM with ``nn.Embedding``/``nn.LSTM``/``nn.Linear``; the epoch with
``DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)`` and ``optim.SGD``.

:func:`scaling_rows` times the GPT step at several widths and sequence lengths and the
MLP step at several batch sizes (``compare.py --scaling``), and measures each one's peak
memory in a fresh process per framework (:func:`peak_memory`).

Not an asv benchmark: no asv prefixes here.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:  # also as asv's benchmarks.compare_lm
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import numpy_reference as npref  # noqa: E402
import numpy_reference_lm as nplm  # noqa: E402

HERE = Path(__file__).resolve().parent

GPT_ORDER = ("wte", "wpe", "ln1_w", "ln1_b", "w_qkv", "b_qkv", "w_o", "b_o", "ln2_w",
             "ln2_b", "w_1", "b_1", "w_2", "b_2", "lnf_w", "lnf_b", "w_lm")


def _leaf(lib, arr, device):
    return lib.tensor(np.array(arr, copy=True), device=device, requires_grad=True)


def fw_gpt(lib, device, st):
    F = lib.nn.functional
    p = {name: _leaf(lib, st["params"][name], device) for name in GPT_ORDER}
    tok = lib.tensor(st["tok"], dtype=lib.int64, device=device)
    tgt = lib.tensor(st["tgt"].reshape(-1), dtype=lib.int64, device=device)
    b, t = st["tok"].shape
    d = p["wte"].shape[1]
    vocab = p["wte"].shape[0]
    h = st["heads"]
    pos = lib.arange(t, device=device)

    def step():
        for prm in p.values():
            prm.grad = None
        x = F.embedding(tok, p["wte"]) + F.embedding(pos, p["wpe"])
        y = F.layer_norm(x, (d,), p["ln1_w"], p["ln1_b"])
        q, k, v = (y @ p["w_qkv"] + p["b_qkv"]).split(d, dim=-1)
        q, k, v = (z.view(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + y.transpose(1, 2).reshape(b, t, d) @ p["w_o"] + p["b_o"]
        y = F.layer_norm(x, (d,), p["ln2_w"], p["ln2_b"])
        x = x + F.relu(y @ p["w_1"] + p["b_1"]) @ p["w_2"] + p["b_2"]
        logits = F.layer_norm(x, (d,), p["lnf_w"], p["lnf_b"]) @ p["w_lm"]
        loss = F.cross_entropy(logits.view(-1, vocab), tgt)
        loss.backward()
        return loss
    step.params = p
    return step


class _LSTMLM:
    def __init__(self, lib, st, device):
        nn = lib.nn
        prm = st["params"]
        vocab, embed = prm["emb"].shape
        hidden = prm["weight_hh_l0"].shape[1]
        self.emb = nn.Embedding(vocab, embed).to(device)
        self.lstm = nn.LSTM(embed, hidden, batch_first=True).to(device)
        self.head = nn.Linear(hidden, vocab).to(device)
        with lib.no_grad():
            for module, names in ((self.emb, {"weight": "emb"}),
                                  (self.lstm, {n: n for n in ("weight_ih_l0", "weight_hh_l0",
                                                              "bias_ih_l0", "bias_hh_l0")}),
                                  (self.head, {"weight": "head_w", "bias": "head_b"})):
                for attr, key in names.items():
                    getattr(module, attr).copy_(lib.tensor(np.array(prm[key]), device=device))
        self.params = {"emb": self.emb.weight, "head_w": self.head.weight,
                       "head_b": self.head.bias}
        self.params.update(dict(self.lstm.named_parameters()))


def fw_lstm(lib, device, st):
    F = lib.nn.functional
    m = _LSTMLM(lib, st, device)
    tok = lib.tensor(st["tok"], dtype=lib.int64, device=device)
    tgt = lib.tensor(st["tgt"].reshape(-1), dtype=lib.int64, device=device)
    vocab = st["params"]["emb"].shape[0]

    def step():
        for prm in m.params.values():
            prm.grad = None
        out, _ = m.lstm(m.emb(tok))
        loss = F.cross_entropy(m.head(out).reshape(-1, vocab), tgt)
        loss.backward()
        return loss
    step.params = m.params
    return step


def fw_loader(lib, device, st):
    nn, F = lib.nn, lib.nn.functional
    (w1, b1), (w2, b2) = st["params"]
    l1, l2 = nn.Linear(w1.shape[1], w1.shape[0]), nn.Linear(w2.shape[1], w2.shape[0])
    with lib.no_grad():
        for prm, arr in ((l1.weight, w1), (l1.bias, b1), (l2.weight, w2), (l2.bias, b2)):
            prm.copy_(lib.tensor(np.array(arr)))
    model = nn.Sequential(l1, nn.ReLU(), l2).to(device)
    data = lib.utils.data
    loader = data.DataLoader(data.TensorDataset(lib.tensor(st["x"], device=device),
                                                lib.tensor(st["y"], dtype=lib.int64,
                                                           device=device)),
                             batch_size=st["batch"], shuffle=True)
    opt = lib.optim.SGD(model.parameters(), lr=st["lr"])

    def step():
        total, count = 0.0, 0
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item()
            count += 1
        return total / count
    return step


# ============================================================================ scaling
GPT_SIZES = [(d, t) for t in (64, 256) for d in (64, 128, 256, 512)]
MLP_BATCHES = (1, 32, 512)
SCALING_GPT_BATCH = 8


def gpt_config(d, t):
    return dict(batch=SCALING_GPT_BATCH, seq=t, d_model=d, heads=max(1, d // 32))


def build(kind, cfg, framework, device="cpu"):
    """``(step, state)`` of one scaling-table workload in ``framework``."""
    np_step = (nplm.make_gpt(**cfg) if kind == "gpt" else
               npref.make_mlp(cfg["batch"], (784, 512, 512, 10)))
    if framework == "numpy":
        return np_step
    if framework == "torch":
        import torch as lib
    else:
        import plugrad as lib
    if kind == "gpt":
        return fw_gpt(lib, device, np_step.state)
    from compare import fw_mlp
    return fw_mlp(lib, device, np_step.state)


def peak_memory(kind, cfg, framework, device="cpu", steps=2):
    """MiB of the peak RSS a fresh process reaches while building the workload (weights,
    data) and running ``steps`` steps, above its RSS once the libraries are imported. The
    peak is reset after the imports (Linux's ``/proc/self/clear_refs``), so what importing
    touched does not count."""
    lib = {"torch": "torch", "plugrad": "plugrad", "numpy": "numpy"}[framework]
    code = (f"import sys, json; sys.path.insert(0, {str(HERE)!r})\n"
            f"import {lib}, compare_lm, compare\n"
            "def status(key):\n"
            "    for line in open('/proc/self/status'):\n"
            "        if line.startswith(key): return int(line.split()[1])\n"
            "open('/proc/self/clear_refs', 'w').write('5')\n"
            "before = status('VmRSS:')\n"
            f"step = compare_lm.build({kind!r}, {cfg!r}, {framework!r}, {device!r})\n"
            f"for _ in range({steps}): step()\n"
            "print(json.dumps({'before_kib': before, 'peak_kib': status('VmHWM:')}))\n")
    # a fixed mmap threshold: glibc's adaptive one would keep freed arrays in the heap, so the
    # RSS after the first step would already hold the working set
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=900, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return max(0.0, (out["peak_kib"] - out["before_kib"]) / 1024.0)


def scaling_cases():
    """``(label, kind, cfg)`` of every size in the scaling table."""
    cases = [(f"gpt d{d} t{t}", "gpt", gpt_config(d, t)) for d, t in GPT_SIZES]
    cases += [(f"mlp batch {b}", "mlp", {"batch": b}) for b in MLP_BATCHES]
    return cases


def run_scaling(frameworks, measure, memory: bool = True, log=print):
    """Time (``measure(fns) -> {framework: seconds}``) and, with ``memory``, the peak
    working memory of each scaling case in each framework. Returns one dict per case."""
    import plugrad
    rows = []
    for label, kind, cfg in scaling_cases():
        fns = {}
        for f in frameworks:
            if f == "plugrad":
                plugrad.manual_seed(0)
            fns[f] = build(kind, cfg, f)
        times = measure({f: fns[f] for f in frameworks})
        del fns
        mem = {f: peak_memory(kind, cfg, f) for f in frameworks} if memory else {}
        rows.append({"name": label, "kind": kind, "config": cfg, "times": times,
                     "peak_mib": mem})
        log(f"scaling {label}: " + ", ".join(f"{f} {times[f] * 1e3:.3g} ms" for f in times))
    return rows


def render_scaling(rows, frameworks):
    """The scaling table as text (ratios within this run)."""
    has_torch = "torch" in frameworks
    head = ["size", "plugrad", "numpy"] + (["torch", "plugrad/torch"] if has_torch else [])
    head += ["plugrad/numpy", "peak MiB plugrad"] + (["peak MiB torch", "mem plugrad/torch"]
                                                      if has_torch else [])
    table = []
    for r in rows:
        t, m = r["times"], r["peak_mib"]
        cells = [r["name"], f"{t['plugrad'] * 1e3:.3g} ms", f"{t['numpy'] * 1e3:.3g} ms"]
        if has_torch:
            cells += [f"{t['torch'] * 1e3:.3g} ms", f"{t['plugrad'] / t['torch']:.2f}x"]
        cells += [f"{t['plugrad'] / t['numpy']:.2f}x", f"{m['plugrad']:.0f}" if m else "-"]
        if has_torch:
            cells += [f"{m['torch']:.0f}" if m else "-",
                      f"{m['plugrad'] / m['torch']:.2f}x" if m and m["torch"] else "-"]
        table.append(cells)
    widths = [max(len(c) for c in col) for col in zip(head, *table)]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths)))
    lines = [f"# scaling: GPT step (batch {SCALING_GPT_BATCH}, heads d/32, vocab 65, fwd+bwd) "
             "and MLP 784-512-512-10 SGD step; peak MiB: a fresh process's peak RSS while "
             "building and running 2 steps, above its RSS after the imports",
             fmt(head), fmt(["-" * w for w in widths])]
    return "\n".join(lines + [fmt(c) for c in table])
