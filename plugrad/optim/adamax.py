"""Adamax: Adam with the infinity norm of past gradients in place of their RMS."""
from __future__ import annotations

import plugrad
from plugrad.optim.optimizer import Optimizer, _check_adam_like


class Adamax(Optimizer):
    """PyTorch's Adamax (Kingma & Ba, 2014, section 7.1)."""

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False):
        _check_adam_like(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            wd = group["weight_decay"]
            for p, g, state in self._params_with_grad(group):
                if "exp_avg" not in state:
                    state["exp_avg"] = plugrad.zeros_like(p)
                    state["exp_inf"] = plugrad.zeros_like(p)
                step = self._advance_step(state)
                if wd:
                    g = g.add(p, alpha=wd)
                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                exp_avg.lerp_(g, 1 - beta1)
                exp_inf.mul_(beta2).maximum_(g.abs().add_(eps))
                p.addcdiv_(exp_avg, exp_inf, value=-lr / (1 - beta1 ** step))
        return loss
