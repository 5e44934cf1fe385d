"""The NumPy backend's ``compile_program``: a captured program's kernel calls as direct
calls of NumPy's ufuncs.

Eagerly, a kernel is a thin Python wrapper around a ufunc (it keeps floating-point warnings
quiet where the caller made them errors, dispatches ``update_`` on its op name, turns
``x ** 2`` into ``x * x``). In a replay, where a small step is nothing but such calls, the
wrapper's frame is a good part of each call's cost; so the replay calls the ufunc itself
and falls back to the wrapper only where the ufunc raises (a warning made an error, an
immutable NumPy scalar or a read-only view to update): the same values, the same effects.
Warnings raised in the replay are filtered as plugrad's (its module name), as eagerly.
"""
from __future__ import annotations

import numpy as np


def _first_operand(dst, *args, out=None):
    """``ufunc(dst, value, out=dst)`` raised a warning made an error: ``dst`` is written."""
    return out


def _update_via(kernel, op):
    def update(dst, value, out=None):
        return kernel(op, dst, value)
    return update


def compile_program(backend_cls, steps: list, update_ufuncs: dict, mul) -> list:
    """Rewrite the steps whose kernels are ``backend_cls``'s own (not a plugin's);
    ``update_ufuncs``: ``update_``'s forms by op name; ``mul``: the quiet multiply."""
    for st in steps:
        if st.kwargs or st.fallback:
            continue
        fn, args = st.fn, st.args
        ufunc = getattr(fn, "ufunc", None)  # an _ieee_unary / _ieee_binary wrapper
        if isinstance(ufunc, np.ufunc) and len(args) == ufunc.nin:
            st.fn, st.fallback = ufunc, ((RuntimeWarning, fn),)
            continue
        ufunc = getattr(fn, "into_ufunc", None)  # an _ieee_update form: into its first operand
        if isinstance(ufunc, np.ufunc) and len(args) == 2:
            st.fn, st.kwargs = ufunc, {"out": args[0]}
            st.fallback = ((RuntimeWarning, _first_operand),)
            continue
        func = getattr(fn, "__func__", None)
        if func is backend_cls.update_ and len(args) == 3 and isinstance(args[0], str):
            ufunc = getattr(update_ufuncs.get(args[0]), "into_ufunc", None)
            if ufunc is not None:
                st.fn, st.args, st.kwargs = ufunc, args[1:], {"out": args[1]}
                st.fallback = ((RuntimeWarning, _first_operand),
                               ((TypeError, ValueError), _update_via(fn, args[0])))
        elif func is backend_cls.pow and len(args) == 2 and type(args[1]) in (int, float) \
                and args[1] == 2:
            st.fn, st.args = np.multiply, (args[0], args[0])  # what pow(x, 2) computes
            st.fallback = ((RuntimeWarning, mul),)
    return steps
