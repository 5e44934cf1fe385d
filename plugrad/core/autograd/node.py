"""Graph nodes: what a differentiable op leaves behind for backward.

A node knows the edges to the nodes of its inputs (``next``: one ``(node, output_nr)`` or
None per input), the kernel table of the device its output lives on (``k``), and what its
gradient rule needs: ``saved`` (Tensors, version-checked, or plain Python values) and the
same values as bare backend arrays (``arrays``).

Every node has exactly one gradient rule, ``grad(F, g, *saved)``, written against a small
namespace of gradient ops ``F``. The engine binds ``F`` to the node's kernel table with the
saved *arrays* for the usual ``backward()`` (no Tensors, no checks, no graph), and to the
differentiable Tensor ops with the saved *Tensors* for ``create_graph=True``: one text, two
bindings, which is all higher-order gradients take.
"""
from __future__ import annotations

import weakref

from plugrad.core.tensor import _wrap

INPLACE_HINT = ("Hint: enable anomaly detection with "
                "plugrad.autograd.set_detect_anomaly(True) to see where the operation that "
                "saved it ran in forward.")


class _Output:
    """Marks, in ``Node.saved``, the slot of the node's own output (see :class:`KeepsOutput`)."""

    def __repr__(self) -> str:
        return "OUTPUT"


OUTPUT = _Output()


class Node:
    """Base of every backward node (``grad_fn``).

    Attributes have class-level defaults so that creating a node on the per-op hot path
    sets only what that op needs.
    """

    next = ()
    seq = 0  # creation order, set by ``record``: a node is always newer than its inputs' nodes
    k = None  # kernel table of the output's device
    saved = ()  # what the rule needs, as Tensors / Python values (create_graph, version checks)
    arrays = ()  # the same, as backend arrays (plain backward)
    versions = ()
    casts = None  # a dtype: saved floating Tensors are cast to it for the Tensor binding
    meta = None  # per input (shape, dtype) or None: gradients are reduced/cast to it
    pre_hooks = None
    post_hooks = None
    special = False  # has hooks or a user rule: the engine takes its detailed path
    _freed = False
    _keeps_output = False
    _is_view = False  # its output shares the input's array/version counter (a view op)
    records_inputs = False  # constant_grads: its create_graph gradients record its inputs

    # -------------------------------------------------------------- to override
    n_outputs = 1

    def grad(self, F, g, *saved):
        """The gradient w.r.t. each input (a tuple, None where not needed) given ``g``, the
        gradient of the output (a list for multi-output nodes), with ``F`` the gradient ops
        and ``saved`` what the op saved, both in one binding (arrays or Tensors)."""
        raise NotImplementedError(f"{self.name()} has no gradient rule")

    #: A node whose rule is user code on Tensors (``autograd.Function``): the engine hands
    #: it Tensors (``backward(*grads)``) in both passes.
    tensor_rule = False


    # -------------------------------------------------------------- engine side
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next)

    def saved_tensors(self) -> tuple:
        """``saved`` as the Tensor binding sees it: the output rebuilt, casts applied."""
        out = []
        for s in self.saved:
            if s is OUTPUT:
                s = self.output_tensor()
            elif self.casts is not None and getattr(s, "dtype", None) is not None \
                    and s.dtype is not self.casts and hasattr(s, "_vc"):
                s = s.to(self.casts)
            out.append(s)
        return tuple(out)

    def release(self) -> None:
        """Drop what backward saved, so its memory goes as soon as backward has run."""
        self.saved = ()
        self.arrays = ()
        self._freed = True

    def check_saved(self) -> None:
        if self._freed:
            raise RuntimeError(
                f"Trying to backward through the graph a second time (or directly access saved "
                f"tensors after they have already been freed) in {self.name()}. Saved "
                f"intermediate values of the graph are freed when you call .backward() or "
                f"autograd.grad(). Specify retain_graph=True if you need to backward through "
                f"the graph a second time or if you need to access saved tensors after calling "
                f"backward.")
        for t, v in zip(self.saved, self.versions):
            if v is not None and t._vc[0] != v:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{t.dtype.name} tensor of shape "
                    f"{list(t._data.shape)}] is at version {t._vc[0]}; expected version {v} "
                    f"instead. It was saved by {self.name()}. {INPLACE_HINT}")

    def register_hook(self, fn):
        """Call ``fn(grad_inputs, grad_outputs)`` after this node has run."""
        if self.post_hooks is None:
            self.post_hooks = []
        self.special = True
        self.post_hooks.append(fn)
        return _Handle(self.post_hooks, fn)

    def register_prehook(self, fn):
        """Call ``fn(grad_outputs)`` before this node runs; it may return replacements."""
        if self.pre_hooks is None:
            self.pre_hooks = {}
        self.special = True
        self.pre_hooks.setdefault(-1, []).append(fn)
        return _Handle(self.pre_hooks[-1], fn)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class KeepsOutput(Node):
    """A node whose rule needs its own output (``exp``, ``tanh``, softmax, ...).

    It keeps the output's array and version counter, not the Tensor (which would be a
    reference cycle through ``grad_fn``); the Tensor binding rebuilds the output with this
    node as its ``grad_fn``, so higher-order gradients flow through it.
    """

    out_data = None
    _keeps_output = True

    def keep_output(self, r) -> None:
        self.out_data = r._data
        self.out_meta = (r.dtype, r.device)
        self.out_vc = r._vc
        self.out_version = r._vc[0]

    def check_saved(self) -> None:
        Node.check_saved(self)
        if self.out_data is not None and self.out_vc[0] != self.out_version:
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: the output of {self.name()} is at version "
                f"{self.out_vc[0]}; expected version {self.out_version} instead. It is a "
                f"[{self.out_meta[0].name} tensor of shape {list(self.out_data.shape)}] that "
                f"{self.name()} saved for its backward. {INPLACE_HINT}")

    def output_tensor(self):
        dt, dev = self.out_meta
        y = _wrap(self.out_data, dt, dev, self.k)
        y._vc = self.out_vc
        y.grad_fn = self
        y._rg = True
        return y

    def release(self) -> None:
        Node.release(self)
        self.out_data = None


class AccumulateGrad(Node):
    """Sink node of a leaf tensor: adds the incoming gradient into ``leaf.grad``.

    The leaf keeps its accumulator (so it is made once, not once per step) and the
    accumulator refers back to the leaf weakly (no reference cycle)."""

    def __init__(self, variable):
        self._variable = weakref.ref(variable)
        self.version_counter = variable._vc  # views of the leaf share it (in-place checks)
        self._k_made = variable._k  # adds the gradients of a leaf that is gone (used twice)

    @property
    def variable(self):
        return self._variable()

    @property
    def k(self):  # the leaf's table now (``.data`` or ``module.to`` may have moved it)
        v = self._variable()
        return self._k_made if v is None else v._k

    @property
    def device(self):
        return self._variable().device

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # PyTorch's name() of this node

    def check_saved(self) -> None:
        pass


_NAMED: dict = {}


def torch_named(cls, name: str):
    """``cls`` under the name PyTorch gives the node of the op it stands for.

    Why: programs print ``loss.grad_fn`` and test ``type(t.grad_fn).__name__``; where
    plugrad's node for an op differs from PyTorch's (one fused node for ``F.linear`` is
    ``AddmmBackward0`` or ``MmBackward0`` in PyTorch, a loss built from smaller ops is
    ``MseLossBackward0``), the node takes PyTorch's name. A subclass with no new state
    (cached, same layout), so behaviour is the class's own.
    """
    cls = cls.__dict__.get("_named_from", cls)  # renaming a renamed node: from its class
    if cls.__name__ == name:
        return cls
    sub = _NAMED.get((cls, name))
    if sub is None:
        sub = _NAMED[(cls, name)] = type(name, (cls,), {
            "__slots__": (), "__module__": cls.__module__, "__qualname__": name,
            "_named_from": cls,
            "__doc__": f"{cls.__name__} as PyTorch names it."})
    return sub


def present_as(out, name: str):
    """Rename ``out.grad_fn`` (made by the op returning ``out``) to PyTorch's ``name``;
    ``out`` itself is returned. A leaf or a tensor outside the graph is left alone."""
    node = out.grad_fn
    if node is not None and node.__class__ is not AccumulateGrad:
        node.__class__ = torch_named(node.__class__, name)
    return out


class _Handle:
    """What ``register_hook`` returns: ``remove()`` takes the hook off again."""

    def __init__(self, hooks: list, fn):
        self._hooks = hooks
        self._fn = fn

    def remove(self) -> None:
        try:
            self._hooks.remove(self._fn)
        except ValueError:
            pass
