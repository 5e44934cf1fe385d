"""Adadelta: steps scaled by the ratio of running RMS of updates to running RMS of gradients
(``pytorch/examples``' MNIST trains with it)."""
from __future__ import annotations

import plugrad
from plugrad.optim.optimizer import Optimizer, check


class Adadelta(Optimizer):
    """PyTorch's Adadelta (``lr`` scales the update, 1.0 by default)."""

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0, foreach=None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False):
        check(lr >= 0.0, f"Invalid learning rate: {lr}")
        check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, capturable=capturable,
                                      maximize=maximize, differentiable=differentiable))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
            for p, g, state in self._params_with_grad(group):
                if "square_avg" not in state:
                    state["square_avg"] = plugrad.zeros_like(p)
                    state["acc_delta"] = plugrad.zeros_like(p)
                self._advance_step(state)
                if wd:
                    g = g.add(p, alpha=wd)
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                square_avg.mul_(rho).addcmul_(g, g, value=1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_().div_(std).mul_(g)
                acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                p.add_(delta, alpha=-lr)
        return loss
