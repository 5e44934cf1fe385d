"""Adam and AdamW (decoupled weight decay), with AMSGrad and ``maximize``."""
from __future__ import annotations

import functools
import math

import numpy as np

import plugrad
from plugrad.capture import host_scalars
from plugrad.optim.optimizer import Optimizer, _check_adam_like


class Adam(Optimizer):
    """PyTorch's Adam: bias-corrected first and second moment estimates of the gradient."""

    _decoupled = False
    #: ``lr`` reaches the kernels through ``host_scalars`` (read afresh on each replay)
    _live_hyperparameters = ("lr",)

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused=None):
        _check_adam_like(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            (beta1, beta2), eps = group["betas"], group["eps"]
            wd, amsgrad = group["weight_decay"], group["amsgrad"]
            for p, g, state in self._params_with_grad(group):
                if not state:
                    state["exp_avg"] = plugrad.zeros_like(p)
                    state["exp_avg_sq"] = plugrad.zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = plugrad.zeros_like(p)
                step = self._step_counter(state)
                value, bias_correction2_sqrt, decay = host_scalars(functools.partial(
                    _corrections, group, p.dtype == plugrad.float32), step,
                    key=("adam", id(group), beta1, beta2, wd, self._decoupled))
                if wd:
                    if self._decoupled:
                        p.mul_(decay)
                    else:
                        g = g.add(p, alpha=wd)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(g, 1.0 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1.0 - beta2)
                if amsgrad:
                    second = state["max_exp_avg_sq"].maximum_(exp_avg_sq)
                else:
                    second = exp_avg_sq
                denom = (second.sqrt() / bias_correction2_sqrt).add_(eps)
                # p.addcdiv_(exp_avg, denom, value=value), spelled with the float as it is
                # (the same kernels in the same order): a captured step recomputes it
                p.add_(exp_avg.mul(value).div_(denom))
        return loss


def _corrections(group, single, step):
    """The step's update scale, the square root of the second bias correction and the
    decoupled weight decay's factor, from the step counter and the group's current ``lr``,
    in Python floats as PyTorch computes them (the scale rounded to float32 for a float32
    parameter, as addcdiv rounds its ``value``)."""
    step = int(step.item())
    lr, (beta1, beta2) = group["lr"], group["betas"]
    value = -lr / (1.0 - beta1 ** step)
    return ((float(np.float32(value)) if single else value), math.sqrt(1.0 - beta2 ** step),
            1.0 - lr * group["weight_decay"])


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` before the update."""

    _decoupled = True

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, **kwargs):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, **kwargs)
