"""Op declarations: every public spelling of an op, written once beside its forward.

``@op(...)`` records, for the function it decorates, the names users reach it by:
``plugrad.<name>`` (``torch=``), ``Tensor.<name>`` (``method=``), the in-place method
(``inplace=``), operators (``dunder=``, and ``reflected=`` for ``__rsub__``-style operators
that swap the operands) and augmented assignment (``augmented=``), and
``nn.functional.<name>`` (``functional=``). The Tensor method table (``methods.py``), the
``plugrad.*`` and ``nn.functional`` namespaces and the op database's spellings are
generated from these records, so adding an op is: its forward, its node with its one
gradient rule, this decorator, and its samples in the op database.

Spellings are space-separated names; ``method`` may also map a name to a callable for
method forms whose arguments differ from the function's (``x.where(cond, other)``).
"""
from __future__ import annotations

import dataclasses
from typing import Callable


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


def torch_namespace() -> dict:
    """``plugrad.<name>`` -> function, for every declared op."""
    return {n: d.fn for d in OPS.values() for n in d.torch}


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
