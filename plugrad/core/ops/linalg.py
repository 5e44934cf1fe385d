"""Matrix products: ``matmul`` with PyTorch's 1-D/2-D/batched rules, and its relatives.

Everything funnels into one batched ``matmul`` kernel call with one backward node, so every
backend gets all of these (and ``einsum``) from a single primitive. An N-d operand times a
2-D matrix (``x @ W`` in a transformer) is one 2-D product, forward and backward.
"""
from __future__ import annotations

import math

from plugrad.core import autocast as _ac
from plugrad.core.autograd.grad_ops import sum_to
from plugrad.core.autograd.node import Node
from plugrad.core.autograd.record import record
from plugrad.core.errors import (ArgumentError, DTypeError, DTypeNotImplementedError, ShapeError,
                                  broadcast_shapes, check_device, shape_str)
from plugrad.core.grad_mode import _state
from plugrad.core.ops.declare import op
from plugrad.core.tensor import Tensor, _wrap


def _swap_last(ndim: int) -> tuple:
    """The axes order of ``.mT``."""
    return tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)


def _flat2(F, x):
    """``x`` (..., n) as a 2-D (prod(...), n) matrix."""
    shape = x.shape
    return x if len(shape) == 2 else F.reshape(x, (math.prod(shape[:-1]), shape[-1]))


class MmBackward0(Node):
    """Gradients of a (batched) product; broadcast batch dims are summed back, and a batch
    of rows times one matrix takes its weight gradient as one 2-D product."""

    def grad(self, F, g, a, b):
        ga = gb = None
        if len(b.shape) == 2 and len(a.shape) > 2:  # (..., k) @ (k, m)
            if self.next[0]:
                ga = F.reshape(F.matmul(_flat2(F, g), F.permute(b, (1, 0))), a.shape)
            if self.next[1]:
                gb = F.matmul(F.permute(_flat2(F, a), (1, 0)), _flat2(F, g))
            return ga, gb
        if self.next[0]:
            ga = sum_to(F, F.matmul(g, F.permute(b, _swap_last(len(b.shape)))), a.shape)
        if self.next[1]:
            gb = sum_to(F, F.matmul(F.permute(a, _swap_last(len(a.shape))), g), b.shape)
        return ga, gb


def _bool_product(name):
    raise DTypeNotImplementedError(f"{name}: not implemented for 'Bool' tensors (as in "
                                   "PyTorch; convert with .long() or .float() first)")


def _check(name, a, b):
    """Operands of a product: tensors, one device, one dtype, at least 1-D, inner sizes."""
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{name}: expected Tensors, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    if a.device is not b.device:
        check_device(name, a, b)
    if a.dtype.name == "bool" or b.dtype.name == "bool":
        _bool_product(name)
    if a.dtype is not b.dtype:
        raise DTypeError(f"{name}: expected both operands to have the same dtype, but got "
                         f"{a.dtype.name}{shape_str(a.shape)} and {b.dtype.name}"
                         f"{shape_str(b.shape)}")
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"{name}: both arguments need to be at least 1D, but they are "
                         f"{a.ndim}D and {b.ndim}D (shapes {shape_str(a.shape)} and "
                         f"{shape_str(b.shape)})")
    ka = a._data.shape[-1]
    kb = b._data.shape[-2] if b.ndim >= 2 else b._data.shape[0]
    if ka != kb:
        sa = "x".join(str(s) for s in a.shape)
        sb = "x".join(str(s) for s in b.shape)
        raise ShapeError(f"{name}: shapes cannot be multiplied ({sa} and {sb}): inner sizes "
                         f"{ka} and {kb} differ (shapes {shape_str(a.shape)} and "
                         f"{shape_str(b.shape)})")
    if a.ndim > 2 or b.ndim > 2:
        broadcast_shapes(name, a._data.shape[:-2], b._data.shape[:-2] if b.ndim >= 2 else ())


def _matmul_nd(a, b):
    """Both operands at least 2-D and checked: one kernel call, one node."""
    k = a._k
    ad, bd = a._data, b._data
    if len(bd.shape) == 2 and len(ad.shape) > 2:  # one 2-D GEMM, not a batch of them
        lead = ad.shape[:-1]
        out = k.reshape(k.matmul(k.reshape(ad, (math.prod(lead), ad.shape[-1])), bd),
                        lead + (bd.shape[1],))
    else:
        out = k.matmul(ad, bd)
    r = _wrap(out, a.dtype, a.device, k)
    if _state.enabled and (a._rg or b._rg):
        record(r, MmBackward0(), (a, b), (a, b))
    return r


def _product(name, a, b):
    """PyTorch's ``matmul`` rules: a 1-D operand gains a dim that the result then drops."""
    _check(name, a, b)
    if a.ndim >= 2 and b.ndim >= 2:
        return _matmul_nd(a, b)
    if a.ndim == 1 and b.ndim == 1:
        return _matmul_nd(a.reshape(1, -1), b.reshape(-1, 1)).reshape(())
    if a.ndim == 1:
        return _matmul_nd(a.unsqueeze(0), b).squeeze(-2)
    return _matmul_nd(a, b.unsqueeze(-1)).squeeze(-1)


def _check_ndim(name, a, b, na, nb):
    if a.ndim != na or b.ndim != nb:
        raise ShapeError(f"{name}: expected a {na}-D and a {nb}-D tensor, got shapes "
                         f"{shape_str(a.shape)} and {shape_str(b.shape)}")


@op("matmul", method="matmul", dunder="__matmul__", augmented="__imatmul__")
def matmul(a, b):
    if _ac.active: a, b = _ac.autocast_args("matmul", a, b)
    return _product("matmul", a, b)


@op(dunder="__rmatmul__")
def rmatmul(a, b):
    return matmul(b, a)


@op("mm", method="mm")
def mm(a, b):
    if _ac.active: a, b = _ac.autocast_args("mm", a, b)
    _check_ndim("mm", a, b, 2, 2)
    return _product("mm", a, b)


@op("bmm", method="bmm")
def bmm(a, b):
    if _ac.active: a, b = _ac.autocast_args("bmm", a, b)
    _check_ndim("bmm", a, b, 3, 3)
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"bmm: batch sizes differ: shapes {shape_str(a.shape)} and "
                         f"{shape_str(b.shape)}")
    return _product("bmm", a, b)


@op("mv", method="mv")
def mv(a, v):
    _check_ndim("mv", a, v, 2, 1)
    return _product("mv", a, v)


@op("dot", method="dot")
def dot(a, b):
    _check_ndim("dot", a, b, 1, 1)
    return _product("dot", a, b)


@op("outer ger", method="outer ger")
def outer(a, b):
    _check_ndim("outer", a, b, 1, 1)
    return a.reshape(-1, 1) * b.reshape(1, -1)


@op("addmm", method="addmm", inplace="addmm_")
def addmm(bias, a, b, *, beta=1, alpha=1):
    if _ac.active: bias, a, b = _ac.autocast_args("addmm", bias, a, b)
    _check_addmm("addmm", bias, a, b, 2)
    return _scaled_add(bias, matmul(a, b), beta, alpha)


@op("baddbmm", method="baddbmm", inplace="baddbmm_")
def baddbmm(bias, a, b, *, beta=1, alpha=1):
    if _ac.active: bias, a, b = _ac.autocast_args("baddbmm", bias, a, b)
    _check_addmm("baddbmm", bias, a, b, 3)
    return _scaled_add(bias, matmul(a, b), beta, alpha)


def _scaled_add(bias, out, beta, alpha):
    """``beta * bias + alpha * out`` as PyTorch's addmm/baddbmm: an integral result casts
    float scalars to its dtype (0.5 becomes 0; plugrad promoted to float32), and beta == 0
    ignores the bias, its NaN and infinities included."""
    if not out.dtype.is_floating_point:
        beta, alpha = (int(v) if isinstance(v, float) else v for v in (beta, alpha))
    if alpha != 1:
        out = out * alpha
    if beta == 0 and isinstance(bias, Tensor) and bias.dtype.is_floating_point:
        return out + (bias * 0).nan_to_num(0.0, 0.0, 0.0)  # still in the graph: a 0 gradient
    return out + (bias if beta == 1 else bias * beta)


def _check_addmm(name, bias, a, b, nd):
    """PyTorch's checks: the factors are matrices (batches of them for ``baddbmm``) and the
    input expands to the product's shape (no more dims, each 1 or equal)."""
    what = ("mat1", "mat2") if nd == 2 else ("batch1", "batch2")
    if any(isinstance(t, Tensor) and t.dtype.name == "bool" for t in (bias, a, b)):
        _bool_product(name)
    for w, m in zip(what, (a, b)):
        if isinstance(m, Tensor) and m.ndim != nd:
            raise ShapeError(f"{name}: {w} must be a {'matrix' if nd == 2 else '3D tensor'}, "
                             f"got {m.ndim}-D tensor")
    if not (isinstance(bias, Tensor) and isinstance(a, Tensor) and isinstance(b, Tensor)):
        return
    size = tuple(a.shape[:-1]) + (b.shape[-1],)
    shape = tuple(bias.shape)
    if len(shape) > len(size) or any(s not in (1, n) for s, n in
                                     zip(shape[::-1], size[::-1])):
        raise ShapeError(f"{name}: the input of shape {shape_str(shape)} cannot be expanded to "
                         f"the product's shape {shape_str(size)}")


# ---------------------------------------------------------------------- einsum
@op("einsum")
def einsum(equation, *operands):
    """Einstein summation: repeated subscripts (diagonals), ``...`` and any number of
    operands, contracted left to right with one batched ``matmul`` per pair."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    specs, out = _parse_einsum(equation, operands)
    sizes = _label_sizes(equation, specs, operands)
    terms = [_take_diagonals(x, s) for x, s in zip(operands, specs)]
    while len(terms) > 1:
        (a, sa), (b, sb) = terms[0], terms[1]
        needed = set(out).union(*(s for _, s in terms[2:]))
        terms[:2] = [_contract_pair(a, sa, b, sb, needed, sizes)]
    x, spec = terms[0]
    summed = tuple(i for i, c in enumerate(spec) if c not in out)
    if summed:
        x = x.sum(summed)
        spec = "".join(c for c in spec if c in out)
    return x.permute([spec.index(c) for c in out]) if len(out) > 1 else x


def _parse_einsum(equation, operands):
    """Subscripts per operand and for the output, with ``...`` replaced by private labels
    (one per broadcast dim, aligned from the right as broadcasting aligns them)."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    specs = lhs.split(",")
    if len(specs) != len(operands):
        raise ArgumentError(f"einsum(): {len(specs)} subscripts in {equation!r} but "
                         f"{len(operands)} operands")
    n_ell = 0
    for s, x in zip(specs, operands):
        if not isinstance(x, Tensor):
            raise TypeError(f"einsum(): operands must be Tensors, got {type(x).__name__}")
        if "..." in s:
            n_ell = max(n_ell, x.ndim - len(s) + 3)
    ell = "".join(chr(0x2460 + i) for i in range(n_ell))  # labels no equation uses
    expanded = []
    for s, x in zip(specs, operands):
        valid = all(c.isascii() and c.isalpha() for c in s.replace("...", ""))
        if "..." in s:
            s = s.replace("...", ell[n_ell - (x.ndim - len(s) + 3):])
        if len(s) != x.ndim or not valid:
            raise ShapeError(f"einsum(): subscripts {s!r} do not fit operand of shape "
                             f"{shape_str(x.shape)} in {equation!r}")
        expanded.append(s)
    if arrow:
        out = rhs.replace("...", ell)
    else:  # implicit output: broadcast dims, then labels used once, alphabetically
        counts = {}
        for c in "".join(expanded):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    for c in out:
        if out.count(c) > 1 or not any(c in s for s in expanded):
            raise ValueError(f"einsum(): output subscript {c!r} in {equation!r} appears more "
                             f"than once or in no operand")
    return expanded, out


def _label_sizes(equation, specs, operands) -> dict:
    """Each label's size; sizes of 1 broadcast, any other disagreement is an error."""
    sizes = {}
    for s, x in zip(specs, operands):
        for c, n in zip(s, x.shape):
            if sizes.get(c, 1) not in (1, n) and n != 1:
                raise ShapeError(f"einsum(): subscript {c!r} has size {n} for operand of "
                                 f"shape {shape_str(x.shape)}, which does not broadcast with "
                                 f"size {sizes[c]} seen before, in {equation!r}")
            sizes[c] = max(sizes.get(c, 1), n)
    return sizes


def _take_diagonals(x, spec):
    """A subscript repeated within one operand takes that diagonal (``ii->i``)."""
    while len(set(spec)) != len(spec):
        c = next(c for c in spec if spec.count(c) > 1)
        p, q = spec.index(c), spec.index(c, spec.index(c) + 1)
        n = x.shape[p]
        if x.shape[q] != n:
            raise ShapeError(f"einsum(): repeated subscript {c!r} has sizes {n} and "
                             f"{x.shape[q]} in one operand of shape {shape_str(x.shape)}")
        rest = [i for i in range(x.ndim) if i not in (p, q)]
        x = x.permute(rest + [p, q]).reshape([x.shape[i] for i in rest] + [n * n])
        x = x[..., ::n + 1]
        spec = "".join(spec[i] for i in rest) + c
    return x, spec


def _contract_pair(a, sa, b, sb, needed, sizes):
    """``a`` and ``b`` contracted over the labels they share that are not ``needed``."""
    a, sa = _sum_private(a, sa, sb, needed)
    b, sb = _sum_private(b, sb, sa, needed)
    batch = [c for c in sa if c in sb and c in needed]
    inner = [c for c in sa if c in sb and c not in needed]
    only_a = [c for c in sa if c not in sb]
    only_b = [c for c in sb if c not in sa]
    a = _expand_labels(a, sa, batch + inner, sizes)
    b = _expand_labels(b, sb, batch + inner, sizes)
    pa = a.permute([sa.index(c) for c in batch + only_a + inner])
    pb = b.permute([sb.index(c) for c in batch + inner + only_b])
    nb = [sizes[c] for c in batch]
    m, k, n = (math.prod(pa.shape[len(batch):len(batch) + len(only_a)]),
               math.prod(sizes[c] for c in inner),
               math.prod(pb.shape[len(batch) + len(inner):]))
    prod = _matmul_nd(pa.reshape(nb + [m, k]), pb.reshape(nb + [k, n]))
    shape = nb + list(pa.shape[len(batch):len(batch) + len(only_a)]) + \
        list(pb.shape[len(batch) + len(inner):])
    return prod.reshape(shape), "".join(batch + only_a + only_b)


def _sum_private(x, spec, other, needed):
    """Sum the labels that only ``x`` has and nothing later needs."""
    axes = tuple(i for i, c in enumerate(spec) if c not in other and c not in needed)
    if not axes:
        return x, spec
    return x.sum(axes), "".join(c for i, c in enumerate(spec) if i not in axes)


def _expand_labels(x, spec, labels, sizes):
    """Broadcast size-1 dims of shared ``labels`` to their full size."""
    shape = [sizes[c] if c in labels else n for c, n in zip(spec, x.shape)]
    return x if shape == list(x.shape) else x.expand(shape)
