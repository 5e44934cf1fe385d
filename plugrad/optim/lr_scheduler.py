"""Learning-rate schedules (``torch.optim.lr_scheduler``).

Each scheduler's ``get_lr`` is PyTorch's *chainable* form (computed from the groups'
current ``lr``, so two schedulers can act on one optimizer); ``_get_closed_form_lr`` is the
closed form, used when ``step(epoch)`` jumps to an epoch.
"""
from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter

from plugrad.optim.optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "LambdaLR", "LinearLR", "OneCycleLR", "ReduceLROnPlateau"]


class LRScheduler:
    """Sets each param group's ``lr`` once per ``step()``; the constructor takes step 0."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   f"when resuming an optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    def get_lr(self) -> list:
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The learning rates the last ``step()`` set, one per param group."""
        return self._last_lr

    def step(self, epoch=None) -> None:
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn("The epoch parameter in `scheduler.step()` was not necessary and is "
                          "being deprecated where possible.", UserWarning, stacklevel=2)
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """Everything but the optimizer (which has its own state dict)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

    def _current(self) -> list:
        return [group["lr"] for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler


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


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(epoch)`` (one function, or one per param group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]

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


def _per_group(name: str, optimizer, value) -> list:
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"expected {n} values for {name}, got {len(value)}")
        return list(value)
    return [value] * n


def _anneal_cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm up to ``max_lr``, anneal far below the start (per batch).

    Momentum (or Adam's beta1) cycles inversely when ``cycle_momentum``.
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1):
        self.optimizer = optimizer
        self.total_steps = self._total_steps(total_steps, epochs, steps_per_epoch)
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.anneal_strategy = anneal_strategy
        self._schedule_phases = self._phases(pct_start, three_phase)
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for lr, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            highs = _per_group("max_momentum", optimizer, max_momentum)
            lows = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for high, low, group in zip(highs, lows, optimizer.param_groups):
                    self._set_momentum(group, high)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _total_steps(total_steps, epochs, steps_per_epoch) -> int:
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got "
                                 f"{total_steps}")
            return total_steps
        if epochs is None or steps_per_epoch is None:
            raise ValueError("You must define either total_steps OR (epochs AND "
                             "steps_per_epoch)")
        if epochs <= 0 or not isinstance(epochs, int):
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if steps_per_epoch <= 0 or not isinstance(steps_per_epoch, int):
            raise ValueError(f"Expected positive integer steps_per_epoch, but got "
                             f"{steps_per_epoch}")
        return epochs * steps_per_epoch

    def _phases(self, pct_start: float, three_phase: bool) -> list:
        """``(end_step, lr keys, momentum keys)``: keys name the group entries annealed."""
        warm_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            return [(warm_end, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
                    (float(2 * pct_start * self.total_steps) - 2, ("max_lr", "initial_lr"),
                     ("base_momentum", "max_momentum")),
                    (self.total_steps - 1, ("initial_lr", "min_lr"),
                     ("max_momentum", "max_momentum"))]
        return [(warm_end, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
                (self.total_steps - 1, ("max_lr", "min_lr"), ("base_momentum", "max_momentum"))]

    def _set_momentum(self, group, value) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        fn = _anneal_cos if self.anneal_strategy == "cos" else _anneal_linear
        return fn(start, end, pct)

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr_keys, m_keys) in enumerate(self._schedule_phases):
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[lr_keys[0]], group[lr_keys[1]], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m_keys[0]],
                                                               group[m_keys[1]], pct))
                    break
                start = end
        return lrs


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
