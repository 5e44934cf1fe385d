"""Language-model and data-loading steps (the workloads of ``compare.py``'s rows
``gpt_block``, ``lstm_lm``, ``loader_epoch`` and its ``--scaling`` table).

``time_step`` is one forward + backward (the epoch: a whole DataLoader-fed epoch with SGD);
``peakmem_step`` its peak memory. Sizes are labels: ``tiny`` runs everywhere (``ref``
included), the larger ones on fast backends only.
"""
import plugrad

from . import compare_lm
from . import numpy_reference_lm as nplm
from ._common import DEVICES, require, sync


def _skip_ref(device, size):
    require(device)
    if device == "ref" and size != "tiny":
        raise NotImplementedError("too large for the pure-Python ref backend")


class GPTBlockStep:
    """Embedding + positional, pre-LN causal attention block, ReLU MLP, LM head, CE."""
    params = (DEVICES, ["tiny", "b16_t64_d128", "b8_t256_d256"])
    param_names = ["device", "size"]
    SIZES = {"tiny": dict(batch=2, seq=8, d_model=16, heads=2, vocab=65),
             "b16_t64_d128": dict(batch=16, seq=64, d_model=128, heads=4, vocab=65),
             "b8_t256_d256": dict(batch=8, seq=256, d_model=256, heads=8, vocab=65)}

    def setup(self, device, size):
        _skip_ref(device, size)
        plugrad.manual_seed(0)
        self.step = compare_lm.fw_gpt(plugrad, device, nplm.make_gpt(**self.SIZES[size]).state)

    def time_step(self, device, size):
        self.step()
        sync(device)

    def peakmem_step(self, device, size):
        self.step()


class LSTMLanguageModelStep:
    """nn.Embedding, one-layer nn.LSTM (batch_first), nn.Linear head, CE."""
    params = (DEVICES, ["tiny", "b32_t32_h128"])
    param_names = ["device", "size"]
    SIZES = {"tiny": dict(batch=2, seq=4, embed=8, hidden=8, vocab=65),
             "b32_t32_h128": dict(batch=32, seq=32, embed=64, hidden=128, vocab=65)}

    def setup(self, device, size):
        _skip_ref(device, size)
        plugrad.manual_seed(0)
        self.step = compare_lm.fw_lstm(plugrad, device, nplm.make_lstm(**self.SIZES[size]).state)

    def time_step(self, device, size):
        self.step()
        sync(device)

    def peakmem_step(self, device, size):
        self.step()


class LoaderEpoch:
    """DataLoader(TensorDataset, shuffle=True) feeding an MLP with SGD, one epoch."""
    params = (DEVICES, ["tiny", "n2048_b64"])
    param_names = ["device", "size"]
    SIZES = {"tiny": dict(samples=64, features=16, hidden=8, classes=4, batch=16),
             "n2048_b64": dict(samples=2048, features=784, hidden=128, classes=10, batch=64)}

    def setup(self, device, size):
        _skip_ref(device, size)
        plugrad.manual_seed(0)
        self.step = compare_lm.fw_loader(plugrad, device,
                                         nplm.make_loader_epoch(**self.SIZES[size]).state)

    def time_epoch(self, device, size):
        self.step()
        sync(device)
