"""Run a :class:`~harness.Case` on both libraries and compare everything a user can see:
values (NaN where NaN, zeros' signs for exact ops), dtype, shape, ``requires_grad``,
None-vs-tensor gradients and their values (first and second order), and whether an error
was raised at all (not its message: the libraries word them differently)."""
from __future__ import annotations

import warnings

import numpy as np
import torch

import plugrad
from plugrad import Tensor
from .harness import (EXACT_MODULES, EXACT_NAMES, GRAD_TOL, TOL, Divergence, Pair,
                     Skip, build, host, retarget, torch_op)

_TORCH_OP_CACHE: dict = {}
#: torch's refusals to track an input's gradient (batch_norm's running stats): such a case
#: says nothing about plugrad
_TORCH_NO_GRAD = ("is not differentiable with respect to argument", "is not implemented")


def _holds_signed_minimum(args, kwargs):
    """PyTorch's gcd and lcm take ``|a|`` in the operand's dtype: at a signed dtype's minimum
    that overflows (C undefined behaviour; ``torch.lcm`` dies of SIGFPE on some pairs), so
    such inputs have no reference result to compare with."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, torch.Tensor) and a.dtype.is_signed and not a.dtype.is_floating_point \
                and a.numel() and bool((a == torch.iinfo(a.dtype).min).any()):
            return True
    return False


def _grid_backward_unsafe(args, kwargs):
    """PyTorch's CPU grid_sample backward casts a NaN or infinite grid coordinate to an
    index and writes through it (a segfault in torch 2.13 that killed the suite): such
    cases have no reference gradient (their values are compared in the order-0 cases)."""
    x, grid = (args + (None, None))[:2]
    return isinstance(grid, torch.Tensor) and (x.requires_grad or grid.requires_grad) \
        and not bool(grid.isfinite().all())


# ops whose PyTorch kernel has no defined result for some inputs: those cases are skipped
_TORCH_UNDEFINED = {"gcd": _holds_signed_minimum, "lcm": _holds_signed_minimum,
                    "nn.functional.grid_sample": _grid_backward_unsafe}


def flatten(obj) -> list:
    if isinstance(obj, (tuple, list)):
        return [x for v in obj for x in flatten(v)]
    if isinstance(obj, dict):
        return [x for k in sorted(obj) for x in flatten(obj[k])]
    return [obj]


def is_exact(info) -> bool:
    module = getattr(info.op, "__module__", "").rsplit(".", 1)[-1]
    return info.name in EXACT_NAMES or (module in EXACT_MODULES and "add" not in info.name)


def _dtype_name(t) -> str:
    return str(t.dtype).removeprefix("torch.") if isinstance(t, torch.Tensor) else t.dtype.name


def compare_values(a, b, tol, exact, what, where) -> list:
    """``a`` from torch, ``b`` from plugrad, as NumPy arrays of the same shape."""
    if a.dtype.kind in "biu" or b.dtype.kind in "biu":
        if a.dtype.kind in "f" or b.dtype.kind in "f" or not np.array_equal(a, b):
            return [Divergence("wrong", what, f"{where}: torch {a!r} vs plugrad {b!r}")]
        return []
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    nan_a, nan_b = np.isnan(a64), np.isnan(b64)
    bad = nan_a != nan_b
    with np.errstate(all="ignore"):
        inf = np.isinf(a64) | np.isinf(b64)
        bad |= inf & ~nan_a & ~nan_b & (a64 != b64)
        fin = ~inf & ~nan_a & ~nan_b
        rtol, atol = (0.0, 0.0) if exact else tol
        bad |= fin & (np.abs(a64 - b64) > atol + rtol * np.abs(a64))
        if exact:
            bad |= (a64 == 0) & (b64 == 0) & (np.signbit(a64) != np.signbit(b64))
    if bad.any():
        idx = tuple(np.argwhere(bad)[0]) if bad.ndim else ()
        return [Divergence("wrong", what, f"{where}: {int(bad.sum())} of {bad.size} differ, "
                           f"first at {idx}: torch {a64[idx]!r} vs plugrad {b64[idx]!r}")]
    return []


def compare_outputs(t_out, p_out, exact, where, what="value") -> list:
    ts, ps = flatten(t_out), flatten(p_out)
    if len(ts) != len(ps):
        return [Divergence("wrong", "structure", f"{where}: torch gives {len(ts)} values, "
                           f"plugrad {len(ps)}")]
    out = []
    for i, (t, p) in enumerate(zip(ts, ps)):
        w = f"{where} output {i}" if len(ts) > 1 else where
        if isinstance(t, torch.Tensor) != isinstance(p, Tensor):
            out.append(Divergence("wrong", "type", f"{w}: torch {type(t).__name__} vs "
                                  f"plugrad {type(p).__name__}"))
            continue
        if not isinstance(t, torch.Tensor):
            same = t == p or (isinstance(t, float) and isinstance(p, float) and t != t and p != p)
            if not same:
                out.append(Divergence("wrong", "value", f"{w}: torch {t!r} vs plugrad {p!r}"))
            continue
        if _dtype_name(t) != _dtype_name(p):
            out.append(Divergence("wrong", "dtype", f"{w}: torch {_dtype_name(t)} vs "
                                  f"plugrad {_dtype_name(p)}"))
            continue
        if tuple(t.shape) != tuple(p.shape):
            out.append(Divergence("wrong", "shape", f"{w}: torch {tuple(t.shape)} vs "
                                  f"plugrad {tuple(p.shape)}"))
            continue
        if t.requires_grad != p.requires_grad:
            out.append(Divergence("wrong", "requires_grad" if what == "value" else
                                  f"{what}-requires_grad", f"{w}: torch {t.requires_grad} "
                                  f"vs plugrad {p.requires_grad}"))
        tol = GRAD_TOL if what.startswith("grad") else TOL.get(_dtype_name(t), (0, 0))
        a, b = host(t), host(p)
        if b.dtype != a.dtype:  # the tensor says one dtype, its backend array holds another
            out.append(Divergence("wrong", "storage-dtype", f"{w}: a {_dtype_name(p)} "
                                  f"tensor whose array is {b.dtype}"))
        out += compare_values(a, b, tol, exact, what, w)
    return out


# ---------------------------------------------------------------------- calling forms
def _call(lib, info, fn, form, args, kwargs):
    if form == "fn":
        return fn(*args, **kwargs)
    x, rest = args[0], args[1:]
    if form == "method":
        if callable(info.method):
            return (retarget(info.method) if lib is torch else info.method)(args, kwargs)
        return getattr(x, info.method)(*rest, **kwargs)
    if form == "inplace":
        y = x.clone()
        r = getattr(y, info.inplace)(*rest, **kwargs)
        return y, r is y
    if form == "inplace_view":  # the in-place op on a view: its base must see the write
        base = lib.stack([x, x])
        view = base[1]
        r = getattr(view, info.inplace)(*rest, **kwargs)
        return base, r is view
    raise ValueError(form)


def _effective_form(info, case, sample, args):
    form = case.form
    if form != "fn" and not (sample.method and args and isinstance(args[0], Tensor)):
        return "fn"
    if form == "method" and info.method is None:
        return "fn"
    if form.startswith("inplace") and not info.inplace:
        form = "method" if info.method is not None else "fn"
    name = info.inplace if form.startswith("inplace") else info.method
    if form != "fn" and isinstance(name, str) and not hasattr(torch.Tensor, name):
        return "fn"  # a plugrad spelling torch lacks (Tensor.maximum_): not a torch program
    return form


def _attempt(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f(), None
        except Exception as exc:  # noqa: BLE001 - any error counts as "raised"
            return None, exc


def _ties_resolved(info, t_inputs, t_out, p_out):
    """topk's order among equal values is unspecified (PyTorch's documentation): plugrad's
    indices are right when they pick torch's values, and are then compared as torch's."""
    if info.name != "topk" or not isinstance(p_out, tuple) or len(p_out) != 2:
        return t_out, p_out, False
    (x, *rest), kw = t_inputs
    dim = rest[1] if len(rest) > 1 else kw.get("dim", -1)
    p_idx = torch.from_numpy(host(p_out[1]))
    if p_idx.dtype != torch.int64 or p_idx.shape != t_out[1].shape or \
            torch.equal(p_idx, t_out[1]):
        return t_out, p_out, False
    try:
        picked = torch.gather(x.detach(), dim, p_idx)
    except (RuntimeError, IndexError):
        return t_out, p_out, False
    if bool(((picked == t_out[0]) | (picked.isnan() & t_out[0].isnan())).all()):
        return t_out[0], p_out[0], True
    return t_out, p_out, False


def _weights(shapes, seed):
    rng = np.random.default_rng(seed + 7)
    return [rng.uniform(0.5, 1.5, s) * np.where(rng.random(s) < 0.5, -1, 1) for s in shapes]


def _loss(lib, outs, ws):
    total = None
    for o, w in zip(outs, ws):
        term = (o * lib.tensor(w, dtype=o.dtype, device=getattr(o, "device", None))).sum()
        total = term if total is None else total + term
    return total


def _grads(lib, outs, leaves, ws, create_graph):
    L = _loss(lib, outs, ws)
    return lib.autograd.grad(L, leaves, allow_unused=True, create_graph=create_graph)


def run_case(info, case) -> tuple[str, list]:
    """``(effective form, divergences)``; raises :class:`Skip` if the case does not apply."""
    maker, sample, args = build(info, case)
    form = _effective_form(info, case, sample, args)
    order = case.order if (case.dtype == "float64" and info.differentiable and sample.grad
                           and case.dtype2 is None) else 0
    pair = Pair(maker, args, sample.kwargs, case.device, grad=order > 0)
    tfn = _TORCH_OP_CACHE.get(info.name) or _TORCH_OP_CACHE.setdefault(info.name,
                                                                      torch_op(info))
    undefined = _TORCH_UNDEFINED.get(info.name)
    if undefined is not None and undefined(*pair.t):
        raise Skip(f"torch.{info.name} has no defined result for these inputs")
    t_out, t_exc = _attempt(lambda: _call(torch, info, tfn, form, *pair.t))
    p_out, p_exc = _attempt(lambda: _call(plugrad, info, info.op, form, *pair.p))
    where = f"{info.name} [{sample.name}] {form}"
    if order and t_exc is not None and any(m in str(t_exc) for m in _TORCH_NO_GRAD):
        raise Skip("torch cannot differentiate this input")
    if t_exc is not None or p_exc is not None:
        if t_exc is None:
            return form, [Divergence("error", "raise", f"{where}: plugrad raised "
                                     f"{type(p_exc).__name__}: {str(p_exc)[:200]}")]
        if p_exc is None:
            return form, [Divergence("accepted", "raise", f"{where}: torch raised "
                                     f"{type(t_exc).__name__}: {str(t_exc)[:200]}")]
        return form, []
    t_out, p_out, tied = _ties_resolved(info, pair.t, t_out, p_out)
    divs = compare_outputs(t_out, p_out, is_exact(info), where)
    if divs or order == 0 or tied:  # other tie-breaking sends the gradient elsewhere
        return form, divs
    return form, divs + _compare_grads(pair, t_out, p_out, order, case.seed, where)


def _compare_grads(pair, t_out, p_out, order, seed, where) -> list:
    t_outs = [o for o in flatten(t_out) if isinstance(o, torch.Tensor) and o.requires_grad]
    p_outs = [o for o in flatten(p_out) if isinstance(o, Tensor) and o.requires_grad]
    if not t_outs or len(t_outs) != len(p_outs):
        return []  # requires_grad differences are already reported
    ws = _weights([tuple(o.shape) for o in t_outs], seed)
    divs = []
    for k in range(1, order + 1):
        what = "grad" if k == 1 else "grad2"
        tg, t_exc = _attempt(lambda: _grads(torch, t_outs, pair.t_leaves, ws, k < order))
        pg, p_exc = _attempt(lambda: _grads(plugrad, p_outs, pair.p_leaves, ws, k < order))
        if t_exc is not None and any(m in str(t_exc) for m in _TORCH_NO_GRAD):
            return divs  # torch has no such derivative (SDPA's double backward)
        if t_exc is not None or p_exc is not None:
            if (t_exc is None) != (p_exc is None):
                kind = "error" if t_exc is None else "accepted"
                exc = p_exc if t_exc is None else t_exc
                who = "plugrad" if t_exc is None else "torch"
                divs.append(Divergence(kind, what, f"{where}: {who} raised "
                                       f"{type(exc).__name__}: {str(exc)[:200]}"))
            return divs
        for i, (a, b) in enumerate(zip(tg, pg)):
            if (a is None) != (b is None):
                divs.append(Divergence("wrong", what + "-none", f"{where} input {i}: torch "
                                       f"{'None' if a is None else 'a tensor'} vs plugrad "
                                       f"{'None' if b is None else 'a tensor'}"))
            elif a is not None:
                divs += compare_outputs(a, b, False, f"{where} {what} of input {i}", what)
        if divs or k == order:
            return divs
        keep = [i for i, a in enumerate(tg) if a is not None and a.requires_grad]
        if not keep:
            return divs
        if any(pg[i] is None or not pg[i].requires_grad for i in keep):
            return [Divergence("wrong", "grad-requires_grad", f"{where}: a gradient that "
                               "requires grad in torch does not in plugrad")]
        t_outs, p_outs = [tg[i] for i in keep], [pg[i] for i in keep]
        ws = _weights([tuple(o.shape) for o in t_outs], seed + k)
    return divs
