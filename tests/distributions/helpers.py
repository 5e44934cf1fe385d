"""Build one distribution in plugrad and in torch from the same float64 parameters."""
import numpy as np

import plugrad

RNG = np.random.default_rng(7)


def real(*shape):
    return RNG.standard_normal(shape)


def pos(*shape, low=0.5, high=3.0):
    return RNG.uniform(low, high, shape)


def unit(*shape):
    return RNG.uniform(0.05, 0.95, shape)


def simplex(*shape):
    x = RNG.uniform(0.2, 1.0, shape)
    return x / x.sum(-1, keepdims=True)


def spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def host(t):
    return np.asarray(t.detach().cpu().numpy()) if hasattr(t, "detach") else np.asarray(t)


def to_plugrad(arrays, device):
    out = {}
    for k, v in arrays.items():
        v = np.asarray(v)
        if v.dtype.kind == "f":
            out[k] = plugrad.tensor(v, dtype=plugrad.float64, device=device, requires_grad=True)
        else:
            out[k] = plugrad.tensor(v, device=device)
    return out


def to_torch(arrays):
    import torch
    out = {}
    for k, v in arrays.items():
        v = np.asarray(v)
        if v.dtype.kind == "f":
            out[k] = torch.tensor(v, dtype=torch.float64, requires_grad=True)
        else:
            out[k] = torch.tensor(v)
    return out


def value_pair(value, device):
    import torch
    value = np.asarray(value)
    if value.dtype.kind == "f":
        return (plugrad.tensor(value, dtype=plugrad.float64, device=device),
                torch.tensor(value, dtype=torch.float64))
    return plugrad.tensor(value, device=device), torch.tensor(value)


def close(ours, theirs, rtol=1e-9, atol=1e-10, msg=""):
    np.testing.assert_allclose(host(ours), theirs.detach().numpy(), rtol=rtol, atol=atol,
                               err_msg=msg)
