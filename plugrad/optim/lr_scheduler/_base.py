"""The scheduler base: ``step()`` sets each param group's ``lr`` from ``get_lr``."""
from __future__ import annotations

import warnings

from plugrad.optim.optimizer import Optimizer


class LRScheduler:
    """Sets each param group's ``lr`` once per ``step()``; the constructor takes step 0.

    Each scheduler's ``get_lr`` is PyTorch's *chainable* form (computed from the groups'
    current ``lr``, so two schedulers can act on one optimizer); ``_get_closed_form_lr`` is
    the closed form, used when ``step(epoch)`` jumps to an epoch.
    """

    #: True during the constructor's step (schedules whose first lr is the current one)
    _is_initial = False

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
        self._initial_step()

    def _initial_step(self) -> None:
        """The constructor's step (also a SequentialLR's hand-over to its next schedule)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The learning rates the last ``step()`` set, one per param group."""
        return self._last_lr

    def step(self, epoch=None) -> None:
        self._step_count += 1
        if epoch is not None:
            warnings.warn("The epoch parameter in `scheduler.step()` was not necessary and is "
                          "being deprecated where possible.", UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
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
