"""Shared test helpers: host copies, device tensors, and the PyTorch yardstick."""
import numpy as np

import plugrad


def host(t):
    """A float64 NumPy copy of a plugrad tensor on any device."""
    return np.asarray(t.detach()).astype(np.float64)


def on(a, device, dtype=plugrad.float64, requires_grad=False):
    return plugrad.tensor(np.asarray(a), dtype=dtype, device=device, requires_grad=requires_grad)


def copy_params_to_torch(ours, theirs):
    """Copy our module's parameters into a torch module with the same names."""
    import torch
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            p.copy_(torch.from_numpy(host(ours.get_parameter(name))).to(p.dtype))
