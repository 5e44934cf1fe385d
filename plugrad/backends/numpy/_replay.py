"""The NumPy backend's ``compile_program``: a captured program's kernel calls as direct
calls of NumPy's ufuncs.

Eagerly, a kernel is a thin Python wrapper around a ufunc (it keeps floating-point warnings
quiet where the caller made them errors, dispatches ``update_`` on its op name, turns
``x ** 2`` into ``x * x``). In a replay, where a small step is nothing but such calls, the
wrapper's frame is a good part of each call's cost; so the replay calls the ufunc (or, for
``permute`` and ``reshape``, the array method) itself and falls back to the wrapper only
where it raises (a warning made an error, an immutable NumPy scalar or a read-only view to
update, a NumPy scalar to reshape): the same values, the same effects.
Warnings raised in the replay are filtered as plugrad's (its module name), as eagerly.

A Python number beside a float array costs NumPy about 0.27 us a call to convert (its
weak-scalar rule rounds it to the array's dtype first), a third of a small ufunc call: the
replay holds it as that rounded 0-d array instead (:func:`_scalars_as_arrays`).

Where a chain of kernels recomputes what an earlier one computed on the way, the replay
keeps it instead (:class:`_SharedSoftmax`: a cross-entropy's backward and its forward's
``log_softmax``): the same bits, fewer passes.
"""
from __future__ import annotations

import math

import numpy as np

_prod = math.prod


def _first_operand(dst, *args, out=None):
    """``ufunc(dst, value, out=dst)`` raised a warning made an error: ``dst`` is written."""
    return out


def _update_via(kernel, op):
    def update(dst, value, out=None):
        return kernel(op, dst, value)
    return update


class _SharedSoftmax:
    """``log_softmax(x, 1)`` and a later ``cross_entropy_backward(g, x, ...)`` of the same
    ``x``: the backward's ``softmax(x, 1)`` is ``exp(x - max) / sum``, whose parts the forward
    computed on the way, bit for bit; the forward keeps them for the backward (a maximum
    over short rows is the dearest pass of a classifier's loss). Where the backward gets
    another ``x`` than the one kept (a concurrent replay of the same program), it computes
    afresh."""

    __slots__ = ("backend", "kept")

    def __init__(self, backend):
        self.backend, self.kept = backend, None

    def log_softmax(self, x, axis):
        logp, e, s, finite = self.backend._log_softmax_parts(x, axis)
        self.kept = (x, e, s, finite)
        return logp

    def cross_entropy_backward(self, g, x, target, valid, scale):
        kept, self.kept = self.kept, None
        k = self.backend
        if kept is None or kept[0] is not x:
            return k.cross_entropy_backward(g, x, target, valid, scale)
        _, p, s, finite = kept
        if finite:  # what softmax divides, as it does (quietly where the shift was not finite)
            p /= s
        else:
            with k._quiet():
                p /= s
        return k._cross_entropy_grad(p, g, target, valid, scale)


def _writes(st) -> bool:
    """Whether a step may write into an existing array (an in-place kernel, or one written
    into its operand's buffer by the replay's buffer reuse)."""
    name = st.name
    return name.endswith("_") or name.endswith("_into") or name == "assign" or \
        "out" in st.kwargs


def _share_softmax(backend_cls, steps: list) -> None:
    """Pair each ``cross_entropy_backward`` with the ``log_softmax`` of its logits (axis 1,
    the same backend object), where nothing between them may have written into an array."""
    pending: dict = {}  # slot of the logits -> the log_softmax step
    for st in steps:
        func, args = getattr(st.fn, "__func__", None), st.args
        if func is backend_cls.log_softmax and len(args) == 2 and args[1] == 1 \
                and hasattr(args[0], "slot") and not st.kwargs and not st.fallback:
            pending[args[0].slot] = st
        elif func is backend_cls.cross_entropy_backward and len(args) == 5 \
                and hasattr(args[1], "slot") and not st.kwargs and not st.fallback:
            fwd = pending.pop(args[1].slot, None)
            if fwd is not None and fwd.fn.__self__ is st.fn.__self__:
                share = _SharedSoftmax(st.fn.__self__)
                fwd.fn, st.fn = share.log_softmax, share.cross_entropy_backward
        elif _writes(st):
            pending.clear()


def _scalars_as_arrays(st) -> None:
    """A ufunc step's Python number operand becomes a 0-d array of the float array operand's
    dtype where the result has that dtype too: NumPy rounds the number to it before
    computing (NEP 50), so the values, warnings included, are the number's."""
    out = st.out_meta
    if not out or getattr(out[1], "kind", "") != "f" or len(st.args) != 2 \
            or len(st.arg_meta) != 2:
        return
    for i in (0, 1):
        a, other = st.args[i], st.arg_meta[1 - i]
        if type(a) in (int, float) and other is not None and other[1] == out[1]:
            with np.errstate(all="ignore"):  # a number beyond float16's range: inf, as NumPy
                value = np.array(a, dtype=out[1])
            st.args = (value, st.args[1]) if i == 0 else (st.args[0], value)
            return


def _sum_via(kernel):
    def total(x, axes, dtype, out, keepdims):
        return kernel(x, axes, keepdims)
    return total


def compile_program(backend_cls, steps: list, update_ufuncs: dict, mul) -> list:
    """Rewrite the steps whose kernels are ``backend_cls``'s own (not a plugin's);
    ``update_ufuncs``: ``update_``'s forms by op name; ``mul``: the quiet multiply."""
    _share_softmax(backend_cls, steps)
    for st in steps:
        if st.kwargs or st.fallback:
            continue
        fn, args = st.fn, st.args
        ufunc = getattr(fn, "ufunc", None)  # an _ieee_unary / _ieee_binary wrapper
        if isinstance(ufunc, np.ufunc) and len(args) == ufunc.nin:
            st.fn, st.fallback = ufunc, ((RuntimeWarning, fn),)
            _scalars_as_arrays(st)
            continue
        ufunc = getattr(fn, "into_ufunc", None)  # an _ieee_update form: into its first operand
        if isinstance(ufunc, np.ufunc) and len(args) == 2:
            st.fn, st.kwargs = ufunc, {"out": args[0]}
            st.fallback = ((RuntimeWarning, _first_operand),)
            _scalars_as_arrays(st)
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
        elif fn is backend_cls.sum and len(args) == 3 and st.arg_meta and st.arg_meta[0] \
                and getattr(st.arg_meta[0][1], "kind", "") == "f" \
                and st.arg_meta[0][1].itemsize >= 4:  # (b)float16 accumulate in float32
            st.fn, st.args = np.add.reduce, (args[0], args[1], st.arg_meta[0][1], None, args[2])
            st.fallback = ((RuntimeWarning, _sum_via(fn)),)
        elif fn is backend_cls.full and len(args) == 4 and not any(
                hasattr(a, "slot") for a in args) and isinstance(args[0], tuple) \
                and _prod(args[0]) <= 64:
            # a small array of literals written later (a gradient zeroed): a copy of one
            # made now, as full makes it
            st.fn, st.args = np.ndarray.copy, (fn(*args),)
        elif (func is backend_cls.permute or fn is backend_cls.reshape) and len(args) == 2:
            # the array methods they call (a NumPy scalar, 0-d, is no ndarray: the kernel)
            method = np.ndarray.transpose if func is backend_cls.permute else np.ndarray.reshape
            st.fn, st.fallback = method, ((TypeError, fn),)
    return steps
