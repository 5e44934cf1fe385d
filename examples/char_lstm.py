"""A character-level LSTM language model trained on Hamlet.

An embedding, an ``nn.LSTM`` (``--num-layers`` layers of ``--hidden`` units, dropout between
layers) and a linear head predict the next character. It trains with Adam and gradient
clipping on random ``--seq-len`` windows of the 90 % train split of
``examples/data/corpus.txt`` and reports train and validation loss (the mean over a few
fixed batches of the 10 % validation split) every ``--eval-interval`` steps.

Afterwards it saves the model (``--ckpt``), reloads it into a fresh model, checks that the
reloaded model gives the same validation loss, and prints a sample generated one character
at a time by the reloaded model, carrying the LSTM's ``(h, c)`` state from step to step.

    python examples/char_lstm.py                   # default run: val loss 4.19 -> 1.69
                                                   # in ~30 s (up to a minute on a busy
                                                   # 2-core machine)
    python examples/char_lstm.py --device ref --steps 2 --hidden 8 --embed 4 \\
        --seq-len 6 --batch-size 2 --eval-batches 1 --sample-len 10

``main(argv)`` returns the measured numbers (``initial_val_loss``, ``final_val_loss``,
``reloaded_val_loss``, ``sample``, ...) for the tests.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for ``_common``
from _common import (DATA_DIR, add_common_args, blas_threads,  # noqa: E402
                     limit_blas_threads_early, log, progress, resolve_device)

if __name__ == "__main__" and not any(a.startswith("--blas-threads") for a in sys.argv):
    limit_blas_threads_early(1)  # before NumPy loads; see _common.blas_threads

import plugrad as torch  # noqa: E402
import plugrad.nn as nn  # noqa: E402
import plugrad.nn.functional as F  # noqa: E402

DEFAULT_DATA = str(DATA_DIR / "corpus.txt")
DEFAULT_CKPT = str(Path(__file__).resolve().parent / "out" / "char_lstm.safetensors")


class CharData:
    """The corpus as character ids, split 90/10 into train and validation tensors."""

    def __init__(self, path: str, device, val_fraction: float = 0.1):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        self.chars = sorted(set(text))
        self.stoi = {c: i for i, c in enumerate(self.chars)}
        ids = [self.stoi[c] for c in text]
        n_train = int(len(ids) * (1.0 - val_fraction))
        self.train = torch.tensor(ids[:n_train], dtype=torch.long, device=device)
        self.val = torch.tensor(ids[n_train:], dtype=torch.long, device=device)
        self.device = device

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, s: str) -> list[int]:
        unknown = sorted(set(s) - set(self.stoi))
        if unknown:
            raise SystemExit(f"characters {unknown!r} do not occur in the corpus")
        return [self.stoi[c] for c in s]

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)

    def batch(self, split: str, batch_size: int, seq_len: int, generator=None):
        """``batch_size`` random windows, batch first: inputs ``x``, next characters ``y``."""
        data = self.train if split == "train" else self.val
        starts = torch.randint(0, data.shape[0] - seq_len - 1, (batch_size,),
                               device=self.device, generator=generator)
        idx = starts.unsqueeze(1) + torch.arange(seq_len, device=self.device)
        return data[idx], data[idx + 1]


class CharLSTM(nn.Module):
    def __init__(self, vocab_size: int, embed: int, hidden: int, num_layers: int,
                 dropout: float = 0.0):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=num_layers, batch_first=True,
                            dropout=dropout if num_layers > 1 else 0.0)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, idx, targets=None, state=None):
        """Logits ``(B, T, vocab)``, the loss (if ``targets``) and the final ``(h, c)``."""
        out, state = self.lstm(self.embed(idx), state)
        logits = self.head(out)
        if targets is None:
            return logits, None, state
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return logits, loss, state

    @torch.no_grad()
    def generate(self, prompt, n_new: int, temperature: float = 1.0):
        """Continue ``prompt`` (shape ``(1, T)``) by ``n_new`` sampled characters, feeding
        one character at a time and carrying the LSTM state."""
        logits, _, state = self(prompt)
        out = []
        for _ in range(n_new):
            probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1)
            out.append(int(nxt[0, 0]))
            logits, _, state = self(nxt, state=state)
        return out


@torch.no_grad()
def evaluate(model, batches) -> float:
    """Mean loss over fixed ``(x, y)`` batches, in eval mode (dropout off)."""
    was_training = model.training
    model.eval()
    total = sum(float(model(x, y)[1]) for x, y in batches)
    model.train(was_training)
    return total / len(batches)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(p, seed=1337)          # --device, --seed, --no-progress
    p.add_argument("--data", default=DEFAULT_DATA, help="text file to train on")
    p.add_argument("--steps", type=int, default=500, help="optimizer steps (default %(default)s)")
    p.add_argument("--eval-interval", type=int, default=50,
                   help="report train/val loss every N steps (default %(default)s)")
    p.add_argument("--eval-batches", type=int, default=8,
                   help="fixed validation batches the val loss is averaged over "
                        "(default %(default)s)")
    p.add_argument("--batch-size", type=int, default=32, help="(default %(default)s)")
    p.add_argument("--seq-len", type=int, default=64,
                   help="characters per training window (default %(default)s)")
    p.add_argument("--embed", type=int, default=32, help="embedding size (default %(default)s)")
    p.add_argument("--hidden", type=int, default=128, help="LSTM units (default %(default)s)")
    p.add_argument("--num-layers", type=int, default=1, help="(default %(default)s)")
    p.add_argument("--dropout", type=float, default=0.0,
                   help="dropout between LSTM layers (default %(default)s)")
    p.add_argument("--lr", type=float, default=1e-2, help="Adam's learning rate "
                   "(default %(default)s)")
    p.add_argument("--grad-clip", type=float, default=1.0,
                   help="max gradient norm, 0: off (default %(default)s)")
    p.add_argument("--ckpt", default=DEFAULT_CKPT,
                   help="checkpoint path (default examples/out/char_lstm.safetensors)")
    p.add_argument("--sample-len", type=int, default=300,
                   help="characters to generate (default %(default)s)")
    p.add_argument("--temperature", type=float, default=0.8, help="(default %(default)s)")
    p.add_argument("--prompt", default="\n", help="text the sample continues (default: a newline)")
    p.add_argument("--blas-threads", type=int, default=1,
                   help="BLAS threads while training (default 1: the products are small and "
                        "extra threads slow them down, badly on a busy machine; 0: leave as is)")
    p.add_argument("--quiet", action="store_true", help="print nothing")
    return p


def main(argv=None) -> dict:
    """Train, evaluate, checkpoint, reload, sample; print progress and return the numbers.

    Keys: ``device``, ``vocab_size``, ``n_params``, ``steps``, ``initial_val_loss``,
    ``final_val_loss``, ``reloaded_val_loss``, ``val_loss_decrease_pct``, ``history``
    (``(step, mean train loss since the last report, val loss)`` tuples), ``train_time_s``,
    ``chars_per_s``, ``ckpt``, ``sample``.
    """
    args = build_parser().parse_args(argv)
    with blas_threads(args.blas_threads or None):
        return _run(args)


def _run(args) -> dict:
    device = resolve_device(args.device)
    say = (lambda *_a: None) if args.quiet else log
    torch.manual_seed(args.seed)

    data = CharData(args.data, device)
    config = dict(vocab_size=data.vocab_size, embed=args.embed, hidden=args.hidden,
                  num_layers=args.num_layers, dropout=args.dropout)
    model = CharLSTM(**config).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    say(f"char_lstm: device {device}, vocab {data.vocab_size} (ln = "
        f"{math.log(data.vocab_size):.3f}), {data.train.shape[0]:,} train / "
        f"{data.val.shape[0]:,} val chars, {n_params:,} parameters")

    # fixed validation batches from their own generator: every report (and the reloaded
    # model) is measured on the same text
    val_gen = torch.Generator().manual_seed(args.seed + 1)
    val_batches = [data.batch("val", args.batch_size, args.seq_len, generator=val_gen)
                   for _ in range(args.eval_batches)]
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    initial_val = evaluate(model, val_batches)
    history = [(0, None, initial_val)]
    say(f"step {0:5d}  val loss {initial_val:.4f}")
    model.train()
    bar = progress(range(1, args.steps + 1), total=args.steps, desc="training",
                   enabled=not (args.no_progress or args.quiet))
    t0 = time.perf_counter()
    window = []
    for step in bar:
        x, y = data.batch("train", args.batch_size, args.seq_len)
        _, loss, _ = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if args.grad_clip > 0:
            nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        optimizer.step()
        window.append(float(loss))
        bar.set_postfix_str(f"loss {window[-1]:.3f}")
        if step % args.eval_interval == 0 or step == args.steps:
            val = evaluate(model, val_batches)
            history.append((step, sum(window) / len(window), val))
            say(f"step {step:5d}  train loss {history[-1][1]:.4f}  val loss {val:.4f}")
            window = []
    bar.close()
    train_time = time.perf_counter() - t0
    final_val = history[-1][2]
    chars = args.steps * args.batch_size * args.seq_len
    drop = (initial_val - final_val) / initial_val * 100.0
    say(f"trained {args.steps} steps in {train_time:.1f} s ({chars / train_time:,.0f} chars/s); "
        f"val loss {initial_val:.4f} -> {final_val:.4f} ({drop:.1f}% lower)")

    # ---- checkpoint: save, reload into a fresh model, check the val loss is the same
    os.makedirs(os.path.dirname(os.path.abspath(args.ckpt)), exist_ok=True)
    torch.save({"model": model.state_dict(), "config": config,
                "chars": "".join(data.chars), "step": args.steps}, args.ckpt)
    ckpt = torch.load(args.ckpt, map_location=str(device))
    fresh = CharLSTM(**ckpt["config"]).to(device)
    fresh.load_state_dict(ckpt["model"])
    reloaded_val = evaluate(fresh, val_batches)
    say(f"saved {args.ckpt} ({os.path.getsize(args.ckpt):,} bytes); reloaded model's val "
        f"loss {reloaded_val:.4f} ({'same' if reloaded_val == final_val else 'DIFFERENT'})")
    if reloaded_val != final_val:
        raise RuntimeError(f"reloaded model's val loss {reloaded_val!r} differs from the "
                           f"trained model's {final_val!r}")

    # ---- sample from the reloaded model
    fresh.eval()
    prompt = torch.tensor([data.encode(args.prompt)], dtype=torch.long, device=device)
    sample = data.decode(fresh.generate(prompt, args.sample_len, args.temperature))
    say(f"--- sample from the reloaded model ({args.sample_len} chars, temperature "
        f"{args.temperature}) ---")
    say(args.prompt + sample)
    say("---")
    return {"device": str(device), "vocab_size": data.vocab_size, "n_params": n_params,
            "steps": args.steps, "initial_val_loss": initial_val, "final_val_loss": final_val,
            "reloaded_val_loss": reloaded_val, "val_loss_decrease_pct": drop,
            "history": history, "train_time_s": train_time, "chars_per_s": chars / train_time,
            "ckpt": args.ckpt, "sample": sample}


if __name__ == "__main__":
    main()
