"""Training steps of small models: an MLP, the digits CNN, a transformer encoder block.

Each ``time_step`` is forward, loss, ``backward()`` and an optimiser step. Sizes are labels:
``tiny`` runs everywhere (``ref`` included), the larger ones on fast backends only.
"""
from pathlib import Path

import numpy as np
import plugrad

from ._common import DEVICES, require, require_nn, sync

DIGITS = Path(__file__).resolve().parents[1] / "examples" / "data" / "digits.npz"


def _skip_ref(device, size, allowed=("tiny",)):
    require(device)
    if device == "ref" and size not in allowed:
        raise NotImplementedError("too large for the pure-Python ref backend")


class MLPStep:
    """Linear-ReLU-Linear-ReLU-Linear, cross-entropy, SGD."""
    params = (DEVICES, ["tiny", "mnist"])
    param_names = ["device", "size"]
    SHAPES = {"tiny": (8, (16, 32, 32, 4)), "mnist": (128, (784, 512, 512, 10))}

    def setup(self, device, size):
        _skip_ref(device, size)
        nn = require_nn("Linear", "ReLU", "Sequential")
        batch, dims = self.SHAPES[size]
        plugrad.manual_seed(0)
        layers = []
        for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
            layers.append(nn.Linear(a, b))
            if i < len(dims) - 2:
                layers.append(nn.ReLU())
        self.model = nn.Sequential(*layers).to(device)
        self.opt = plugrad.optim.SGD(self.model.parameters(), lr=0.01)
        self.x = plugrad.randn(batch, dims[0], device=device)
        self.y = plugrad.randint(0, dims[-1], (batch,), device=device)

    def _step(self):
        self.opt.zero_grad()
        loss = plugrad.nn.functional.cross_entropy(self.model(self.x), self.y)
        loss.backward()
        self.opt.step()
        return loss

    def time_step(self, device, size):
        self._step()
        sync(device)

    def peakmem_step(self, device, size):
        self._step()


class DigitsCNNStep:
    """The digits CNN: 8x8 images, Conv2d(1, 8, 3, padding=1)-ReLU-MaxPool2d(2)-Linear(128, 10).

    Batches come from examples/data/digits.npz (random data where it is missing).
    """
    params = (DEVICES, [8, 64])
    param_names = ["device", "batch"]

    def setup(self, device, batch):
        require(device)
        if device == "ref" and batch > 8:
            raise NotImplementedError("too large for the pure-Python ref backend")
        nn = require_nn("Conv2d", "ReLU", "MaxPool2d", "Flatten", "Linear", "Sequential")
        if DIGITS.exists():
            with np.load(DIGITS) as f:
                images = f["images"][:batch].astype(np.float32) / 16.0
                labels = f["labels"][:batch].astype(np.int64)
        else:
            rng = np.random.default_rng(0)
            images = rng.random((batch, 8, 8), dtype=np.float32)
            labels = rng.integers(0, 10, batch)
        plugrad.manual_seed(0)
        self.model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                   nn.Flatten(), nn.Linear(8 * 4 * 4, 10)).to(device)
        self.opt = plugrad.optim.SGD(self.model.parameters(), lr=0.05)
        self.x = plugrad.tensor(images[:, None], device=device)
        self.y = plugrad.tensor(labels, device=device)

    def time_step(self, device, batch):
        self.opt.zero_grad()
        loss = plugrad.nn.functional.cross_entropy(self.model(self.x), self.y)
        loss.backward()
        self.opt.step()
        sync(device)


class _ManualBlock:
    """Pre-norm-free attention + MLP block from primitives, for plugrads without
    nn.TransformerEncoderLayer."""

    def __init__(self, d_model, heads, d_ff, device):
        self.h, self.dh = heads, d_model // heads
        s = d_model ** -0.5
        self.params = [
            (plugrad.randn(d_model, 3 * d_model, device=device) * s).requires_grad_(),
            (plugrad.randn(d_model, d_model, device=device) * s).requires_grad_(),
            (plugrad.randn(d_model, d_ff, device=device) * s).requires_grad_(),
            (plugrad.randn(d_ff, d_model, device=device) * d_ff ** -0.5).requires_grad_(),
        ]

    def parameters(self):
        return self.params

    def __call__(self, x):
        w_in, w_out, w1, w2 = self.params
        b, t, d = x.shape
        q, k, v = (x @ w_in).reshape(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        att = ((q @ k.transpose(-2, -1)) * self.dh ** -0.5).softmax(dim=-1)
        x = x + ((att @ v).permute(0, 2, 1, 3).reshape(b, t, d) @ w_out)
        return x + (x @ w1).relu() @ w2


class TransformerBlockStep:
    """One nn.TransformerEncoderLayer (batch_first, no dropout): forward, MSE to a target,
    backward, Adam step."""
    params = (DEVICES, ["tiny", "small"])
    param_names = ["device", "size"]
    # batch, seq, d_model, heads, d_ff
    SHAPES = {"tiny": (2, 4, 8, 2, 16), "small": (16, 64, 128, 4, 512)}

    def setup(self, device, size):
        _skip_ref(device, size)
        try:
            plugrad.optim.Adam
        except AttributeError as e:
            raise NotImplementedError(f"plugrad.optim.Adam unavailable: {e}")
        b, t, d, h, ff = self.SHAPES[size]
        plugrad.manual_seed(0)
        try:
            nn = require_nn("TransformerEncoderLayer")
            self.model = nn.TransformerEncoderLayer(d, h, dim_feedforward=ff, dropout=0.0,
                                                    batch_first=True).to(device)
        except NotImplementedError:
            self.model = _ManualBlock(d, h, ff, device)
        self.opt = plugrad.optim.Adam(self.model.parameters(), lr=1e-3)
        self.x = plugrad.randn(b, t, d, device=device)
        self.target = plugrad.randn(b, t, d, device=device)

    def time_step(self, device, size):
        self.opt.zero_grad()
        loss = ((self.model(self.x) - self.target) ** 2).mean()
        loss.backward()
        self.opt.step()
        sync(device)
