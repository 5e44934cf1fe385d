"""Fused kernels as differentiable ops: the Tensor binding of ``gelu_backward``,
``layer_norm_backward``, the conv gradients and the rest.

Gradient rules call fused kernels by name (``F.gelu_backward(g, x, approximate)``). On a
kernel table that is the backend's fast kernel; under ``create_graph`` it is the function
made here: the same kernel call on the Tensors' arrays (so both bindings agree bit for
bit), recorded with a rule that differentiates the contract's composite of that kernel
(:class:`~plugrad.core.autograd.composite.CompositeBackward`): higher-order gradients
through every fused kernel, with no second formula to keep in step.
"""
from __future__ import annotations

from plugrad.backends.contract import Backend, optional_kernels
from plugrad.core import dtypes as _dt
from plugrad.core.autograd.composite import CompositeBackward
from plugrad.core.autograd.record import any_recording, record
from plugrad.core.tensor import Tensor, _wrap

#: Fused kernels that gradient rules call, and how many arrays each returns: every optional
#: kernel named ``*_backward`` or ``*_grad_*`` (one array unless listed here), and the
#: forward kernels listed here.
_OUTPUTS = {"layer_norm_backward": 3, "scaled_dot_product_attention_backward": 3,
            "scaled_dot_product_attention": 2, "layer_norm": 3, "lstm": 3,
            "lstm_backward": 4, "gru": 3, "gru_backward": 4}
FUSED = {name: _OUTPUTS.get(name, 1) for name in optional_kernels()
         if name.endswith("_backward") or "_grad_" in name or name in _OUTPUTS}


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def fused_op(name: str, n_out: int = 1):
    """Kernel ``name`` as a differentiable op on Tensors (arguments as the kernel's, with
    Tensors for arrays; None stays None)."""
    node_cls = type(f"{_camel(name)}Backward0", (CompositeBackward,),
                    {"composite": staticmethod(getattr(Backend, name)), "n_outputs": n_out,
                     "__doc__": f"Gradient of kernel ``{name}``: its composite's."})

    def fn(*args):
        tensors = [a for a in args if isinstance(a, Tensor)]
        first = tensors[0]
        k = first._k
        out = getattr(k, name)(*[a._data if isinstance(a, Tensor) else a for a in args])
        outs = list(out) if n_out > 1 else [out]
        results = [None if o is None else
                   _wrap(o, _dt.get_dtype(k.dtype_of(o)), first.device, k) for o in outs]
        if any_recording(tensors):
            node = node_cls()
            node.template = tuple(None if isinstance(a, Tensor) else a for a in args)
            node.positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
            made = [r for r in results if r is not None and r.dtype.is_floating_point]
            if made:
                record(made[0], node, tensors, tuple(tensors))
                for r in results:
                    if r is not None and r is not made[0] and r.dtype.is_floating_point:
                        r.grad_fn, r._rg = node, True
                for nr, r in enumerate(results):
                    if r is not None and r.grad_fn is node:
                        r._output_nr = nr
        return tuple(results) if n_out > 1 else results[0]

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Kernel ``{name}`` as a differentiable op (see :mod:`{__name__}`)."
    fn.node = node_cls
    return fn


OPS = {name: fused_op(name, n) for name, n in FUSED.items() if hasattr(Backend, name)}
