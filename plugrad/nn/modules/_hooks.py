"""A module call with hooks: forward pre-hooks and hooks (optionally with kwargs, optionally
always called) and full backward hooks, in the order PyTorch's ``Module._call_impl`` runs
them. Calls without hooks never come here (``Module.__call__`` goes straight to forward)."""
from __future__ import annotations

import itertools
import warnings

import plugrad
from plugrad import Tensor
from plugrad.autograd import Function
from plugrad.capture import guards as _guards


class RemovableHandle:
    """Returned by the ``register_*_hook`` methods; ``remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks: dict, *flag_sets: set):
        self._hooks, self._flag_sets = hooks, flag_sets
        self.id = next(self._ids)
        for flags in flag_sets:
            flags.add(self.id)

    def remove(self) -> None:
        _guards.MODULE_VERSION[0] += 1
        self._hooks.pop(self.id, None)
        for flags in self._flag_sets:
            flags.discard(self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def call_with_hooks(module, args: tuple, kwargs: dict):
    d = module.__dict__
    pre_kw = d.get("_forward_pre_hooks_with_kwargs", ())
    for hid, hook in tuple(module._forward_pre_hooks.items()):
        if hid in pre_kw:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    backward = None
    if d.get("_backward_hooks") or d.get("_backward_pre_hooks"):
        backward = _BackwardHooks(module)
        args = backward.wrap_inputs(args)
    try:
        out = module.forward(*args, **kwargs)
    except Exception:
        always = d.get("_forward_hooks_always_called", ())
        for hid, hook in tuple(module._forward_hooks.items()):
            if hid in always:
                _run_forward_hook(module, hid, hook, args, kwargs, None)
        raise
    for hid, hook in tuple(module._forward_hooks.items()):
        result = _run_forward_hook(module, hid, hook, args, kwargs, out)
        if result is not None:
            out = result
    if backward is not None:
        out = backward.wrap_outputs(out)
    return out


def _run_forward_hook(module, hid, hook, args, kwargs, out):
    if hid in module.__dict__.get("_forward_hooks_with_kwargs", ()):
        return hook(module, args, kwargs, out)
    return hook(module, args, out)


class BackwardHookFunction(Function):
    """An identity whose backward hands the gradients passing through to a callback (and
    passes on what it returns): around a module's inputs it sees ``grad_input``, around its
    outputs ``grad_output``. Its node is PyTorch's ``BackwardHookFunctionBackward``."""

    @staticmethod
    def forward(ctx, callback, *tensors):
        ctx.callback = callback
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.callback(grads))


class _BackwardHooks:
    """One call's backward hooks: the pre-hooks and the full hooks of ``module``."""

    def __init__(self, module):
        self.module = module
        self.n_inputs = 0
        self.inputs_need_grad = False
        self.grad_outputs = None

    def wrap_inputs(self, args: tuple) -> tuple:
        where = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_inputs = len(where)
        if not (plugrad.is_grad_enabled() and any(args[i].requires_grad for i in where)):
            return args
        self.inputs_need_grad = True
        wrapped = BackwardHookFunction.apply(self._on_grad_input, *(args[i] for i in where))
        args = list(args)
        for i, t in zip(where, wrapped):
            args[i] = t
        return tuple(args)

    def wrap_outputs(self, out):
        single = isinstance(out, Tensor)
        outs = (out,) if single else out
        if not isinstance(outs, tuple):
            return out  # PyTorch hooks tensors and tuples of them only
        where = [i for i, o in enumerate(outs) if isinstance(o, Tensor)]
        if not (plugrad.is_grad_enabled() and any(outs[i].requires_grad for i in where)):
            return out
        wrapped = BackwardHookFunction.apply(self._on_grad_output, *(outs[i] for i in where))
        outs = list(outs)
        for i, t in zip(where, wrapped):
            outs[i] = t
        return outs[0] if single else tuple(outs)

    def _on_grad_output(self, grads: tuple) -> tuple:
        module = self.module
        for hook in tuple(module.__dict__.get("_backward_pre_hooks", {}).values()):
            result = hook(module, grads)
            if result is not None:
                grads = _replaced("backward pre-hook", grads, result)
        self.grad_outputs = grads
        hooks = tuple(module.__dict__.get("_backward_hooks", {}).values())
        if hooks and not self.inputs_need_grad:  # no grad_input will come: call them now
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients.",
                          UserWarning, stacklevel=2)
            empty = (None,) * self.n_inputs
            for hook in hooks:
                result = hook(module, empty, grads)
                if result is not None and any(r is not None for r in result):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
        return grads

    def _on_grad_input(self, grads: tuple) -> tuple:
        module = self.module
        for hook in tuple(module.__dict__.get("_backward_hooks", {}).values()):
            result = hook(module, grads, self.grad_outputs)
            if result is not None:
                grads = _replaced("backward hook", grads, result)
        return grads


def _replaced(kind: str, old: tuple, new) -> tuple:
    new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
    if len(new) != len(old):
        raise RuntimeError(f"{kind} returned an invalid number of grads, expected "
                           f"{len(old)}, but got {len(new)}")
    return new
