"""Cyclical schedules: the 1cycle policy, triangular cycles, cosine with warm restarts."""
from __future__ import annotations

import math
import types

from plugrad.optim.lr_scheduler._base import LRScheduler
from plugrad.optim.optimizer import Optimizer


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


def _cycle_momentum(sched, optimizer, cycle: bool, base, high, last_epoch: int) -> None:
    """Momentum (or Adam's beta1) cycling inversely to the lr, PyTorch's checks included."""
    sched.cycle_momentum = cycle
    if not cycle:
        return
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                         "option enabled")
    sched.use_beta1 = "betas" in optimizer.defaults
    sched.base_momentums = _per_group("base_momentum", optimizer, base)
    sched.max_momentums = _per_group("max_momentum", optimizer, high)
    if last_epoch == -1:
        for hi, lo, group in zip(sched.max_momentums, sched.base_momentums,
                                 optimizer.param_groups):
            _set_momentum(sched, group, hi)
            group["max_momentum"], group["base_momentum"] = hi, lo


def _set_momentum(sched, group, value) -> None:
    if sched.use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


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
        _cycle_momentum(self, optimizer, cycle_momentum, base_momentum, max_momentum,
                        last_epoch)
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
                        _set_momentum(self, group, self._anneal(group[m_keys[0]],
                                                               group[m_keys[1]], pct))
                    break
                start = end
        return lrs




class CyclicLR(LRScheduler):
    """Cycle the lr between ``base_lr`` and ``max_lr`` (Smith, 2017), per batch: triangular,
    triangular2 (halving each cycle), exp_range, or a user ``scale_fn``."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up: int = 2000,
                 step_size_down=None, mode: str = "triangular", gamma: float = 1.0,
                 scale_fn=None, scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum=0.8, max_momentum=0.9, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom, self.scale_mode = scale_fn, scale_mode
        if scale_fn is None:
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        _cycle_momentum(self, optimizer, cycle_momentum, base_momentum, max_momentum,
                        last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        at = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (high - base) * scale * at
               for base, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums,
                                        self.max_momentums):
                _set_momentum(self, group, high - (high - low) * scale * at)
        return lrs

    def state_dict(self):
        """A user ``scale_fn`` is left out (a callable object keeps its ``__dict__``)."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = (None if fn is None or isinstance(fn, types.FunctionType)
                                     else dict(fn.__dict__))
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        saved = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if saved is not None:
            self._scale_fn_custom.__dict__.update(saved)


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter, 2017): cosine annealing restarted every ``T_i`` epochs,
    each period ``T_mult`` times the last; ``step(epoch)`` takes fractional epochs."""

    def __init__(self, optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = self.T_i = T_0
        self.T_mult, self.eta_min = T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2 for base in self.base_lrs]

    def step(self, epoch=None) -> None:
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = self._current()
