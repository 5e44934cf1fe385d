"""ASGD: SGD that also keeps a running average ``ax`` of the iterates (Polyak-Ruppert
averaging), switched on after ``t0`` steps."""
from __future__ import annotations

import plugrad
from plugrad.optim.optimizer import Optimizer, check


def _scalar(value):
    """A float32 0-d host tensor, as PyTorch keeps ``eta`` and ``mu``."""
    return plugrad.tensor(value, dtype=plugrad.float32, device="cpu")


class ASGD(Optimizer):
    """PyTorch's ASGD. ``eta`` and ``mu`` are float32 0-d tensors, as PyTorch keeps them, so
    their rounding is the same."""

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0.0, foreach=None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        check(lr >= 0.0, f"Invalid learning rate: {lr}")
        check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            wd = group["weight_decay"]
            for p, g, state in self._params_with_grad(group):
                if "ax" not in state:
                    state["eta"] = _scalar(lr)
                    state["mu"] = _scalar(1.0)
                    state["ax"] = plugrad.zeros_like(p)
                step = float(self._advance_step(state))
                if wd:
                    g = g.add(p, alpha=wd)
                eta, mu, ax = state["eta"].item(), state["mu"].item(), state["ax"]
                p.mul_(1 - lambd * eta)
                p.add_(g, alpha=-eta)
                if mu != 1:
                    ax.add_(p.sub(ax).mul_(mu))
                else:
                    ax.copy_(p)
                state["eta"].copy_(_scalar(lr / ((1 + lambd * lr * step) ** alpha)))
                state["mu"].copy_(_scalar(1 / max(1, step - t0)))
        return loss
