"""Graph nodes: what a differentiable op leaves behind for backward.

A node knows the edges to the nodes of its inputs (``next``: one ``(node, output_nr)`` or
None per input) and the tensors its gradient rule needs (``saved``). Gradient rules are
written with Tensor ops, so running them with grad mode on records a graph of the
backward pass itself: that is all higher-order gradients take.
"""
from __future__ import annotations


#: Set once any node has had a hook or has spanned two devices. Until then the array-mode
#: engine needs no walk of the graph to look for such nodes (see ``array_mode``).
special_nodes = False
special_events = 0  # how many times one was noted


def note_special_node() -> None:
    global special_nodes, special_events
    special_nodes = True
    special_events += 1


INPLACE_HINT = ("Hint: enable anomaly detection with "
                "plugrad.autograd.set_detect_anomaly(True) to see where the operation that "
                "saved it ran in forward.")


class Node:
    """Base of every backward node (``grad_fn``).

    Attributes have class-level defaults so that creating a node on the per-op hot path
    sets only what that op needs.
    """

    next = ()
    seq = 0  # creation order, set by ``attach``: a node is always newer than its inputs' nodes
    saved = ()
    versions = ()
    pre_hooks = None
    post_hooks = None
    _freed = False
    _keeps_output = False
    _is_view = False  # its output shares the input's array/version counter (a view op)

    # -------------------------------------------------------------- to override
    n_outputs = 1
    crosses_devices = False  # True for nodes whose input and output live on different devices

    def backward(self, *grads):
        """Gradients w.r.t. each input given the gradient of each output (None if unused).
        Written with Tensor ops, so it can itself be differentiated: the reference rule."""
        raise NotImplementedError

    #: Optional fast rule of a single-output node: ``backward_arrays(k, g)`` takes and
    #: returns bare arrays of kernel table ``k``. Used when no graph of the backward pass
    #: is recorded; must agree with ``backward`` (see ``array_mode``).
    backward_arrays = None

    # -------------------------------------------------------------- engine side
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next)

    def release(self) -> None:
        """Drop what backward saved, so its memory goes as soon as backward has run."""
        self.saved = ()
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
        note_special_node()
        self.post_hooks.append(fn)
        return _Handle(self.post_hooks, fn)

    def register_prehook(self, fn):
        """Call ``fn(grad_outputs)`` before this node runs; it may return replacements."""
        if self.pre_hooks is None:
            self.pre_hooks = {}
        note_special_node()
        self.pre_hooks.setdefault(-1, []).append(fn)
        return _Handle(self.pre_hooks[-1], fn)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """Sink node of a leaf tensor: adds the incoming gradient into ``leaf.grad``."""

    def __init__(self, variable):
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def check_saved(self) -> None:
        pass


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
