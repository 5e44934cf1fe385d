"""NAdam: Adam with Nesterov momentum and a momentum schedule (Dozat, 2016)."""
from __future__ import annotations

import plugrad
from plugrad.optim.optimizer import Optimizer, _check_adam_like, _decay_, check


class NAdam(Optimizer):
    """PyTorch's NAdam. The running product of the momentum schedule is a float32 0-d
    tensor, as PyTorch keeps it, so trajectories agree to the last bit's neighbourhood."""

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        _check_adam_like(lr, eps, betas, weight_decay)
        check(momentum_decay >= 0.0, f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            wd, psi = group["weight_decay"], group["momentum_decay"]
            for p, g, state in self._params_with_grad(group):
                if "exp_avg" not in state:
                    state["mu_product"] = plugrad.ones((), dtype=plugrad.float32, device="cpu")
                    state["exp_avg"] = plugrad.zeros_like(p)
                    state["exp_avg_sq"] = plugrad.zeros_like(p)
                step = float(self._advance_step(state))
                g = _decay_(p, g, lr, wd, group["decoupled_weight_decay"])
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * psi))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
                state["mu_product"] *= mu
                mu_product = state["mu_product"].item()
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(g, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                denom = exp_avg_sq.div(1 - beta2 ** step).sqrt_().add_(eps)
                p.addcdiv_(g, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
                p.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - mu_product * mu_next))
        return loss
