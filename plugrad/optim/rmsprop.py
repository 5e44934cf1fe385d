"""RMSprop: scale the step by a running RMS of the gradient (optionally centred)."""
from __future__ import annotations

import plugrad
from plugrad.optim.optimizer import Optimizer, check


class RMSprop(Optimizer):
    """PyTorch's RMSprop, with ``momentum``, ``centered`` and smoothing constant ``alpha``."""

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False):
        check(lr >= 0.0, f"Invalid learning rate: {lr}")
        check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        check(alpha >= 0.0, f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered,
                                      capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            wd, momentum = group["weight_decay"], group["momentum"]
            for p, g, state in self._params_with_grad(group):
                if not state:
                    state["square_avg"] = plugrad.zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = plugrad.zeros_like(p)
                    if group["centered"]:
                        state["grad_avg"] = plugrad.zeros_like(p)
                self._step_counter(state)
                if wd:
                    g = g.add(p, alpha=wd)
                square_avg = state["square_avg"].mul_(alpha).addcmul_(g, g, value=1.0 - alpha)
                if group["centered"]:
                    grad_avg = state["grad_avg"].lerp_(g, 1.0 - alpha)
                    avg = square_avg.addcmul(grad_avg, grad_avg, value=-1.0).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"].mul_(momentum).addcdiv_(g, avg)
                    p.add_(buf, alpha=-lr)
                else:
                    p.addcdiv_(g, avg, value=-lr)
        return loss
