"""Run one generated case on ``torch`` and on ``plugrad`` and list how they differ.

A :class:`Case` names an op-database entry, a sample of it, a dtype, a family of values, a
calling form and a gradient order; everything else (the values, broadcast shapes) follows
from its seed, so a case printed in a failure replays exactly (:func:`run_case`). The
inputs come from the entry's own sample generator (the op database is the one list of ops,
shapes and dtypes), made by a :class:`Maker` whose values are drawn from the case's family;
each plugrad input is remade in torch with the same values and layout.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

import plugrad
from plugrad import Tensor
from plugrad.core.dtypes import DType
from plugrad.testing import _specials
from plugrad.testing.opdb import FLOATS, Maker, _tensor

#: value families: how a case's floating (and integer) inputs are drawn
FAMILIES = ("uniform", "special", "ties", "zeros", "extreme")
#: calling forms; "inplace_view" applies the in-place method to a view of a larger tensor
FORMS = ("fn", "method", "inplace", "inplace_view")
#: every dtype a case may use (declared ones and, to check rejections, the others)
DTYPES = ("bool", "uint8", "int32", "int64", "float16", "float32", "float64")
#: ``(rtol, atol)`` for values by result dtype; gradients are compared in float64
TOL = {"float16": (5e-3, 1e-3), "float32": (2e-5, 1e-6), "float64": (1e-7, 1e-10)}
GRAD_TOL = (1e-6, 1e-9)
#: modules whose ops only move or select values: results compare bit for bit, zeros' signs too
EXACT_MODULES = ("shape", "movement", "join", "indexing", "slicing", "sorting", "extrema",
                 "select", "opdb")
EXACT_NAMES = ("neg", "abs", "floor", "ceil", "round", "trunc", "sign", "relu", "clone",
               "nn.functional.relu", "nn.functional.pad", "nn.functional.max_pool2d",
               "nn.functional.embedding", "nn.functional.hardtanh", "nn.functional.relu6")
#: elementwise ops: their tensor inputs may take any mutually broadcastable shapes
POINTWISE_MODULES = ("unary", "binary", "compare", "select")
#: plugrad names whose torch spelling differs (else ``getattr`` along the same path)
TORCH_NAMES: dict[str, str] = {}


@dataclasses.dataclass(frozen=True)
class Case:
    op: str
    device: str
    dtype: str
    sample: int = 0
    family: str = "uniform"
    seed: int = 0
    form: str = "fn"
    order: int = 0                  # 0: values only; 1, 2: gradients of that order
    shapes: tuple | None = None     # broadcast shapes for a pointwise op's tensor inputs
    dtype2: str | None = None       # a second dtype for a pointwise op's later inputs


@dataclasses.dataclass
class Divergence:
    kind: str      # "wrong" | "error" (plugrad raised, torch did not) | "accepted" (reverse)
    what: str      # "value", "dtype", "shape", "requires_grad", "grad", "grad2", "raise"...
    detail: str

    def __str__(self):
        return f"{self.kind}/{self.what}: {self.detail}"


class Skip(Exception):
    """The case does not apply (a form the sample has no use for): it is not counted."""


# ---------------------------------------------------------------------- values
class FamilyMaker(Maker):
    """The entry's :class:`Maker`, drawing values from one family, and remembering how each
    tensor was made so that torch gets the same one."""

    def __init__(self, device, dtype, seed, family):
        super().__init__(device, dtype, seed)
        self.family, self.made = family, {}

    def values(self, shape, dtype=None, low=-2.0, high=2.0, nonzero=False):
        v = super().values(shape, dtype, low, high, nonzero)
        dtype = dtype or self.dtype
        if self.family == "uniform" or v.size == 0 or dtype == "bool":
            return v
        pool = _pool(self.family, dtype)
        if pool is None:
            return v
        pick = self.rng.random(v.shape) < (0.6 if self.family == "ties" else 0.4)
        with np.errstate(all="ignore"):
            drawn = np.asarray(pool, dtype=np.float64)[self.rng.integers(0, len(pool), v.shape)]
            return np.where(pick, drawn.astype(v.dtype), v).astype(v.dtype)

    def __call__(self, *shape, layout=None, dtype=None, **kw):
        t = super().__call__(*shape, layout=layout, dtype=dtype, **kw)
        self.made[id(t)] = (t, layout)
        return t


def _pool(family, dtype):
    if dtype in FLOATS:
        big, tiny, sub, _ = _specials.finfo(dtype)
        return {"special": _specials.float_specials(dtype),
                "ties": [0.0, 1.0, -1.0, 0.5, 2.0],
                "zeros": [0.0, -0.0, sub, -sub, tiny, -tiny],
                "extreme": [big, -big, big / 2, -big / 4, 1 / tiny, math.inf, -math.inf,
                            math.nan]}[family]
    if dtype.startswith("int") or dtype.startswith("uint"):
        lo, hi = _specials.iinfo(dtype)
        return {"special": _specials.int_edges(dtype), "ties": [0, 1, -1 if lo < 0 else 2],
                "zeros": [0, 0, 1], "extreme": [lo, hi, lo + 1, hi - 1]}[family]
    return None


# ---------------------------------------------------------------------- the two sides
def resolve(root, name):
    obj = root
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def torch_op(info):
    """The torch function the entry's plugrad function stands for."""
    name = TORCH_NAMES.get(info.name, info.name)
    try:
        same = info.op is resolve(plugrad, info.name)
    except AttributeError:
        same = False
    if same:
        return resolve(torch, name)
    if info.name.endswith("_"):  # the opdb's ``_fresh`` in-place entries: on a copy
        return lambda x, *a, **k: getattr(x.clone(), info.name)(*a, **k)
    return retarget(info.op)  # the entry's own program (sign fixing ...), run on torch


def retarget(fn):
    """``fn`` (an op database lambda) with the plugrad modules it names, and its module's
    helpers, bound to torch's: the same program for both libraries."""
    import types
    if not isinstance(fn, types.FunctionType):
        return fn
    swap = {id(plugrad): torch, id(plugrad.linalg): torch.linalg,
            id(plugrad.nn.functional): torch.nn.functional, id(plugrad.nn): torch.nn}
    g = dict(fn.__globals__)
    for key, value in fn.__globals__.items():
        if id(value) in swap:
            g[key] = swap[id(value)]
    for key, value in fn.__globals__.items():
        if isinstance(value, types.FunctionType) and value.__module__ == fn.__module__:
            g[key] = types.FunctionType(value.__code__, g, value.__name__, value.__defaults__,
                                        value.__closure__)
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


def tdtype(name):
    return getattr(torch, name)


def _to_torch_tensor(values, dtype, layout):
    if layout == "T":
        return torch.tensor(np.ascontiguousarray(np.swapaxes(values, -1, -2)),
                            dtype=tdtype(dtype)).transpose(-1, -2)
    if layout == "slice":
        return torch.tensor(np.repeat(values, 2, axis=-1), dtype=tdtype(dtype))[..., ::2]
    # C order: torch.tensor keeps a NumPy array's strides (a transposed view's host copy
    # is F-ordered) where plugrad.tensor makes it contiguous; layout-sensitive ops (det,
    # slogdet factor A^T of a contiguous A) must see the same layout on both sides
    return torch.tensor(np.array(values, order="C"), dtype=tdtype(dtype))


def host(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().numpy(force=True).copy()
    return np.array(t.detach().numpy(force=True), copy=True)


def tree_map(fn, obj):
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return tuple(tree_map(fn, v) for v in obj)
    if isinstance(obj, (tuple, list)):
        return type(obj)(tree_map(fn, v) for v in obj)
    if isinstance(obj, dict):
        return {k: tree_map(fn, v) for k, v in obj.items()}
    return fn(obj)


def leaves_of(obj, cls):
    found = []
    tree_map(lambda v: found.append(v) if isinstance(v, cls) else None, obj)
    return found


class Pair:
    """Both sides' inputs of one case, made from the same values: ``grad`` makes floating
    tensors leaves that require grad (the same positions on both sides)."""

    def __init__(self, maker, args, kwargs, device, grad):
        self.p_leaves, self.t_leaves = [], []

        def conv(v, torch_side):
            if isinstance(v, DType):
                return tdtype(v.name) if torch_side else v
            if not isinstance(v, Tensor):
                return v
            _, layout = maker.made.get(id(v), (None, None))
            values, dtype = host(v), v.dtype.name
            if torch_side:
                t = _to_torch_tensor(values, dtype, layout)
            else:
                t = _tensor(values, dtype, device, layout)
            if grad and v.dtype.is_floating_point:
                t = t.detach().requires_grad_(True)
                (self.t_leaves if torch_side else self.p_leaves).append(t)
            return t
        self.p = tree_map(lambda v: conv(v, False), (tuple(args), dict(kwargs)))
        self.t = tree_map(lambda v: conv(v, True), (tuple(args), dict(kwargs)))


def build(info, case):
    """The sample the case names, made with the case's values (and broadcast shapes)."""
    maker = FamilyMaker(case.device, case.dtype, case.seed, case.family)
    try:
        samples = list(info.sample_inputs(maker, case.dtype))
    except (ValueError, TypeError, OverflowError) as exc:  # the generator has no such inputs
        raise Skip(f"no samples in {case.dtype}: {exc}") from exc
    if not samples:
        raise Skip("no samples")
    sample = samples[case.sample % len(samples)]
    args = list(sample.args)
    if case.shapes is not None:
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        for k, i in enumerate(positions[:len(case.shapes)]):
            if args[i].dtype.name == "bool" and case.dtype != "bool":  # where's condition
                args[i] = _remember(maker, maker.mask(case.shapes[k]))
            else:
                dt = case.dtype2 if k > 0 and case.dtype2 else case.dtype
                args[i] = maker(*case.shapes[k], dtype=dt)
    return maker, sample, tuple(args)


def _remember(maker, t):
    maker.made[id(t)] = (t, None)
    return t
