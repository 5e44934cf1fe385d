"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

import functools

from plugrad.capture import host_scalars
from plugrad.optim.optimizer import Optimizer, check


class SGD(Optimizer):
    """PyTorch's SGD: ``buf = m*buf + (1-dampening)*g``, ``p -= lr * (g + m*buf or buf)``."""

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False,
                 foreach=None, differentiable: bool = False, fused=None):
        check(lr >= 0.0, f"Invalid learning rate: {lr}")
        check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        check(not nesterov or (momentum > 0 and dampening == 0),
              "Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)

    #: ``lr`` reaches the kernels through ``host_scalars``: a captured step reads it afresh
    #: on each replay (a scheduler's change is no reason to capture again)
    _live_hyperparameters = ("lr",)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            momentum, wd = group["momentum"], group["weight_decay"]
            neg_lr, = host_scalars(functools.partial(_negated_lr, group), key=("sgd", id(group)))
            for p, g, state in self._params_with_grad(group):
                if wd:
                    g = g.add(p, alpha=wd)
                if momentum:
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = g.detach().clone()
                    else:
                        buf.mul_(momentum).add_(g, alpha=1.0 - group["dampening"])
                    g = g.add(buf, alpha=momentum) if group["nesterov"] else buf
                p.add_(g, alpha=neg_lr)
        return loss


def _negated_lr(group) -> tuple:
    return (-group["lr"],)
