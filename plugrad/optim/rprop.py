"""Rprop: per-coordinate step sizes grown while the gradient keeps its sign and shrunk when
it flips; only the gradient's sign moves the parameter (full-batch training)."""
from __future__ import annotations

import plugrad
from plugrad.optim.optimizer import Optimizer, check


class Rprop(Optimizer):
    """PyTorch's Rprop (the iRprop- variant: a flipped gradient skips its update)."""

    def __init__(self, params, lr: float = 1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False):
        check(lr >= 0.0, f"Invalid learning rate: {lr}")
        check(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            (etaminus, etaplus), (size_min, size_max) = group["etas"], group["step_sizes"]
            for p, g, state in self._params_with_grad(group):
                if "prev" not in state:
                    state["prev"] = plugrad.zeros_like(p)
                    state["step_size"] = plugrad.full_like(g, group["lr"])
                self._advance_step(state)
                sign = g.mul(state["prev"]).sign()
                factor = plugrad.where(sign > 0, etaplus,
                                       plugrad.where(sign < 0, etaminus, plugrad.ones_like(g)))
                state["step_size"].mul_(factor).clamp_(size_min, size_max)
                g = plugrad.where(factor == etaminus, 0.0, g)
                p.addcmul_(g.sign(), state["step_size"], value=-1)
                state["prev"].copy_(g)
        return loss
