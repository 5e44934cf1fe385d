"""Run one function on plugrad (a device) and on real PyTorch with the same float64 inputs;
compare the outputs and the gradients of every input that takes one."""
import numpy as np

import plugrad

from .helpers import host


def _mk(a, device, grad):
    if isinstance(a, np.ndarray):
        dt = plugrad.float64 if a.dtype.kind == "f" else None
        return plugrad.tensor(a, dtype=dt, device=device, requires_grad=grad and dt is not None)
    return a


def _mk_torch(torch, a, grad):
    if isinstance(a, np.ndarray):
        t = torch.from_numpy(a.copy())
        if a.dtype.kind == "f":
            t = t.double().requires_grad_(grad)
        return t
    return a


def compare(ours, theirs, args, device, grads=None, kwargs=None, atol=1e-10, rtol=1e-7,
            seed=0):
    """``ours(*args)`` on ``device`` against ``theirs(*args)`` in torch: values, then the
    gradients of a random weighting of the output with respect to the float inputs listed
    in ``grads`` (default: every float input)."""
    import torch
    kwargs = kwargs or {}
    floats = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    grads = floats if grads is None else grads
    xs = [_mk(a, device, i in grads) for i, a in enumerate(args)]
    ts = [_mk_torch(torch, a, i in grads) for i, a in enumerate(args)]
    out, tout = ours(*xs, **kwargs), theirs(*ts, **kwargs)
    np.testing.assert_allclose(host(out), tout.detach().double().numpy(), atol=atol, rtol=rtol)
    assert tuple(out.shape) == tuple(tout.shape)
    if not grads or not tout.requires_grad:
        return out
    w = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    (out * plugrad.tensor(w, dtype=out.dtype, device=device)).sum().backward()
    (tout * torch.from_numpy(w).to(tout.dtype)).sum().backward()
    for i in grads:
        tg = ts[i].grad
        g = xs[i].grad
        if tg is None:
            assert g is None or not np.any(host(g)), f"input {i}: torch has no gradient"
            continue
        assert g is not None, f"input {i}: no gradient"
        np.testing.assert_allclose(host(g), tg.numpy(), atol=atol, rtol=rtol,
                                   err_msg=f"gradient of input {i}")
    return out
