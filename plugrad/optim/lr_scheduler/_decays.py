"""Schedules that decay the lr by a rule of the epoch (step, milestones, exponential,
cosine, lambda, linear, constant, multiplicative, polynomial)."""
from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter

from plugrad.optim.lr_scheduler._base import LRScheduler


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each epoch listed in ``milestones``."""

    def __init__(self, optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._current()
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [lr * factor for lr in self._current()]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine from the base lr down to ``eta_min`` over ``T_max`` epochs (and back up)."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        if t == 0:
            return self._current()
        if self._step_count == 1 and t > 0:
            return [eta_min + (base - eta_min) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [lr + (base - eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for lr, base in zip(self._current(), self.base_lrs)]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (lr - eta_min) + eta_min for lr in self._current()]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class _Lambdas(LRScheduler):
    """Schedules driven by user functions of the epoch (one, or one per param group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        """Functions and lambdas are left out; callable objects keep their ``__dict__``."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else
                               dict(fn.__dict__) for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_Lambdas):
    """``lr = base_lr * lr_lambda(epoch)`` (one function, or one per param group)."""

    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class LinearLR(LRScheduler):
    """Scale the lr linearly from ``start_factor`` to ``end_factor`` over ``total_iters``."""

    def __init__(self, optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, start, end = self.last_epoch, self.start_factor, self.end_factor
        if t == 0:
            return [lr * start for lr in self._current()]
        if t > self.total_iters:
            return self._current()
        factor = 1.0 + (end - start) / (self.total_iters * start + (t - 1) * (end - start))
        return [lr * factor for lr in self._current()]

    def _get_closed_form_lr(self):
        t = min(self.total_iters, self.last_epoch)
        factor = self.start_factor + (self.end_factor - self.start_factor) * t / self.total_iters
        return [base * factor for base in self.base_lrs]




class ConstantLR(LRScheduler):
    """The lr times ``factor`` until epoch ``total_iters``, then the lr itself (warm-up)."""

    def __init__(self, optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current()]
        if self.last_epoch != self.total_iters:
            return self._current()
        return [lr * (1.0 / self.factor) for lr in self._current()]

    def _get_closed_form_lr(self):
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class MultiplicativeLR(_Lambdas):
    """Multiply the lr by ``lr_lambda(epoch)`` at each step (one function or one per group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        fns = lr_lambda if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]
        for fn in fns:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return self._current()
        return [lr * fn(self.last_epoch) for fn, lr in zip(self.lr_lambdas, self._current())]


class PolynomialLR(LRScheduler):
    """Decay the lr to zero by ``(1 - t / total_iters) ** power`` over ``total_iters``."""

    def __init__(self, optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, n = self.last_epoch, self.total_iters
        if self._is_initial or t > n:
            return self._current()
        factor = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [lr * factor for lr in self._current()]

    def _get_closed_form_lr(self):
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base in self.base_lrs]
