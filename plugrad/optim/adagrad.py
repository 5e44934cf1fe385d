"""Adagrad: per-coordinate steps scaled by the root of the summed squared gradients."""
from __future__ import annotations

import plugrad
from plugrad.optim.optimizer import Optimizer, check, new_step


class Adagrad(Optimizer):
    """PyTorch's Adagrad, with ``lr_decay`` and ``initial_accumulator_value``."""

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, fused=None):
        check(lr >= 0.0, f"Invalid learning rate: {lr}")
        check(lr_decay >= 0.0, f"Invalid lr_decay value: {lr_decay}")
        check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        check(initial_accumulator_value >= 0.0,
              f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        for group in self.param_groups:  # PyTorch creates the state up front
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group):
        state = self.state[p]
        if not state:
            state["step"] = new_step()
            state["sum"] = plugrad.full_like(p, group["initial_accumulator_value"])
        return state

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lr_decay, eps, wd = (group["lr"], group["lr_decay"], group["eps"],
                                     group["weight_decay"])
            for p, g, state in self._params_with_grad(group):
                self._init_state(p, group)
                step = self._advance_step(state)
                if wd:
                    g = g.add(p, alpha=wd)
                clr = lr / (1.0 + (step - 1) * lr_decay)
                state["sum"].addcmul_(g, g, value=1.0)
                std = state["sum"].sqrt().add_(eps)
                p.addcdiv_(g, std, value=-clr)
        return loss
