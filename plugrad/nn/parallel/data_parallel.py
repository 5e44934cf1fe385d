"""``nn.DataParallel``: the single-process multi-GPU wrapper older programs put around a
model (often unconditionally, or when ``cuda.device_count() > 1``).

plugrad runs the wrapped module on its own device: the results are those of the module
itself, as PyTorch's are where it has no GPUs to split the batch over. ``.module`` and the
``module.``-prefixed state dict keys are PyTorch's, so checkpoints move between the two.
For real data parallelism use ``DistributedDataParallel`` (``docs/distributed.md``).
"""
from __future__ import annotations

from plugrad.nn.modules.module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):
    """The functional form: ``module(*inputs, **module_kwargs)`` on the module's device."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))
