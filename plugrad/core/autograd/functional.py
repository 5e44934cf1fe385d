"""``backward`` and ``grad``: argument checks in front of the engine."""
from __future__ import annotations

import numpy as np

from plugrad.core.autograd.engine import run_backward
from plugrad.core.tensor import Tensor, _wrap


def _filled(like, value):
    """A tensor of ``like``'s shape, dtype and device filled with ``value``."""
    k = like._k
    return _wrap(k.full(like._data.shape, value, like.dtype.name, like.device.index),
                 like.dtype, like.device, k)


def _root_grads(outputs, grad_outputs, op):
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out.numel() != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs: {op} was called on "
                    f"a tensor of shape {list(out.shape)}; pass gradient= (a tensor of that "
                    f"shape) or reduce the output to a scalar first, e.g. with .sum()")
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {out.dtype}")
            g = _filled(out, 1)
        else:
            if not isinstance(g, Tensor):
                arr = np.asarray(g, dtype=out.dtype.to_numpy())
                g = _wrap(out._k.from_numpy(arr, out.dtype.name, out.device.index), out.dtype,
                          out.device, out._k)
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{list(g.shape)} and output[{i}] has a shape of "
                                   f"{list(out.shape)}.")
            if g.device is not out.device:
                raise RuntimeError(f"{op}: gradient is on {g.device} but the output is on "
                                   f"{out.device}")
        grads.append(g)
    return grads


def _as_tuple(x):
    if x is None:
        return None
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _prepare(op, outputs, grad_outputs, retain_graph, create_graph):
    """The checks ``backward`` and ``grad`` share: outputs in the graph, seed gradients."""
    outputs = _as_tuple(outputs)
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    for i, t in enumerate(outputs):
        if not t._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               f"have a grad_fn")
    retain = create_graph if retain_graph is None else retain_graph
    return outputs, _root_grads(outputs, grad_outputs, op), retain


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the graph's leaves."""
    tensors, grads, retain = _prepare("backward", tensors, grad_tensors, retain_graph,
                                      create_graph)
    run_backward(tensors, grads, retain_graph=retain, create_graph=create_graph,
                 inputs=_as_tuple(inputs))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False):
    """Gradients of ``outputs`` w.r.t. ``inputs``, returned (``.grad`` is left alone)."""
    outputs, grads, retain = _prepare("grad", outputs, grad_outputs, retain_graph, create_graph)
    inputs = _as_tuple(inputs)
    result = run_backward(outputs, grads, retain_graph=retain, create_graph=create_graph,
                          inputs=inputs, accumulate=False)
    out = []
    for i, (t, g) in enumerate(zip(inputs, result)):
        if g is None:
            if materialize_grads:
                g = _filled(t, 0)
            elif not allow_unused:
                raise RuntimeError(f"One of the differentiated Tensors (input {i}) appears to "
                                   f"not have been used in the graph. Set allow_unused=True if "
                                   f"this is the desired behavior.")
        elif not create_graph:
            g = g.detach()
        out.append(g)
    return tuple(out)
