"""Sampling and sequence losses of ``nn.functional``: ``affine_grid``, ``grid_sample``
(bilinear and nearest, zeros/border/reflection padding, 4-D and 5-D inputs),
``gumbel_softmax`` and ``ctc_loss``.

All are compositions of Tensor ops. ``grid_sample`` gathers the corners of each sample point
and weights them (its gradient reaches the grid through the weights, as PyTorch's);
``ctc_loss`` runs the forward (alpha) recursion of Graves et al. in log space, batched over
samples and label positions, one step per time step.
"""
from __future__ import annotations

import math

import plugrad
from plugrad.nn._dtypes import expect_dtype as _expect

__all__ = ["affine_grid", "grid_sample", "gumbel_softmax", "ctc_loss"]


# ---------------------------------------------------------------------- affine grids
def _base_coords(n, align_corners, like):
    if n <= 1:  # PyTorch's linspace_from_neg_one: the centre
        return plugrad.zeros(1, dtype=like.dtype, device=like.device)
    r = plugrad.linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device)
    return r if align_corners else r * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of an affine map: ``(N, H, W, 2)`` for a ``(N, 2, 3)`` theta and a
    4-D size, ``(N, D, H, W, 3)`` for ``(N, 3, 4)`` and a 5-D size (last coordinate first)."""
    align_corners = bool(align_corners)
    _expect("affine_grid", theta)
    size = tuple(size)
    if len(size) == 4:
        if tuple(theta.shape[1:]) != (2, 3) or theta.shape[0] != size[0]:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{list(size)}. Got {list(theta.shape)}.")
        n, _, h, w = size
        xs, ys = _base_coords(w, align_corners, theta), _base_coords(h, align_corners, theta)
        base = plugrad.stack([xs.reshape(1, w).expand(h, w), ys.reshape(h, 1).expand(h, w),
                              plugrad.ones(h, w, dtype=theta.dtype, device=theta.device)], -1)
        grid = base.reshape(1, h * w, 3).matmul(theta.transpose(1, 2))
        return grid.reshape(n, h, w, 2)
    if len(size) == 5:
        if tuple(theta.shape[1:]) != (3, 4) or theta.shape[0] != size[0]:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{list(size)}. Got {list(theta.shape)}.")
        n, _, d, h, w = size
        xs, ys = _base_coords(w, align_corners, theta), _base_coords(h, align_corners, theta)
        zs = _base_coords(d, align_corners, theta)
        shape = (d, h, w)
        base = plugrad.stack([xs.reshape(1, 1, w).expand(*shape),
                              ys.reshape(1, h, 1).expand(*shape),
                              zs.reshape(d, 1, 1).expand(*shape),
                              plugrad.ones(*shape, dtype=theta.dtype, device=theta.device)], -1)
        grid = base.reshape(1, d * h * w, 4).matmul(theta.transpose(1, 2))
        return grid.reshape(n, d, h, w, 3)
    raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                              f"affine transforms, respectively. Got size {list(size)}.")


# ---------------------------------------------------------------------- grid sampling
def _reflect(c, twice_low, twice_high, nd):
    """``c`` reflected into ``[low, high]`` as PyTorch's CPU kernels compute it (the same
    in exact arithmetic, not in rounding at huge coordinates): the 2-D (vectorized) one
    folds ``|c - low|`` by the whole period ``2 * span`` and takes the nearer side, the
    3-D (scalar) one takes ``fmod`` by ``span`` and flips by the parity of the quotient."""
    if twice_low == twice_high:
        return c * 0.0
    low, span = twice_low / 2.0, (twice_high - twice_low) / 2.0
    c = (c - low).abs()
    if nd == 2:
        period = 2.0 * span
        extra = c - (c / period).trunc() * period
        return extra.minimum(period - extra) + low
    flips = (c / span).floor()
    extra = c.fmod(span)
    return (extra + low).where(flips.fmod(2) == 0, span - extra + low)


def _source(c, size, padding_mode, align_corners, nd):
    """Grid coordinates in [-1, 1] -> positions in the input (padding applied). A NaN
    position (a NaN grid, or an infinite one reflected) clips as PyTorch's CPU kernels
    clip it: to 0 in the vectorized 2-D one, to ``size - 1`` in the scalar 3-D one."""
    if nd == 2:  # the vectorized kernel's scaling (no overflow of (c + 1) * size)
        c = (c + 1.0) * ((size - 1) / 2.0) if align_corners else (c + 1.0) * (size / 2.0) - 0.5
    else:
        c = (c + 1.0) / 2.0 * (size - 1) if align_corners else ((c + 1.0) * size - 1.0) / 2.0
    if padding_mode == "zeros":
        return c
    if padding_mode == "reflection":
        c = _reflect(c, 0.0, 2.0 * (size - 1), nd) if align_corners else \
            _reflect(c, -1.0, 2.0 * size - 1.0, nd)
    c = c.clamp(0.0, size - 1.0)
    return c.where(~c.isnan(), 0.0 if nd == 2 else size - 1.0)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Values of ``input`` (``(N, C, H, W)`` or ``(N, C, D, H, W)``) at the grid's points
    (``(N, H', W', 2)`` or ``(N, D', H', W', 3)``, x first, in [-1, 1])."""
    name = "grid_sample"
    _expect(name, input)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode='bicubic' is not implemented in plugrad "
                                  "(use 'bilinear' or 'nearest')")
    nd = input.ndim - 2
    if nd not in (2, 3) or grid.ndim != input.ndim or grid.shape[-1] != nd or \
            grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sample(): expected a 4-D or 5-D input and a grid of the same "
                           f"rank with last size {nd} and the same batch size, got input "
                           f"{list(input.shape)} and grid {list(grid.shape)}")
    align_corners = bool(align_corners)
    n, c = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])  # (D,) H, W
    out_sizes = list(grid.shape[1:-1])
    points = math.prod(out_sizes)
    g = grid.reshape(n, points, nd)
    # grid's last dim is x (W), y (H)[, z (D)]: the reverse of the input's spatial dims
    coords = [_source(g[..., nd - 1 - i], sizes[i], padding_mode, align_corners, nd)
              for i in range(nd)]
    strides = [math.prod(sizes[i + 1:]) for i in range(nd)]
    flat = input.reshape(n, c, math.prod(sizes))

    def gather(positions):
        """The values at integer ``positions`` and whether each lies inside the input (a
        NaN or infinite position does not: it reads position 0, never cast to an index)."""
        inside = None
        index = None
        for p, size, stride in zip(positions, sizes, strides):
            ok = (p >= 0).logical_and(p <= size - 1)
            inside = ok if inside is None else inside.logical_and(ok)
            term = p.detach().where(ok, 0.0).to(plugrad.int64) * stride
            index = term if index is None else index + term
        vals = flat.gather(2, index.unsqueeze(1).expand(n, c, points))
        return vals, inside.unsqueeze(1)

    # PyTorch's 2-D kernel reads 0 at a corner outside the input and multiplies it by the
    # corner's weight (NaN for a NaN or infinite coordinate: NaN out); its 3-D kernel adds
    # only the corners inside (never their weights)
    def contribution(vals, weight, inside):
        vals = vals.where(inside, 0.0)
        return vals * (weight.where(inside, 0.0) if nd == 3 else weight)

    if mode == "nearest":
        vals, inside = gather([co.round() for co in coords])
        out = vals.where(inside, 0.0)
    else:
        lows = [co.floor() for co in coords]
        fracs = [co - lo for co, lo in zip(coords, lows)]
        out = None
        for corner in range(2 ** nd):
            bits = [(corner >> (nd - 1 - i)) & 1 for i in range(nd)]
            weight = None
            for b, f in zip(bits, fracs):
                wgt = f if b else 1.0 - f
                weight = wgt if weight is None else weight * wgt
            vals, inside = gather([lo + b for lo, b in zip(lows, bits)])
            term = contribution(vals, weight.unsqueeze(1), inside)
            out = term if out is None else out + term
    return out.reshape(n, c, *out_sizes)


# ---------------------------------------------------------------------- gumbel softmax
def gumbel_softmax(logits, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim=-1):
    """A sample of the Gumbel-softmax distribution (one-hot with ``hard``, with the
    straight-through gradient of the soft sample)."""
    gumbels = -plugrad.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = plugrad.zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ---------------------------------------------------------------------- CTC
def _lse(*xs):
    """``log(sum(exp(x)))`` of tensors that may be ``-inf`` everywhere (then ``-inf``, with a
    zero gradient rather than NaN)."""
    m = xs[0]
    for x in xs[1:]:
        m = m.maximum(x)
    m = m.detach()
    m = m.where(m.isfinite(), 0.0)
    s = None
    for x in xs:
        e = (x - m).exp()
        s = e if s is None else s + e
    empty = s == 0
    return (m + s.where(~empty, 1.0).log()).where(~empty, -math.inf)


class _LogitsGradient(plugrad.autograd.Function):
    """The loss unchanged; its gradient to ``log_probs`` gains ``exp(log_probs)`` at each
    time step inside a sample's input length (``inside`` ``(T, N)``): the true derivative
    becomes PyTorch's (a NaN or inf there reaches the gradient as in PyTorch's kernel; a
    NaN loss makes its sample's whole gradient NaN, as the kernel's ``exp(... - nll)``)."""

    @staticmethod
    def forward(ctx, lp, loss, inside):
        ctx.save_for_backward(lp, inside, loss)
        return loss.clone()

    @staticmethod
    def backward(ctx, g):
        lp, inside, loss = ctx.saved_tensors
        inside = inside.unsqueeze(2)
        extra = lp.exp().where(inside, 0.0) * g.reshape(1, -1, 1)
        lost = inside.logical_and(loss.isnan().reshape(1, -1, 1))
        return extra.where(~lost, math.nan), g, None


def _as_lengths(v, n, device, what):
    if isinstance(v, plugrad.Tensor):
        v = v.tolist()
    v = [int(x) for x in (v if isinstance(v, (list, tuple)) else [v])]
    if len(v) != n:
        raise RuntimeError(f"ctc_loss: expected {what} to have {n} values (one per sample), "
                           f"got {len(v)}")
    return v


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False):
    """The Connectionist Temporal Classification loss of ``log_probs`` (``(T, N, C)`` or
    ``(T, C)``, log-softmax outputs) for ``targets`` (padded ``(N, S)`` or concatenated 1-D).

    The gradient is PyTorch's: the true derivative plus ``exp(log_probs)`` at each time
    step inside a sample's input length (its kernel folds the log-softmax in: the gradient
    of the logits), the same once it flows back through the ``log_softmax`` that made
    ``log_probs``, and what a program reading ``log_probs.grad`` sees."""
    _expect("ctc_loss", log_probs)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs to be 2-D or 3-D, got "
                           f"{list(log_probs.shape)}")
    t_max, n, classes = lp.shape
    ins = _as_lengths(input_lengths, n, lp.device, "input_lengths")
    tls = _as_lengths(target_lengths, n, lp.device, "target_lengths")
    tg = targets.unsqueeze(0) if unbatched and targets.ndim == 1 else targets
    if tg.ndim == 1:  # concatenated targets
        rows, at = [], 0
        for length in tls:
            rows.append(tg[at:at + length].tolist())
            at += length
    else:
        rows = [tg[i, :tls[i]].tolist() for i in range(n)]
    for i, (t_len, s_len) in enumerate(zip(ins, tls)):
        if t_len > t_max or t_len < 0:
            raise RuntimeError(f"ctc_loss: Expected input_lengths to have value at most "
                               f"{t_max}, but got value {t_len} (sample {i})")
    s_max = max(tls) if tls else 0
    width = 2 * s_max + 1
    ext, skip = [], []
    for row in rows:
        e = [blank] * width
        for j, lab in enumerate(row):
            e[2 * j + 1] = int(lab)
        ext.append(e)
        skip.append([s >= 2 and e[s] != blank and e[s] != e[s - 2] for s in range(width)])
    dev = lp.device
    ext_t = plugrad.tensor(ext, dtype=plugrad.int64, device=dev)
    can_skip = plugrad.tensor(skip, dtype=plugrad.bool, device=dev)
    emit = lp.gather(2, ext_t.unsqueeze(0).expand(t_max, n, width))  # (T, N, width)
    neg = -math.inf
    start = plugrad.tensor([[0.0 if s < 2 else neg for s in range(width)]] * n,
                           dtype=lp.dtype, device=dev)
    alpha = (emit[0] + start) if t_max else start
    lengths = plugrad.tensor(ins, dtype=plugrad.int64, device=dev).unsqueeze(1)
    pad1 = plugrad.full((n, 1), neg, dtype=lp.dtype, device=dev)
    pad2 = plugrad.full((n, 2), neg, dtype=lp.dtype, device=dev)
    for t in range(1, t_max):
        prev1 = plugrad.cat([pad1, alpha[:, :-1]], 1)
        prev2 = plugrad.cat([pad2, alpha[:, :-2]], 1).where(can_skip, neg)
        step = _lse(alpha, prev1, prev2) + emit[t]
        alpha = step.where(lengths > t, alpha)  # a sample's recursion stops at its length
    last = plugrad.tensor([2 * s for s in tls], dtype=plugrad.int64, device=dev).unsqueeze(1)
    end1 = alpha.gather(1, last).squeeze(1)
    end2 = alpha.gather(1, (last - 1).clamp_min(0)).squeeze(1)
    has_label = plugrad.tensor([s > 0 for s in tls], dtype=plugrad.bool, device=dev)
    loss = -_lse(end1, end2.where(has_label, neg))
    if any(t_len == 0 for t_len in ins):  # no time steps: certain for an empty target only
        none = [0.0 if s_len == 0 else math.inf for s_len in tls]
        loss = loss.where(lengths.squeeze(1) > 0, plugrad.tensor(none, dtype=lp.dtype,
                                                                 device=dev))
    inside = plugrad.arange(t_max, device=dev).unsqueeze(1) < lengths.transpose(0, 1)
    loss = _LogitsGradient.apply(lp, loss, inside)
    if zero_infinity:
        loss = loss.where(loss != math.inf, 0.0)
    if reduction == "none":
        return loss.squeeze(0) if unbatched else loss
    if reduction == "sum":
        return loss.sum()
    denom = plugrad.tensor([max(s, 1) for s in tls], dtype=lp.dtype, device=dev)
    return (loss / denom).mean()
