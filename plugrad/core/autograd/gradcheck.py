"""``gradcheck`` / ``gradgradcheck``: gradient rules checked against finite differences.

The analytical Jacobian comes from the engine (one vector-Jacobian product per output
element, or one random projection in ``fast_mode``); the numerical one from central
differences. Both run on the inputs' own device, so a backend's gradients are checked
where they run. Only float64 gives differences accurate enough to compare, so other
floating dtypes are refused rather than producing flaky failures.
"""
from __future__ import annotations

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core.autograd.functional import grad as _grad
from plugrad.core.tensor import Tensor, _wrap

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """The analytical and numerical gradients disagree (or cannot be compared)."""


# ---------------------------------------------------------------------- helpers
def _as_tuple(x) -> tuple:
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _host(t: Tensor) -> np.ndarray:
    """``t``'s values as a float64 NumPy array (a copy; any device)."""
    return np.array(t.detach().numpy(force=True), dtype=np.float64, order="C")


def _on(values: np.ndarray, like: Tensor, requires_grad: bool = False) -> Tensor:
    """``values`` as a new leaf of ``like``'s dtype on ``like``'s device."""
    k = like._k
    arr = np.asarray(values, dtype=like.dtype.to_numpy())
    t = _wrap(k.from_numpy(arr, like.dtype.name, like.device.index), like.dtype, like.device, k)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _differentiable(inputs: tuple) -> list[int]:
    """Positions of the inputs to differentiate; each must be float64."""
    idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i in idx:
        if inputs[i].dtype is not _dt.float64:
            raise GradcheckError(
                f"gradcheck: input {i} has dtype {inputs[i].dtype.name} and shape "
                f"{list(inputs[i].shape)}; finite differences need double precision. Pass "
                f"float64 inputs (e.g. x.double()).")
    return idx


def _float_outputs(fn, inputs) -> list[Tensor]:
    """The outputs of ``fn(*inputs)`` that can carry a gradient (floating tensors)."""
    outs = _as_tuple(fn(*inputs))
    return [o if isinstance(o, Tensor) and o.dtype.is_floating_point else None for o in outs]


def _evaluate(fn, inputs, idx, values) -> list[np.ndarray | None]:
    """Outputs of ``fn`` with the differentiable inputs replaced by ``values`` (host arrays).

    The replacements keep ``requires_grad`` so that ``fn`` may itself differentiate
    (``gradgradcheck`` does).
    """
    args = list(inputs)
    for i, v in zip(idx, values):
        args[i] = _on(v, inputs[i], requires_grad=True)
    return [None if o is None else _host(o) for o in _float_outputs(fn, args)]


# ---------------------------------------------------------------------- Jacobians
def _numerical(fn, inputs, idx, eps, out_sizes) -> list[list[np.ndarray]]:
    """``J[o][i]`` of shape (out numel, input numel), by central differences."""
    base = [_host(inputs[i]) for i in idx]
    jac = [[np.zeros((n, base[j].size)) for j in range(len(idx))] for n in out_sizes]
    for j, x in enumerate(base):
        flat = x.reshape(-1)
        for e in range(flat.size):
            orig = flat[e]
            flat[e] = orig + eps
            plus = _evaluate(fn, inputs, idx, base)
            flat[e] = orig - eps
            minus = _evaluate(fn, inputs, idx, base)
            flat[e] = orig
            for o, (p, m) in enumerate(zip(plus, minus)):
                if p is not None:
                    jac[o][j][:, e] = (p - m).reshape(-1) / (2 * eps)
    return jac


def _vjp(out: Tensor, inputs, idx, v: np.ndarray) -> list[np.ndarray]:
    """``v^T J`` for one output, one flat array per differentiable input."""
    xs = [inputs[i] for i in idx]
    if not out.requires_grad:
        return [np.zeros(x.numel()) for x in xs]
    gs = _grad(out, xs, _on(v.reshape(out.shape), out), retain_graph=True, allow_unused=True)
    flat = []
    for i, x, g in zip(idx, xs, gs):
        if g is None:
            flat.append(np.zeros(x.numel()))
            continue
        if tuple(g.shape) != tuple(x.shape) or g.dtype is not x.dtype:
            raise GradcheckError(
                f"gradcheck: the gradient for input {i} has shape {list(g.shape)} and dtype "
                f"{g.dtype.name}, but the input has shape {list(x.shape)} and dtype "
                f"{x.dtype.name}")
        flat.append(_host(g).reshape(-1))
    return flat


def _analytical(outs, inputs, idx) -> list[list[np.ndarray]]:
    """``J[o][i]`` from one backward per output element (rows of the Jacobian)."""
    jac = []
    for out in outs:
        n = 0 if out is None else out.numel()
        rows = [np.zeros((n, inputs[i].numel())) for i in idx]
        for r in range(n):
            onehot = np.zeros(n)
            onehot[r] = 1.0
            for j, g in enumerate(_vjp(out, inputs, idx, onehot)):
                rows[j][r] = g
        jac.append(rows)
    return jac


def _mismatch(o, i, elem, a, n, what="Jacobian") -> GradcheckError:
    return GradcheckError(
        f"{what} mismatch for output {o} with respect to input {i} at element {elem}:\n"
        f"numerical: {n!r}\nanalytical: {a!r}")


def _index(flat: int, shape) -> tuple:
    return tuple(int(i) for i in np.unravel_index(int(flat), tuple(shape))) if shape else ()


def _compare_full(fn, outs, inputs, idx, eps, atol, rtol):
    """The first element where the full Jacobians disagree, as an error (None if none)."""
    out_sizes = [0 if o is None else o.numel() for o in outs]
    numerical = _numerical(fn, inputs, idx, eps, out_sizes)
    analytical = _analytical(outs, inputs, idx)
    for o, (num_o, ana_o) in enumerate(zip(numerical, analytical)):
        for j, (num, ana) in enumerate(zip(num_o, ana_o)):
            bad = np.argwhere(~np.isclose(ana, num, rtol=rtol, atol=atol))
            if bad.size:
                r, c = bad[0]
                elem = (f"(output element {_index(r, outs[o].shape)}, input element "
                        f"{_index(c, inputs[idx[j]].shape)})")
                return _mismatch(o, idx[j], elem, float(ana[r, c]), float(num[r, c]))
    return None


def _compare_fast(fn, outs, inputs, idx, eps, atol, rtol, rng):
    """``u^T J v`` both ways, for a random ``u`` per output and ``v`` over all inputs."""
    base = [_host(inputs[i]) for i in idx]
    vs = [rng.standard_normal(b.shape) for b in base]
    plus = _evaluate(fn, inputs, idx, [b + eps * v for b, v in zip(base, vs)])
    minus = _evaluate(fn, inputs, idx, [b - eps * v for b, v in zip(base, vs)])
    for o, out in enumerate(outs):
        if out is None:
            continue
        u = rng.standard_normal(out.numel())
        num = float(u @ ((plus[o] - minus[o]).reshape(-1) / (2 * eps)))
        ana = float(sum(g @ v.reshape(-1) for g, v in zip(_vjp(out, inputs, idx, u), vs)))
        if not np.isclose(ana, num, rtol=rtol, atol=atol):
            return _mismatch(o, ", ".join(str(i) for i in idx), "(random projection u^T J v)",
                             ana, num, "Jacobian (fast mode)")
    return None


# ---------------------------------------------------------------------- public
def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              fast_mode=False, *, seed=0) -> bool:
    """Check the gradients of ``fn(*inputs)`` against central finite differences.

    Differentiable inputs are the tensors with ``requires_grad=True``; they must be float64.
    Floating outputs are checked (integer outputs, e.g. indices, are not differentiable).
    Returns True, or raises :class:`GradcheckError` naming the output, the input, the
    element and both values (returns False instead when ``raise_exception=False``).
    ``fast_mode`` compares one random projection ``u^T J v`` per output instead.
    """
    inputs = _as_tuple(inputs)
    idx = _differentiable(inputs)
    outs = _float_outputs(fn, inputs)
    if fast_mode:
        err = _compare_fast(fn, outs, inputs, idx, eps, atol, rtol, np.random.default_rng(seed))
    else:
        err = _compare_full(fn, outs, inputs, idx, eps, atol, rtol)
    if err is not None and raise_exception:
        raise err
    return err is None


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True, fast_mode=False, *, seed=0) -> bool:
    """Check second derivatives: :func:`gradcheck` of ``(inputs, v) -> v^T J(inputs)``.

    The first-order gradients are taken with ``create_graph=True``, so this checks the
    backward of every backward rule on the path. ``grad_outputs`` (one per floating output)
    default to random float64 tensors, themselves checked as inputs.
    """
    inputs = _as_tuple(inputs)
    idx = _differentiable(inputs)
    outs = [o for o in _float_outputs(fn, inputs) if o is not None]
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = [_on(rng.standard_normal(tuple(o.shape)), o, requires_grad=True)
                        for o in outs]
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_order(*args):
        xs, vs = args[:n], args[n:]
        ys = [o for o in _float_outputs(fn, xs) if o is not None]
        pairs = [(y, v) for y, v in zip(ys, vs) if y.requires_grad]
        if not pairs:
            return tuple(xs[i].detach() * 0.0 for i in idx)
        return _grad([y for y, _ in pairs], [xs[i] for i in idx], [v for _, v in pairs],
                     create_graph=True, allow_unused=True, materialize_grads=True)

    return gradcheck(first_order, inputs + grad_outputs, eps, atol, rtol, raise_exception,
                     fast_mode, seed=seed)
