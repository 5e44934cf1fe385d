"""The :class:`Optimizer` base: parameter groups, per-parameter state, state dicts.

Subclasses write only ``step``; it runs under ``no_grad`` and updates each parameter in
place (``p.add_``), so a Parameter keeps its identity and every alias sees the new values.
"""
from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict
from itertools import chain

import plugrad


class _RequiredParameter:
    """Marks a hyper-parameter with no default (``lr`` of a group must then be given)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()
_UNORDERED = ("optimizer parameters need to be organized in ordered collections, but the "
              "ordering of tensors in sets will change between runs. Please use a list instead.")


def check(ok: bool, message: str) -> None:
    """Raise PyTorch's ``ValueError`` for an invalid hyper-parameter."""
    if not ok:
        raise ValueError(message)


def _check_adam_like(lr, eps, betas, weight_decay) -> None:
    """The checks PyTorch's Adam family (Adam, AdamW, NAdam, RAdam, Adamax) makes alike, in
    its order, so the first bad value is the one named."""
    check(lr >= 0.0, f"Invalid learning rate: {lr}")
    check(eps >= 0.0, f"Invalid epsilon value: {eps}")
    check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
    check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
    check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")


def _decay_(p, g, lr, weight_decay, decoupled):
    """L2 (``g + wd * p``) or decoupled (``p *= 1 - lr * wd``, AdamW-style) weight decay;
    returns the gradient to use."""
    if weight_decay:
        if decoupled:
            p.mul_(1 - lr * weight_decay)
        else:
            g = g.add(p, alpha=weight_decay)
    return g


def _type_name(obj) -> str:
    if isinstance(obj, plugrad.Tensor):
        return f"plugrad.{obj.dtype.name} Tensor"
    return type(obj).__name__


def _step_under_no_grad(step):
    """Wrap ``step`` so updates never record a graph (a closure still can)."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        with plugrad.no_grad():
            return step(self, *args, **kwargs)
    wrapper._plugrad_no_grad = True
    return wrapper


def new_step():
    """A step counter as PyTorch keeps it: a float32 0-d tensor on the host."""
    return plugrad.zeros((), dtype=plugrad.float32, device="cpu")


def clone_tree(obj):
    """A deep copy of a state (dict) tree; tensors are cloned (they are not picklable)."""
    if isinstance(obj, plugrad.Tensor):
        return obj.detach().clone()
    if isinstance(obj, dict):
        return type(obj)((k, clone_tree(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(clone_tree(v) for v in obj)
    return copy.deepcopy(obj)


class Optimizer:
    """Base of every optimizer, with PyTorch's interface and state-dict format."""

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list = []
        if isinstance(params, plugrad.Tensor):
            raise TypeError(f"params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {_type_name(params)}")
        if isinstance(params, (set, frozenset)):
            raise TypeError(_UNORDERED)
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_plugrad_no_grad", False):
            cls.step = _step_under_no_grad(step)

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyper-parameters (defaults fill the rest)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, plugrad.Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(_UNORDERED)
        else:
            params = list(params)
        for p in params:
            if not isinstance(p, plugrad.Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params "
                                f"is {_type_name(p)}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in params]
        if len(set(ids)) != len(ids):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error", UserWarning, stacklevel=3)
        taken = {id(p) for group in self.param_groups for p in group["params"]}
        if taken.intersection(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        param_group["params"] = params
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's ``.grad`` (to None, or to zeros in place)."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:  # (None or not, the result is None: no read needed)
                    p.grad = None
                    continue
                g = p.grad
                if g is None:
                    continue
                # the same tensor, zeroed (it may be held elsewhere)
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    @staticmethod
    def _closure_loss(closure):
        """Re-evaluate the model through ``closure`` (which may call backward)."""
        if closure is None:
            return None
        with plugrad.enable_grad():
            return closure()

    def _params_with_grad(self, group):
        """``(p, grad, state)`` for each parameter of ``group`` that has a gradient."""
        for p in group["params"]:
            g = p.grad
            if g is not None:
                yield p, (-g if group.get("maximize") else g), self.state[p]

    @staticmethod
    def _step_counter(state):
        """Increment the per-parameter step counter (a float32 0-d tensor, as in PyTorch)
        and return it, without reading it back to Python (see ``capture.host_scalars``)."""
        if "step" not in state:
            state["step"] = new_step()
        state["step"] += 1
        return state["step"]

    @staticmethod
    def _advance_step(state) -> int:
        """Increment the per-parameter step counter (a float32 0-d tensor, as in PyTorch)."""
        if "step" not in state:
            state["step"] = new_step()
        state["step"] += 1
        return int(state["step"].item())

    # ------------------------------------------------------------------ state dicts
    def state_dict(self) -> dict:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``."""
        index: dict = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)] if isinstance(p, plugrad.Tensor) else p: dict(s)
                 for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore from :meth:`state_dict` output; tensors are copied onto each parameter's
        device and (except ``step``) floating dtype."""
        state_dict = clone_tree(state_dict)
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(s["params"]) != len(g["params"])
               for s, g in zip(saved_groups, self.param_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        by_index = dict(zip(chain.from_iterable(s["params"] for s in saved_groups),
                            chain.from_iterable(g["params"] for g in self.param_groups)))
        state: defaultdict = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in by_index:
                p = by_index[key]
                state[p] = {k: _onto(p, k, v) for k, v in value.items()}
            else:
                state[key] = value
        new_groups = []
        for saved, group in zip(saved_groups, self.param_groups):
            saved["params"] = group["params"]
            new_groups.append(saved)
        self.state = state
        self.param_groups = new_groups

    # ------------------------------------------------------------------ printing
    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, state):
        self.__dict__.update(state)


def _onto(p, key, value):
    """A loaded state tensor on ``p``'s device, in ``p``'s dtype when both are floating."""
    if not isinstance(value, plugrad.Tensor):
        return value
    if key == "step":
        return value
    if p.dtype.is_floating_point and value.dtype.is_floating_point:
        return value.to(device=p.device, dtype=p.dtype)
    return value.to(device=p.device)
