"""RAdam: Adam whose adaptive step is switched on once the variance of its estimate is
tractable (Liu et al., 2019), a warm-up without a schedule."""
from __future__ import annotations

import plugrad
from plugrad.optim.optimizer import Optimizer, _check_adam_like, _decay_


class RAdam(Optimizer):
    """PyTorch's RAdam, with ``decoupled_weight_decay`` (AdamW-style decay)."""

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        _check_adam_like(lr, eps, betas, weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            maximize=maximize, foreach=foreach, capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            wd = group["weight_decay"]
            rho_inf = 2 / (1 - beta2) - 1
            for p, g, state in self._params_with_grad(group):
                if "exp_avg" not in state:
                    state["exp_avg"] = plugrad.zeros_like(p)
                    state["exp_avg_sq"] = plugrad.zeros_like(p)
                step = float(self._advance_step(state))
                g = _decay_(p, g, lr, wd, group["decoupled_weight_decay"])
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(g, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                bias_correction2 = 1 - beta2 ** step
                corrected = exp_avg / (1 - beta1 ** step)
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:  # the variance is tractable: the rectified adaptive step
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
                    p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
                else:  # SGD with momentum while it is not
                    p.add_(corrected * lr, alpha=-1.0)
        return loss
