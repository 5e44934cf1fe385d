"""Guards: what must be the same for a captured call to be replayed instead of run.

A replay runs no Python of the user's, so everything the Python would have decided from
must be read here, cheaply, on every call: the arguments' structure and their tensors'
shapes, dtypes and devices; grad mode and autocast; and the state the function reaches by
name -- its closure cells and the globals its code names (and ``self`` of a method): for a
module, its training flags, hooks and parameter identities; for an optimizer, its
hyper-parameters read as Python numbers; for a tensor, its identity; for a number, its value.
"""
from __future__ import annotations

import functools
import itertools
import operator
import types
import weakref

from plugrad.core import autocast as _autocast
from plugrad.core.grad_mode import _state
from plugrad.core.tensor import Tensor

_SCALARS = (bool, int, float, str, type(None), complex)
#: What a function names without it being state a step depends on.
_NOT_STATE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
              types.MethodType)

#: Bumped by ``nn.Module`` on every attribute set or delete and hook change, so a module's
#: guard (a walk over its submodules and parameters) is recomputed only after a change.
MODULE_VERSION = [0]
_module_keys: dict = {}  # id(module) -> (version, key)


# ---------------------------------------------------------------------- arguments
def flatten(obj, tensors: list):
    """The structure of ``obj`` with tensors taken out (into ``tensors``), for the key."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
        return ("T", obj.shape, obj.dtype, obj.device, obj._rg,
                "_root" in getattr(obj, "__dict__", ()))
    if isinstance(obj, _SCALARS):
        return obj if not isinstance(obj, float) else ("f", repr(obj))
    if isinstance(obj, (tuple, list)):
        return (type(obj), tuple(flatten(o, tensors) for o in obj))
    if isinstance(obj, dict):
        return ("d", tuple((k, flatten(v, tensors)) for k, v in obj.items()))
    return ("o", id(obj))


def rebuilder(obj, tensors: list):
    """A function rebuilding ``obj``'s structure around new tensors (the replay's outputs);
    the tensors found are appended to ``tensors``."""
    if isinstance(obj, Tensor):
        n = len(tensors)
        tensors.append(obj)
        return operator.itemgetter(n)  # C: no frame for the commonest output, one tensor
    if isinstance(obj, (tuple, list)):
        parts = [rebuilder(o, tensors) for o in obj]
        cls = type(obj)
        if hasattr(obj, "_fields"):
            return lambda made: cls(*[p(made) for p in parts])
        return lambda made: cls(p(made) for p in parts)
    if isinstance(obj, dict):
        items = [(k, rebuilder(v, tensors)) for k, v in obj.items()]
        return lambda made: {k: p(made) for k, p in items}
    return lambda made: obj


# ---------------------------------------------------------------------- watched state
def watch_list(fn) -> list:
    """Where ``fn`` reaches state by name: ``self``, closure cells, globals its code names."""
    watched = []
    owner = getattr(fn, "__self__", None)
    if owner is not None:
        watched.append(("self", owner))
    func = getattr(fn, "__func__", fn)
    code = getattr(func, "__code__", None)
    if code is None:
        call = getattr(type(fn), "__call__", None)
        if call is not None and hasattr(call, "__code__") and owner is None:
            watched.append(("self", fn))
            func, code = call, call.__code__
        else:
            return watched
    for name, cell in zip(code.co_freevars, getattr(func, "__closure__", None) or ()):
        try:
            if isinstance(cell.cell_contents, _NOT_STATE):
                continue  # a module or a function the closure names: not state
        except ValueError:
            pass
        watched.append(("cell", cell, name))
    g = getattr(func, "__globals__", {})
    for name in sorted(_names(code)):
        if name in g and not isinstance(g[name], _NOT_STATE):
            watched.append(("global", g, name))
    return watched


def _names(code) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def value_of(entry):
    if entry[0] == "self":
        return entry[1]
    if entry[0] == "cell":
        try:
            return entry[1].cell_contents
        except ValueError:
            return None
    return entry[1].get(entry[2])


def _is_module(obj) -> bool:
    return hasattr(obj, "named_modules") and hasattr(obj, "training")


def _is_optimizer(obj) -> bool:
    return hasattr(obj, "param_groups") and hasattr(obj, "state")


def state_key(obj, depth=0):
    """The guard of one watched object (see the module docstring)."""
    if isinstance(obj, Tensor):
        return ("T", id(obj), obj._rg)
    if isinstance(obj, _SCALARS):
        return obj if not isinstance(obj, float) else ("f", repr(obj))
    if _is_module(obj):
        cached = _module_keys.get(id(obj))
        if cached is not None and cached[0] == MODULE_VERSION[0] and cached[2]() is obj:
            return cached[1]
        key = _module_key(obj)
        _module_keys[id(obj)] = (MODULE_VERSION[0], key, weakref.ref(obj))
        return key
    if _is_optimizer(obj):
        groups = obj.param_groups
        keys = _optimizer_keys.get(id(obj))
        if keys is None or keys[0]() is not obj or len(keys[1]) != len(groups) or any(
                len(g) != n for g, (_, n) in zip(groups, keys[1])):
            keys = _optimizer_keys[id(obj)] = (weakref.ref(obj), _hyperparameter_names(obj))
        return ("O", id(obj), tuple([tuple([g.get(k) for k in names])
                                     for g, (names, _) in zip(groups, keys[1])]))
    if isinstance(obj, (list, tuple)) and depth == 0 and len(obj) <= 64:
        return (type(obj), tuple(state_key(o, 1) for o in obj))
    if isinstance(obj, dict) and depth == 0 and len(obj) <= 64:
        return ("d", tuple((k, state_key(v, 1)) for k, v in obj.items()
                           if isinstance(k, (str, int))))
    if depth == 0 and not callable(obj) and not isinstance(obj, _NOT_STATE) and \
            isinstance(getattr(obj, "__dict__", None), dict):
        # a plain object the function names (``self`` of a trainer): its attributes
        return ("o", id(obj), tuple((k, state_key(v, 1)) for k, v in vars(obj).items()))
    return ("o", id(obj))


_optimizer_keys: dict = {}  # id(optimizer) -> (weakref, per group: (names, len(group)))


def _hyperparameter_names(opt) -> list:
    """Per param group, the hyper-parameters a step reads as Python numbers (all but the
    ones the optimizer reads afresh on each replay), and the group's size."""
    live = getattr(opt, "_live_hyperparameters", ())
    return [(tuple(k for k, v in g.items() if k not in live and (
        isinstance(v, _SCALARS) or (isinstance(v, tuple) and all(
            isinstance(x, _SCALARS) for x in v)))), len(g)) for g in opt.param_groups]


def _module_key(obj):
    mods = list(obj.modules())
    return ("M", id(obj), tuple(m.training for m in mods),
            _has_hooks(mods),
            tuple((id(p), p._rg) for p in obj.parameters()))


def _has_hooks(mods) -> bool:
    return any(m._forward_hooks or m._forward_pre_hooks or m.__dict__.get("_backward_hooks")
               or m.__dict__.get("_backward_pre_hooks") for m in mods)


def hooked(watched) -> bool:
    """Whether a watched module has hooks (a replay would not call them)."""
    for entry in watched:
        obj = value_of(entry)
        if _is_module(obj) and _has_hooks(list(obj.modules())):
            return True
    return False


def getters(watched) -> list:
    """One C-level callable per watched entry that reads its current value (the guard is
    computed on every call: no Python frame per entry)."""
    out = []
    for entry in watched:
        if entry[0] == "self":
            out.append(itertools.repeat(entry[1]).__next__)
        elif entry[0] == "cell":
            out.append(functools.partial(getattr, entry[1], "cell_contents"))
        else:
            out.append(functools.partial(entry[1].get, entry[2]))
    return out


def state_guard(watched):
    """One generated function returning ``tuple(state_key(v) for each watched value)``,
    with the kind each entry holds now (a tensor, a float) inlined: the guard is computed
    on every call, and a Python frame per entry would cost more than the key itself.
    Raises ValueError where a closure cell is not yet assigned."""
    env = {"sk": state_key, "Tensor": Tensor, "_id": id, "_repr": repr}
    lines, parts = ["def state():"], []
    for i, (entry, get) in enumerate(zip(watched, getters(watched))):
        env[f"g{i}"] = get
        lines.append(f"    v{i} = g{i}()")
        try:
            kind = type(value_of(entry))
        except ValueError:
            kind = None
        if kind is Tensor:  # as state_key, without its frame
            parts.append(f"(('T', _id(v{i}), v{i}._rg) if type(v{i}) is Tensor else sk(v{i}))")
        elif kind is float:
            # the value itself where == tells floats apart (not 0.0 vs -0.0, nor NaN): a
            # float's repr costs more than the rest of its key
            parts.append(f"(('f', v{i} if v{i} == v{i} and v{i} else _repr(v{i})) "
                         f"if type(v{i}) is float else sk(v{i}))")
        else:
            parts.append(f"sk(v{i})")
    lines.append(f"    return ({', '.join(parts)}{',' if len(parts) == 1 else ''})")
    exec(compile("\n".join(lines) + "\n", "<plugrad.compile guard>", "exec"), env)  # noqa: S102
    return env["state"]


def call_key(args, kwargs, state, tensors: list):
    """The full guard of one call (``state``: :func:`state_guard`'s function); ``tensors``
    receives the arguments' tensors in order."""
    try:
        watched = state()
    except ValueError:  # a closure cell not yet assigned
        watched = None
    return (flatten(args, tensors) if args else (), flatten(kwargs, tensors) if kwargs else (),
            _state.enabled, _autocast.active and _autocast_key(), watched)


def _autocast_key():
    st = _autocast.state
    return tuple(sorted((k, repr(v)) for k, v in vars(st).items()))
