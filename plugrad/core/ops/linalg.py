"""Matrix products: ``matmul`` with PyTorch's 1-D/2-D/batched rules, and its relatives."""
from __future__ import annotations

from plugrad.core.autograd.node import Node
from plugrad.core.ops._base import (DTypeError, ShapeError, Tensor, _state, _wrap, attach,
                                    check_device, save, shape_str, sum_to)


class MmBackward0(Node):

    def backward(self, g):
        a, b = self.saved
        ga = sum_to(matmul(g, b.mT), a._data.shape) if self.next[0] else None
        gb = sum_to(matmul(a.mT, g), b._data.shape) if self.next[1] else None
        return ga, gb


def _check(op, a, b):
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{op}: expected Tensors, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    if a.device is not b.device:
        check_device(op, a, b)
    if a.dtype is not b.dtype:
        raise DTypeError(f"{op}: expected m1 and m2 to have the same dtype, but got: "
                         f"{a.dtype.name} != {b.dtype.name}")
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"{op}: both arguments to matmul need to be at least 1D, but they "
                         f"are {a.ndim}D and {b.ndim}D")
    ka = a._data.shape[-1]
    kb = b._data.shape[-2] if b.ndim >= 2 else b._data.shape[0]
    if ka != kb:
        sa = "x".join(str(s) for s in a.shape)
        sb = "x".join(str(s) for s in b.shape)
        raise ShapeError(f"{op}: mat1 and mat2 shapes cannot be multiplied ({sa} and {sb}): "
                         f"shapes {shape_str(a.shape)} and {shape_str(b.shape)}")


def _matmul_nd(a, b, op="matmul"):
    """Both operands at least 2-D: one kernel call, one node."""
    k = a._k
    try:
        out = k.matmul(a._data, b._data)
    except Exception as exc:
        from plugrad.core.ops._base import broadcast_shapes
        broadcast_shapes(op, a._data.shape[:-2], b._data.shape[:-2])
        raise
    r = _wrap(out, a.dtype, a.device, k)
    if _state.enabled and (a._rg or b._rg):
        node = MmBackward0()
        save(node, a, b)
        attach(r, node, (a, b))
    return r


def matmul(a, b):
    _check("matmul", a, b)
    if a.ndim >= 2 and b.ndim >= 2:
        if a.ndim > 2 or b.ndim > 2:
            from plugrad.core.ops._base import broadcast_shapes
            broadcast_shapes("matmul", a._data.shape[:-2], b._data.shape[:-2])
        return _matmul_nd(a, b)
    if a.ndim == 1 and b.ndim == 1:
        return _matmul_nd(a.reshape(1, -1), b.reshape(-1, 1)).reshape(())
    if a.ndim == 1:
        return _matmul_nd(a.unsqueeze(0), b).squeeze(-2)
    return _matmul_nd(a, b.unsqueeze(-1)).squeeze(-1)


def mm(a, b):
    if a.ndim != 2 or b.ndim != 2:
        raise ShapeError(f"mm: expected 2-D tensors, got {a.ndim}-D and {b.ndim}-D")
    return matmul(a, b)


def bmm(a, b):
    if a.ndim != 3 or b.ndim != 3:
        raise ShapeError(f"bmm: expected 3-D tensors, got {a.ndim}-D and {b.ndim}-D")
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"bmm: batch sizes differ: {shape_str(a.shape)} and "
                         f"{shape_str(b.shape)}")
    return matmul(a, b)


def mv(a, v):
    if a.ndim != 2 or v.ndim != 1:
        raise ShapeError(f"mv: expected a 2-D and a 1-D tensor, got {a.ndim}-D and {v.ndim}-D")
    return matmul(a, v)


def dot(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"dot: 1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    return matmul(a, b)


def outer(a, b):
    return a.reshape(-1, 1) * b.reshape(1, -1)


def addmm(bias, a, b, *, beta=1, alpha=1):
    out = matmul(a, b)
    if alpha != 1:
        out = out * alpha
    return out + (bias if beta == 1 else bias * beta)


def baddbmm(bias, a, b, *, beta=1, alpha=1):
    return addmm(bias, a, b, beta=beta, alpha=alpha)


def einsum(equation, *operands):
    """Einstein summation for up to two operands, reduced to permute/reshape/matmul."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    lhs, _, rhs = equation.replace(" ", "").partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise ValueError(f"einsum: {len(inputs)} subscripts but {len(operands)} operands")
    if "..." in equation:
        raise NotImplementedError("einsum: ellipsis is not supported")
    if not _ and not rhs:
        counts = {}
        for c in lhs.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(c for c, n in counts.items() if n == 1))
    if len(operands) == 1:
        (x,), (spec,) = operands, inputs
        summed = tuple(i for i, c in enumerate(spec) if c not in rhs)
        y = x.sum(summed) if summed else x
        kept = [c for c in spec if c in rhs]
        return y.permute([kept.index(c) for c in rhs]) if kept else y
    if len(operands) != 2:
        raise NotImplementedError("einsum: at most two operands are supported")
    (a, b), (sa, sb) = operands, inputs
    letters = sorted(set(sa) | set(sb), key=lambda c: ((sa + sb).index(c)))
    batch = [c for c in letters if c in sa and c in sb and c in rhs]
    contract = [c for c in letters if c in sa and c in sb and c not in rhs]
    only_a = [c for c in sa if c not in sb]
    only_b = [c for c in sb if c not in sa]
    a = a.sum(tuple(i for i, c in enumerate(sa) if c in only_a and c not in rhs)) \
        if any(c not in rhs for c in only_a) else a
    sa = "".join(c for c in sa if c in rhs or c in sb)
    b = b.sum(tuple(i for i, c in enumerate(sb) if c in only_b and c not in rhs)) \
        if any(c not in rhs for c in only_b) else b
    sb = "".join(c for c in sb if c in rhs or c in sa)
    only_a = [c for c in sa if c not in sb]
    only_b = [c for c in sb if c not in sa]
    size = {c: a.shape[i] for i, c in enumerate(sa)}
    size.update({c: b.shape[i] for i, c in enumerate(sb)})
    pa = a.permute([sa.index(c) for c in batch + only_a + contract])
    pb = b.permute([sb.index(c) for c in batch + contract + only_b])
    nb = [size[c] for c in batch]
    prod = lambda cs: int(__import__("math").prod(size[c] for c in cs))  # noqa: E731
    ma = pa.reshape(*nb, prod(only_a), prod(contract))
    mb = pb.reshape(*nb, prod(contract), prod(only_b))
    out = matmul(ma, mb).reshape(*nb, *[size[c] for c in only_a], *[size[c] for c in only_b])
    current = batch + only_a + only_b
    return out.permute([current.index(c) for c in rhs]) if current else out
