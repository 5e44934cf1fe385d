"""ReduceLROnPlateau: lower the lr when a monitored metric stops improving."""
from __future__ import annotations

import math

from plugrad.optim.optimizer import Optimizer


class ReduceLROnPlateau:
    """Cut the lr by ``factor`` once a monitored metric stops improving for ``patience``
    epochs (``scheduler.step(val_loss)``), as ``torch.optim.lr_scheduler.ReduceLROnPlateau``."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr=0.0, eps: float = 1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            self.min_lrs = list(min_lr)
        else:
            self.min_lrs = [min_lr] * n
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def _is_better(self, current: float) -> bool:
        if self.mode == "min":
            bound = self.best * (1.0 - self.threshold) if self.threshold_mode == "rel" \
                else self.best - self.threshold
            return current < bound
        bound = self.best * (1.0 + self.threshold) if self.threshold_mode == "rel" \
            else self.best + self.threshold
        return current > bound

    def step(self, metrics) -> None:
        current = float(metrics)
        self.last_epoch += 1
        if self._is_better(current):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                new_lr = max(group["lr"] * self.factor, min_lr)
                if group["lr"] - new_lr > self.eps:
                    group["lr"] = new_lr
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list:
        return self._last_lr

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
