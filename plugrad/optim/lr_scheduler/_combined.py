"""Schedules made of schedules: one after another (SequentialLR) or all at once
(ChainedScheduler), as warm-up-then-decay recipes write them."""
from __future__ import annotations

from bisect import bisect_right

from plugrad.optim.lr_scheduler._base import LRScheduler
from plugrad.optim.lr_scheduler._plateau import ReduceLROnPlateau


def _check_members(owner: str, optimizer, schedulers) -> None:
    if len(schedulers) < 1:
        raise ValueError(f"{owner} expects at least one scheduler, but got no scheduler.")
    for i, sched in enumerate(schedulers):
        if not hasattr(sched, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(sched, ReduceLROnPlateau):
            raise ValueError(f"{owner} does not support `ReduceLROnPlateau` scheduler as it "
                             "requires additional kwargs to be specified when calling `step`, "
                             f"but got one at index {i} in the given schedulers sequence.")
        if optimizer is not sched.optimizer:
            raise ValueError(f"{owner} expects all schedulers to belong to the same optimizer, "
                             f"but got scheduler {type(sched).__name__} at index {i} has "
                             f"{sched.optimizer}, which is different from "
                             f"{type(optimizer).__name__}.")


class _Composite(LRScheduler):
    """State dicts hold each member's state dict, not the members."""

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        members = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for sched, saved in zip(self._schedulers, members):
            sched.load_state_dict(saved)


class SequentialLR(_Composite):
    """Run ``schedulers[i]`` between ``milestones[i-1]`` and ``milestones[i]``; each one
    starts from its own epoch 0 when its turn comes."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch: int = -1):
        _check_members(type(self).__name__, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}")
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:  # undo what the members' constructors did
            group["lr"] = group["initial_lr"]
        self._undo_steps(self)
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def _undo_steps(self, sched) -> None:
        if hasattr(sched, "_schedulers"):
            for member in sched._schedulers:
                self._undo_steps(member)
        elif hasattr(sched, "last_epoch"):
            sched.last_epoch -= 1

    recursive_undo = _undo_steps  # PyTorch's name

    def step(self) -> None:
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        sched = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            sched._update_lr(0)
        else:
            sched.step()
        self._last_lr = sched.get_last_lr()


class ChainedScheduler(_Composite):
    """Step every scheduler at each ``step()``: their factors multiply."""

    def __init__(self, schedulers, optimizer=None):
        optimizer = optimizer or (schedulers[0].optimizer if schedulers else None)
        _check_members(type(self).__name__, optimizer, schedulers)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]

    def step(self) -> None:
        for sched in self._schedulers:
            sched.step()
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]
