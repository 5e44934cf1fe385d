"""What the regression cases (``test_fixed*.py``) share: the same values as a plugrad and a
torch tensor, and a tensor's values on the host."""
from __future__ import annotations

import numpy as np

import plugrad


def host(t):
    return np.asarray(t.detach().cpu().numpy())


def pair(device, values, dtype="float64", requires_grad=False):
    import torch  # the callers skip without it
    p = plugrad.tensor(values, dtype=getattr(plugrad, dtype), device=device,
                       requires_grad=requires_grad)
    t = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    return p, t
