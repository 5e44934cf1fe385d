"""Run one ``nn.functional`` call in plugrad (on a device) and in PyTorch on the same
float64 inputs; compare the outputs and the gradients of every input."""
import numpy as np

import plugrad

from .helpers import host


def compare(torch, fn_ours, fn_torch, arrays, device, *, grads=True, atol=1e-10, rtol=1e-7,
            dtype="float64"):
    """``fn_*(*tensors)`` on both sides; returns the two outputs (first of a tuple)."""
    tdt = getattr(torch, dtype)
    grads = grads and dtype.startswith("float")
    xs = [plugrad.tensor(np.asarray(a), dtype=getattr(plugrad, dtype), device=device,
                         requires_grad=grads) for a in arrays]
    ts = [torch.tensor(np.asarray(a), dtype=tdt, requires_grad=grads) for a in arrays]
    out, tout = fn_ours(*xs), fn_torch(*ts)
    if isinstance(out, tuple):
        for o, t in zip(out[1:], tout[1:]):  # indices
            np.testing.assert_array_equal(np.asarray(o.cpu()), t.numpy())
        out, tout = out[0], tout[0]
    assert tuple(out.shape) == tuple(tout.shape)
    np.testing.assert_allclose(host(out), tout.detach().double().numpy(), atol=atol, rtol=rtol)
    if grads:
        g = np.random.default_rng(0).standard_normal(tuple(out.shape))
        out.backward(plugrad.tensor(g, dtype=out.dtype, device=device))
        tout.backward(torch.tensor(g, dtype=tdt))
        for i, (x, t) in enumerate(zip(xs, ts)):
            np.testing.assert_allclose(host(x.grad), t.grad.double().numpy(), atol=atol,
                                       rtol=rtol, err_msg=f"gradient of input {i}")
    return out, tout
