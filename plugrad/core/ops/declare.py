"""Op declarations: every public spelling of an op, written once beside its forward.

``@op(...)`` records, for the function it decorates, the names users reach it by:
``plugrad.<name>`` (``torch=``), ``Tensor.<name>`` (``method=``), the in-place method
(``inplace=``), operators (``dunder=``, and ``reflected=`` for ``__rsub__``-style operators
that swap the operands) and augmented assignment (``augmented=``), and
``nn.functional.<name>`` (``functional=``). The Tensor method table (``methods.py``), the
``plugrad.*`` and ``nn.functional`` namespaces and the op database's spellings are
generated from these records, so adding an op is: its forward, its node with its one
gradient rule, this decorator, and its samples in the op database.

Every ``plugrad.<name>`` function also takes ``out=`` (PyTorch's rules, one implementation:
:mod:`plugrad.core.outputs`), except the view ops, which have none in PyTorch either.

Spellings are space-separated names; ``method`` may also map a name to a callable for
method forms whose arguments differ from the function's (``x.where(cond, other)``).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Callable

from plugrad.core.outputs import write_out, write_outs


@dataclasses.dataclass
class OpDecl:
    name: str
    fn: Callable
    torch: tuple = ()
    method: tuple = ()
    method_forms: dict = dataclasses.field(default_factory=dict)
    inplace: tuple = ()
    dunder: tuple = ()
    reflected: tuple = ()
    augmented: tuple = ()
    functional: tuple = ()
    #: kernel of ``Backend.update_`` that the in-place spellings may write through directly
    #: (``x.add_(y)`` outside the graph: one kernel call into x's array)
    fast_inplace: str | None = None
    module: str = ""


#: Every declared op by name, in declaration order.
OPS: dict[str, OpDecl] = {}


def _names(spec) -> tuple:
    if spec is None:
        return ()
    if isinstance(spec, str):
        return tuple(spec.split())
    return tuple(spec)


def op(torch=None, *, method=None, inplace=None, dunder=None, reflected=None,
       augmented=None, functional=None, fast_inplace=None, name=None):
    """Declare the decorated function as an op with these spellings (see module doc)."""
    def deco(fn):
        forms = {}
        methods = method
        if isinstance(method, dict):
            forms = {k: v for k, v in method.items() if v is not None}
            methods = [k for k, v in method.items() if v is None]
        decl = OpDecl(name=name or fn.__name__.rstrip("_"), fn=fn, torch=_names(torch),
                      method=_names(methods), method_forms=forms, inplace=_names(inplace),
                      dunder=_names(dunder), reflected=_names(reflected),
                      augmented=_names(augmented), functional=_names(functional),
                      fast_inplace=fast_inplace, module=fn.__module__)
        if decl.name in OPS:
            raise ValueError(f"op {decl.name!r} is declared twice ({OPS[decl.name].module} "
                             f"and {decl.module})")
        OPS[decl.name] = decl
        return fn
    return deco


#: ``plugrad.<name>`` functions that return views of their input (PyTorch: no ``out=``)
NO_OUT = frozenset("""reshape view t transpose permute squeeze unsqueeze narrow expand
    broadcast_to broadcast_tensors flatten unflatten movedim moveaxis swapaxes swapdims split
    chunk unbind tensor_split atleast_1d""".split())
#: ops whose ``out=`` must have the result's dtype (PyTorch casts into the others' ``out``)
OUT_EXACT = frozenset("""matmul mm bmm mv dot outer ger addmm baddbmm where clamp clamp_min
    clamp_max clip amax amin norm""".split())
#: ops that compute in ``out``'s dtype (as if given ``dtype=out.dtype``)
OUT_DTYPE = frozenset("sum nansum prod cumsum cumprod".split())


def keyword_aliases(fn: Callable) -> dict:
    """PyTorch's keyword names for the first arguments of ``fn`` where it spells them
    otherwise (``torch.add(input=x, other=y)`` for ``add(a, b)``): keyword -> position."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return {}
    params = code.co_varnames[:code.co_argcount]
    out = {}
    if params and params[0] in ("x", "a", "t", "A") and "input" not in params:
        out["input"] = 0
        if len(params) > 1 and params[1] == "b" and "other" not in params:
            out["other"] = 1
    return out


def _positional(args: tuple, kwargs: dict, aliases: dict) -> tuple:
    """``args`` with the aliased keywords moved to their positions (where still free)."""
    for key, pos in aliases.items():  # (in position order)
        if key in kwargs and len(args) == pos:
            args = args + (kwargs.pop(key),)
    return args


def with_out(name: str, fn: Callable) -> Callable:
    """``fn`` taking ``out=`` as well: a tensor, or a tuple for ops returning several."""
    exact = name in OUT_EXACT
    as_dtype = name in OUT_DTYPE
    aliases = keyword_aliases(fn)

    @functools.wraps(fn)
    def public(*args, out=None, **kwargs):
        if aliases and kwargs:
            args = _positional(args, kwargs, aliases)
        if as_dtype and out is not None and kwargs.get("dtype") is None:
            kwargs["dtype"] = getattr(out, "dtype", None)
        result = fn(*args, **kwargs)
        if out is None:
            return result
        if isinstance(result, tuple):
            return write_outs(name, out, result, exact)
        return write_out(name, out, result, exact)
    return public


def torch_namespace() -> dict:
    """``plugrad.<name>`` -> function, for every declared op (with ``out=``)."""
    out = {}
    for d in OPS.values():
        for n in d.torch:
            code = d.fn.__code__
            params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
            takes_out = n not in NO_OUT and "out" not in params
            out[n] = with_out(n, d.fn) if takes_out else d.fn
    return out


def functional_namespace() -> dict:
    """``nn.functional.<name>`` -> function, for every declared op."""
    return {n: d.fn for d in OPS.values() for n in d.functional}


def by_spelling() -> dict:
    """Every spelling (torch name, method, in-place, operator) -> its declaration."""
    out = {}
    for d in OPS.values():
        for n in (d.torch + d.method + tuple(d.method_forms) + d.inplace + d.dunder
                  + d.reflected + d.augmented):
            out[n] = d
    return out
