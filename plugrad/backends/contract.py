"""The backend contract: the one written list of primitives every backend implements.

A backend is an object that carries out array *primitives* on its own array type. It never
sees autograd: every gradient rule lives in ``plugrad.core`` and is written with Tensor ops,
so a backend that implements the required primitives below gets gradients, ``nn`` and
``optim`` for free.

Conventions shared by every primitive (the core guarantees them before calling):

* Arrays are the backend's own type and expose ``.shape`` as a tuple of ints.
* Dtypes cross the boundary as names: ``"bool"``, ``"int32"``, ``"int64"``, ``"float16"``,
  ``"float32"``, ``"float64"`` (a backend lists the ones it supports in ``dtypes``).
* Binary primitives receive two arrays of the *same* dtype, or one array and one Python
  scalar on either side. A scalar is "weak": it takes the array's dtype. Arrays broadcast
  by NumPy rules.
* Axes are non-negative ints; shapes are tuples of ints.
* Transcendental unary primitives (``exp``, ``log``, ...) only ever receive floating arrays.
* Primitives return new arrays unless they say otherwise; movement primitives may return a
  view sharing memory with their input (as NumPy does) or a copy.
* Floating-point edge cases follow IEEE 754 (``log(0) == -inf``, ``sqrt(-1)`` is NaN) and
  must not emit warnings.

Required primitives are the abstract methods of :class:`Backend`. Optional kernels are the
methods with a body: each is a *composite* written in required primitives, so a new backend
works before it is fast, and a backend overrides one only where it has something faster.
"""
from __future__ import annotations

import abc
import math
import types

import numpy as np

#: Bumped when a required primitive is added, removed or changes meaning.
CONTRACT_VERSION = 1

#: Every dtype name the core knows, in promotion order within each kind.
DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64")


def required_primitives() -> tuple[str, ...]:
    """The names a backend must implement, read off the abstract methods below."""
    return tuple(sorted(Backend.__abstractmethods__))


def optional_kernels() -> tuple[str, ...]:
    """Kernels with a composite fallback that a backend may override."""
    return tuple(sorted(name for name in _OPTIONAL))


class Backend(abc.ABC):
    """Base class of every backend. Subclass it, set the attributes, implement the primitives."""

    #: Unique backend name, e.g. ``"numpy"``.
    name: str = ""
    #: The device type this backend serves, e.g. ``"cpu"``, ``"cuda"``, ``"ref"``.
    device_type: str = ""
    #: Dtype names this backend supports.
    dtypes: frozenset = frozenset({"bool", "int32", "int64", "float16", "float32", "float64"})
    #: The contract version the backend was written against.
    contract_version: int = CONTRACT_VERSION
    #: The backend's array class (used for ``isinstance`` checks and error messages).
    array_type: type = object

    # ------------------------------------------------------------------ environment
    def is_available(self) -> bool:
        """Whether the backend can run here (its library imports, its hardware is present)."""
        return True

    def unavailable_reason(self) -> str:
        """Why :meth:`is_available` is False, in words a user can act on."""
        return ""

    def device_count(self) -> int:
        """How many devices of this type exist (``cuda:0`` .. ``cuda:N-1``)."""
        return 1

    def synchronize(self, device: int | None = None) -> None:
        """Wait for queued work to finish (asynchronous devices only)."""

    # ------------------------------------------------------------------ transfer, creation
    @abc.abstractmethod
    def from_numpy(self, a: np.ndarray, dtype: str, device: int | None):
        """A new array on ``device`` (index, or None for the default) holding ``a`` cast to ``dtype``."""

    @abc.abstractmethod
    def to_numpy(self, x) -> np.ndarray:
        """The values of ``x`` as a NumPy array (may share memory on host backends)."""

    @abc.abstractmethod
    def full(self, shape: tuple, value, dtype: str, device: int | None):
        """A new array of ``shape`` filled with the Python scalar ``value``."""

    @abc.abstractmethod
    def astype(self, x, dtype: str):
        """A new array with the values of ``x`` converted to ``dtype`` (always a copy).

        Float to integer truncates toward zero; anything to bool is ``x != 0``.
        """

    @abc.abstractmethod
    def assign(self, dst, key: tuple, value):
        """Write ``value`` into ``dst[key]`` in place and return ``dst``.

        ``key`` is a tuple of ``slice`` objects (non-negative start/stop, step >= 1), at most
        one per dimension, possibly empty (the whole array). ``value`` is an array of
        ``dst``'s dtype broadcastable to the selected region, or a Python scalar. Overlap
        between ``value`` and ``dst`` must give the result of copying ``value`` first. A
        backend whose array cannot be written (e.g. a 0-d immutable scalar) returns a new
        array instead; the core always uses the returned array.
        """

    # ------------------------------------------------------------------ unary
    @abc.abstractmethod
    def neg(self, x):
        """``-x`` elementwise (numbers)."""

    @abc.abstractmethod
    def abs(self, x):
        """``|x|`` elementwise (numbers)."""

    @abc.abstractmethod
    def exp(self, x):
        """``e**x`` (floating)."""

    @abc.abstractmethod
    def log(self, x):
        """Natural log (floating): ``log(0) = -inf``, negative gives NaN."""

    @abc.abstractmethod
    def sqrt(self, x):
        """Square root (floating): negative gives NaN."""

    @abc.abstractmethod
    def sin(self, x):
        """Sine (floating, radians)."""

    @abc.abstractmethod
    def cos(self, x):
        """Cosine (floating, radians)."""

    @abc.abstractmethod
    def tanh(self, x):
        """Hyperbolic tangent (floating)."""

    @abc.abstractmethod
    def floor(self, x):
        """Largest integer value not greater than ``x`` (floating; same dtype)."""

    @abc.abstractmethod
    def round(self, x):
        """Round to nearest integer value, halves to even (floating; same dtype)."""

    @abc.abstractmethod
    def logical_not(self, x):
        """``not x`` elementwise on a bool array."""

    # ------------------------------------------------------------------ binary
    @abc.abstractmethod
    def add(self, a, b):
        """``a + b`` (numbers; bool arrays are never passed)."""

    @abc.abstractmethod
    def sub(self, a, b):
        """``a - b``."""

    @abc.abstractmethod
    def mul(self, a, b):
        """``a * b``."""

    @abc.abstractmethod
    def div(self, a, b):
        """True division ``a / b`` (floating): ``x/0`` is ``±inf`` or NaN."""

    @abc.abstractmethod
    def floordiv(self, a, b):
        """Floor division, rounding toward negative infinity (Python's ``//``).

        Integer division by zero is the core's concern: it checks before calling.
        """

    @abc.abstractmethod
    def pow(self, a, b):
        """``a ** b``; ``0 ** 0 == 1``. Integer arrays never get negative exponents."""

    @abc.abstractmethod
    def eq(self, a, b):
        """``a == b`` as a bool array (NaN is unequal to everything)."""

    @abc.abstractmethod
    def lt(self, a, b):
        """``a < b`` as a bool array (False where either is NaN)."""

    @abc.abstractmethod
    def logical_and(self, a, b):
        """``a and b`` on bool arrays."""

    @abc.abstractmethod
    def where(self, cond, a, b):
        """``a`` where the bool array ``cond`` is True, else ``b``; all three broadcast.

        ``a`` and ``b`` are arrays of one dtype or Python scalars.
        """

    # ------------------------------------------------------------------ reductions
    @abc.abstractmethod
    def sum(self, x, axes: tuple | None, keepdims: bool):
        """Sum over ``axes`` (None: all). Result has ``x``'s dtype; an empty sum is 0."""

    @abc.abstractmethod
    def prod(self, x, axes: tuple | None, keepdims: bool):
        """Product over ``axes`` (None: all). An empty product is 1."""

    @abc.abstractmethod
    def max(self, x, axes: tuple | None, keepdims: bool):
        """Maximum over ``axes`` (None: all), propagating NaN. Never called on an empty axis."""

    @abc.abstractmethod
    def argmax(self, x, axis: int | None, keepdims: bool):
        """int64 index of the maximum along ``axis`` (None: of the flattened array).

        Ties resolve to the first occurrence; NaN counts as the maximum.
        """

    @abc.abstractmethod
    def cumsum(self, x, axis: int):
        """Inclusive cumulative sum along ``axis``, same dtype."""

    # ------------------------------------------------------------------ movement
    @abc.abstractmethod
    def reshape(self, x, shape: tuple):
        """``x`` with a new shape of the same size, row-major order (a view or a copy)."""

    @abc.abstractmethod
    def permute(self, x, axes: tuple):
        """Axes reordered: result axis ``i`` is input axis ``axes[i]``."""

    @abc.abstractmethod
    def broadcast_to(self, x, shape: tuple):
        """``x`` broadcast to ``shape`` by NumPy rules (read-only view is fine)."""

    @abc.abstractmethod
    def slice(self, x, key: tuple):
        """Basic slicing: ``key`` is one ``slice`` per dimension, normalised (non-negative
        start <= stop, step >= 1). Result has ``len(range(start, stop, step))`` along each."""

    @abc.abstractmethod
    def concat(self, arrays: list, axis: int):
        """Join arrays of one dtype along an existing ``axis``."""

    @abc.abstractmethod
    def gather(self, x, axis: int, index):
        """``out[i][j][k] = x[i][index[i][j][k]][k]`` for ``axis == 1`` (``torch.gather``).

        ``index`` is int64 with ``x.ndim`` dims and the same size as ``x`` in every dimension
        but ``axis``; every entry lies in ``[0, x.shape[axis])``. ``out.shape == index.shape``.
        """

    @abc.abstractmethod
    def scatter_add(self, x, axis: int, index, src):
        """A copy of ``x`` with ``out[i][index[i][j][k]][k] += src[i][j][k]`` (``axis == 1``).

        ``index`` and ``src`` have one shape, equal to ``x.shape`` in every dimension but
        ``axis``; repeated indices accumulate.
        """

    @abc.abstractmethod
    def matmul(self, a, b):
        """Matrix product of ``a`` (..., n, k) and ``b`` (..., k, m); batch dims broadcast."""

    # ------------------------------------------------------------------ random
    @abc.abstractmethod
    def seed(self, seed: int) -> None:
        """Reset this backend's generator: the same seed gives the same stream afterwards."""

    @abc.abstractmethod
    def uniform(self, shape: tuple, dtype: str, device: int | None):
        """Samples from U[0, 1) of a floating dtype."""

    @abc.abstractmethod
    def normal(self, shape: tuple, dtype: str, device: int | None):
        """Samples from the standard normal distribution of a floating dtype."""

    # ================================================================== optional kernels
    # Each body below is the composite fallback, written in required primitives only.

    def copy(self, x):
        """A new array equal to ``x`` (never a view)."""
        return self.astype(x, self.dtype_of(x))

    def dtype_of(self, x) -> str:
        """The dtype name of ``x``. Backends whose arrays carry NumPy-style dtypes need not
        override this."""
        return str(x.dtype)

    def arange(self, start, stop, step, dtype: str, device: int | None):
        """``start, start + step, ...`` up to but excluding ``stop``."""
        return self.from_numpy(np.arange(start, stop, step), dtype, device)

    def ceil(self, x):
        """Smallest integer value not less than ``x`` (floating)."""
        return self.neg(self.floor(self.neg(x)))

    def sign(self, x):
        """-1, 0 or 1 by sign (NaN stays NaN for floats)."""
        dtype = self.dtype_of(x)
        out = self.sub(self.astype(self.lt(0, x), dtype), self.astype(self.lt(x, 0), dtype))
        if _is_floating(dtype):
            out = self.where(self.isnan(x), x, out)
        return out

    def zeros_like(self, x):
        """Zeros of ``x``'s shape and dtype (a helper for composites)."""
        return self.full(tuple(x.shape), 0, self.dtype_of(x), None)

    def isnan(self, x):
        """True where ``x`` is NaN."""
        return self.logical_not(self.eq(x, x))

    def ne(self, a, b):
        """``a != b`` (True where either is NaN)."""
        return self.logical_not(self.eq(a, b))

    def gt(self, a, b):
        """``a > b``."""
        return self.lt(b, a)

    def le(self, a, b):
        """``a <= b``."""
        return self.logical_or(self.lt(a, b), self.eq(a, b))

    def ge(self, a, b):
        """``a >= b``."""
        return self.le(b, a)

    def logical_or(self, a, b):
        """``a or b`` on bool arrays; either side may be a Python scalar, as for any binary
        primitive (``logical_not`` is unary and takes arrays only, so a scalar decides here)."""
        if _is_scalar(a):
            a, b = b, a
        if _is_scalar(b):
            return self.eq(a, a) if b else self.copy(a)  # eq(a, a): all True, like a
        return self.logical_not(self.logical_and(self.logical_not(a), self.logical_not(b)))

    def logical_xor(self, a, b):
        """``a != b`` on bool arrays."""
        return self.ne(a, b)

    def remainder(self, a, b):
        """Python's ``%`` (NumPy's ``remainder``): the result has the sign of ``b``.

        ``a - (a // b) * b``, except that a finite ``a`` over ``b = ±inf`` is ``a`` when
        ``a`` is zero or has ``b``'s sign and ``b`` otherwise (the formula gives NaN there).
        Floats are inexact once ``|a / b|`` exceeds ``2**mantissa`` (``1e17 % 3.0`` gives
        0.0, not 1.0, and the error can exceed ``|b|``): the rounding of ``(a // b) * b`` is
        lost, and recovering it needs an exact product. A backend with ``fmod`` overrides this.
        """
        like = b if _is_scalar(a) else a
        dtype = self.dtype_of(like)
        if dtype in ("float16", "float32") and "float64" in self.dtypes:
            # Narrow floats: in float64 the product (a // b) * b is exact, so is the result.
            wide = [v if _is_scalar(v) else self.astype(v, "float64") for v in (a, b)]
            return self.astype(self.remainder(*wide), dtype)
        out = self.sub(a, self.mul(self.floordiv(a, b), b))
        if not _is_floating(dtype) or _is_scalar(b) and math.isfinite(b):
            return out
        a, b = self._as_array(a, like), self._as_array(b, like)
        by_inf = self.logical_and(self.eq(self.abs(b), math.inf),
                                  self.lt(self.abs(a), math.inf))
        keep_a = self.logical_or(self.eq(self.lt(a, 0), self.lt(b, 0)), self.eq(a, 0))
        return self.where(by_inf, self.where(keep_a, a, b), out)

    def maximum(self, a, b):
        """Elementwise maximum, propagating NaN."""
        if _is_scalar(a):
            a, b = b, a
        pick_a = self.lt(b, a)
        if _is_floating(self.dtype_of(a)):
            pick_a = self.logical_or(pick_a, self.isnan(a))
        return self.where(pick_a, a, b)

    def minimum(self, a, b):
        """Elementwise minimum, propagating NaN."""
        if _is_scalar(a):
            a, b = b, a
        pick_a = self.lt(a, b)
        if _is_floating(self.dtype_of(a)):
            pick_a = self.logical_or(pick_a, self.isnan(a))
        return self.where(pick_a, a, b)

    def min(self, x, axes, keepdims):
        """Minimum over ``axes``, as the maximum of an order-reversing map: ``-x`` for floats,
        but for integers ``~x`` (``-x`` wraps at the most negative value, ``~x`` never does)."""
        dtype = self.dtype_of(x)
        if dtype == "bool":
            return self.logical_not(self.max(self.logical_not(x), axes, keepdims))
        if _is_floating(dtype):
            return self.neg(self.max(self.neg(x), axes, keepdims))
        return self._invert(self.max(self._invert(x), axes, keepdims))

    def argmin(self, x, axis, keepdims):
        """Index of the first minimum along ``axis``: the first maximum of the same
        order-reversing map as :meth:`min` (NaN, the maximum of ``-x``, wins as it should)."""
        dtype = self.dtype_of(x)
        if dtype == "bool":
            return self.argmax(self.logical_not(x), axis, keepdims)
        if _is_floating(dtype):
            return self.argmax(self.neg(x), axis, keepdims)
        return self.argmax(self._invert(x), axis, keepdims)

    def sigmoid(self, x):
        """``1 / (1 + exp(-x))`` without overflow for any ``x``."""
        e = self.exp(self.neg(self.abs(x)))
        r = self.div(1.0, self.add(e, 1.0))
        return self.where(self.lt(x, 0), self.mul(e, r), r)

    def log1p(self, x):
        """``log(1 + x)``, accurate for small ``x``."""
        u = self.add(x, 1.0)
        d = self.sub(u, 1.0)
        # log(u) * (x / (u - 1)) corrects the rounding of 1 + x (Goldberg's trick); the ratio
        # is taken first so that a huge x cannot overflow; at x = inf it is inf/inf, so inf.
        small = self.eq(d, 0.0)
        safe_d = self.where(small, 1.0, d)
        out = self.where(small, x, self.mul(self.log(u), self.div(x, safe_d)))
        return self.where(self.eq(x, math.inf), x, out)

    def expm1(self, x):
        """``exp(x) - 1``, accurate for small ``x``."""
        u = self.exp(x)
        um1 = self.sub(u, 1.0)
        logu = self.log(u)
        safe = self.where(self.eq(logu, 0.0), 1.0, logu)
        # (u - 1) * (x / log(u)) corrects the rounding of exp(x) (Goldberg's trick); the ratio
        # is taken first so that it cannot overflow. Where exp(x) rounds to 1, x itself is
        # the answer; where it overflows, inf; where u - 1 rounds to -1 (x = -inf, or exp
        # underflowed so that log(u) is -inf or inexact), -1.
        out = self.where(self.eq(um1, 0.0), x, self.mul(um1, self.div(x, safe)))
        out = self.where(self.eq(um1, -1.0), -1.0, out)
        return self.where(self.eq(u, math.inf), u, out)

    def erf(self, x):
        """Error function, accurate to about 1e-15 relative (W. J. Cody's rational
        approximations, evaluated with required primitives)."""
        return _erf_composite(self, x)

    def pad(self, x, widths: tuple, value):
        """Constant padding: ``widths`` is one ``(before, after)`` pair (non-negative) per dim."""
        shape = tuple(n + b + a for n, (b, a) in zip(x.shape, widths))
        out = self.full(shape, value, self.dtype_of(x), None)
        key = tuple(slice(b, b + n, 1) for n, (b, _) in zip(x.shape, widths))
        return self.assign(out, key, x)

    def flip(self, x, axes: tuple):
        """Reverse the order of elements along ``axes``."""
        for axis in axes:
            n = x.shape[axis]
            idx = self.from_numpy(np.arange(n - 1, -1, -1, dtype=np.int64).reshape(
                tuple(n if d == axis else 1 for d in range(len(x.shape)))), "int64", None)
            idx = self.broadcast_to(idx, tuple(x.shape))
            x = self.gather(x, axis, idx)
        return x

    def take(self, x, axis: int, index):
        """``x`` indexed along ``axis`` by a 1-D int64 ``index`` (``index_select``)."""
        shape = tuple(x.shape)
        idx_shape = tuple(int(index.shape[0]) if d == axis else 1 for d, _ in enumerate(shape))
        idx = self.reshape(index, idx_shape)
        full = tuple(idx_shape[d] if d == axis else shape[d] for d in range(len(shape)))
        return self.gather(x, axis, self.broadcast_to(idx, full))

    def scatter(self, x, axis: int, index, src):
        """A copy of ``x`` with ``out[..index..] = src`` along ``axis`` (``torch.scatter``).

        Each target position is written at most once (the core guarantees unique indices).
        The values are placed by adding ``src`` to ``-0.0``, the float additive identity
        (``0.0 + -0.0`` would lose the sign of a written ``-0.0``)."""
        dtype = self.dtype_of(x)
        hit = self.lt(0, self.scatter_add(self.full(tuple(x.shape), 0, "int64", None), axis,
                                          index, self.full(tuple(index.shape), 1, "int64", None)))
        if dtype == "bool":
            placed = self.scatter_add(self.full(tuple(x.shape), 0, "int64", None), axis, index,
                                      self.astype(src, "int64"))
            return self.where(hit, self.lt(0, placed), x)
        zero = -0.0 if _is_floating(dtype) else 0
        placed = self.scatter_add(self.full(tuple(x.shape), zero, dtype, None), axis, index, src)
        return self.where(hit, placed, x)

    def nonzero(self, x):
        """int64 array (n, ndim) of the indices of non-zero elements, row-major order."""
        idx = np.argwhere(self.to_numpy(x))
        return self.from_numpy(idx.astype(np.int64), "int64", None)

    def argsort(self, x, axis: int, descending: bool):
        """int64 indices that sort ``x`` along ``axis``; ties keep their order (stable).
        NaN sorts as the largest value. The fallback sorts on the host."""
        a = np.asarray(self.to_numpy(x))
        if descending:
            order = np.flip(np.argsort(np.flip(a, axis), axis=axis, kind="stable"), axis)
            order = a.shape[axis] - 1 - order
        else:
            order = np.argsort(a, axis=axis, kind="stable")
        return self.from_numpy(order.astype(np.int64), "int64", None)

    def update_(self, op: str, dst, value):
        """``dst = op(dst, value)`` written into ``dst`` in place, for ``op`` one of ``add``,
        ``sub``, ``mul``, ``div`` (``value``: an array of ``dst``'s dtype broadcastable to it,
        or a Python scalar). Returns ``dst``, or a new array where ``assign`` would. The
        optimizers' updates run through this, so a backend with ``out=`` support saves a
        temporary and a pass over memory."""
        return self.assign(dst, (), getattr(self, op)(dst, value))

    def softmax(self, x, axis: int):
        """``exp(x - max) / sum(exp(x - max))`` along ``axis``."""
        e = self.exp(self.sub(x, self.max(x, (axis,), True)))
        return self.div(e, self.sum(e, (axis,), True))

    def log_softmax(self, x, axis: int):
        """``x - logsumexp(x)`` along ``axis``."""
        return self.sub(x, self.logsumexp(x, (axis,), True))

    def logsumexp(self, x, axes: tuple | None, keepdims: bool):
        """``log(sum(exp(x)))`` over ``axes`` without overflow; an all ``-inf`` slice gives ``-inf``."""
        m = self.max(x, axes, True)
        m = self.where(self.eq(self.abs(m), math.inf), 0.0, m)
        out = self.add(self.log(self.sum(self.exp(self.sub(x, m)), axes, True)), m)
        if keepdims:
            return out
        drop = range(len(x.shape)) if axes is None else axes
        return self.reshape(out, tuple(n for d, n in enumerate(x.shape) if d not in drop))

    # ------------------------------------------------------------------ nn kernels
    # Geometry arguments of the 2-D window kernels: ``kernel``, ``stride``, ``dilation`` are
    # ``(h, w)`` pairs of ints; ``padding`` is ``((top, bottom), (left, right))``; inputs are
    # ``(N, C, H, W)`` and the core has checked that at least one window fits.

    def unfold2d(self, x, kernel, stride, padding, dilation, value=0):
        """Sliding windows (im2col) of ``x`` padded with ``value``: ``(N, C, kh, kw, OH, OW)``
        where ``out[n, c, i, j, p, q] = padded[n, c, p*sh + i*dh, q*sw + j*dw]``."""
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        xp = self.pad(x, ((0, 0), (0, 0)) + tuple(padding), value)
        n, c, hp, wp = xp.shape
        oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
        taps = []
        for i in range(kh):
            for j in range(kw):
                key = (slice(0, n, 1), slice(0, c, 1),
                       slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
                       slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))
                taps.append(self.reshape(self.slice(xp, key), (n, c, 1, oh, ow)))
        cols = taps[0] if len(taps) == 1 else self.concat(taps, 2)
        return self.reshape(cols, (n, c, kh, kw, oh, ow))

    def fold2d(self, cols, input_hw, kernel, stride, padding, dilation):
        """The adjoint of :meth:`unfold2d` (col2im): each window value of ``cols``
        ``(N, C, kh, kw, OH, OW)`` is added back to its position in an ``(N, C, H, W)`` array."""
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        (pt, pb), (pl, pr) = padding
        n, c, _, _, oh, ow = cols.shape
        hp, wp = input_hw[0] + pt + pb, input_hw[1] + pl + pr
        out = self.full((n, c, hp, wp), 0, self.dtype_of(cols), None)
        for i in range(kh):
            for j in range(kw):
                key = (slice(0, n, 1), slice(0, c, 1),
                       slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
                       slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))
                tap = self.reshape(self.slice(cols, (slice(0, n, 1), slice(0, c, 1),
                                                     slice(i, i + 1, 1), slice(j, j + 1, 1))),
                                   (n, c, oh, ow))
                out = self.assign(out, key, self.add(self.slice(out, key), tap))
        return self.slice(out, (slice(0, n, 1), slice(0, c, 1), slice(pt, pt + input_hw[0], 1),
                                slice(pl, pl + input_hw[1], 1)))

    def conv2d(self, x, w, stride, padding, dilation, groups):
        """Cross-correlation of ``x`` ``(N, C, H, W)`` with ``w`` ``(O, C/groups, kh, kw)``
        (no bias): ``(N, O, OH, OW)``; im2col and one batched matmul per group."""
        o, cg, kh, kw = w.shape
        cols = self.unfold2d(x, (kh, kw), stride, padding, dilation)
        n, _, _, _, oh, ow = cols.shape
        cols = self.reshape(cols, (n, groups, cg * kh * kw, oh * ow))
        wm = self.reshape(w, (1, groups, o // groups, cg * kh * kw))
        return self.reshape(self.matmul(wm, cols), (n, o, oh, ow))

    def conv2d_grad_input(self, g, w, input_hw, stride, padding, dilation, groups):
        """Gradient of :meth:`conv2d` w.r.t. its input, given the output gradient ``g``."""
        o, cg, kh, kw = w.shape
        n, _, oh, ow = g.shape
        gm = self.reshape(g, (n, groups, o // groups, oh * ow))
        wt = self.permute(self.reshape(w, (1, groups, o // groups, cg * kh * kw)), (0, 1, 3, 2))
        cols = self.reshape(self.matmul(wt, gm), (n, groups * cg, kh, kw, oh, ow))
        return self.fold2d(cols, input_hw, (kh, kw), stride, padding, dilation)

    def conv2d_grad_weight(self, g, x, weight_shape, stride, padding, dilation, groups):
        """Gradient of :meth:`conv2d` w.r.t. its weight of ``weight_shape``."""
        o, cg, kh, kw = weight_shape
        cols = self.unfold2d(x, (kh, kw), stride, padding, dilation)
        n, _, _, _, oh, ow = cols.shape
        cols = self.permute(self.reshape(cols, (n, groups, cg * kh * kw, oh * ow)), (0, 1, 3, 2))
        gm = self.reshape(g, (n, groups, o // groups, oh * ow))
        return self.reshape(self.sum(self.matmul(gm, cols), (0,), False), weight_shape)

    def max_pool2d(self, x, kernel, stride, padding, dilation):
        """Window maxima of ``x`` padded with ``-inf``, and the int64 index of each maximum
        (the first one) into the flattened ``H * W`` input plane: ``(out, indices)``."""
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        (pt, _), (pl, _) = padding
        _, _, h, w = x.shape
        cols = self.unfold2d(x, kernel, stride, padding, dilation, -math.inf)
        n, c, _, _, oh, ow = cols.shape
        cols = self.reshape(cols, (n, c, kh * kw, oh, ow))
        tap = self.argmax(cols, 2, False)
        ki = self.floordiv(tap, kw)
        kj = self.sub(tap, self.mul(ki, kw))
        rows = self.reshape(self.arange(0, oh * sh, sh, "int64", None), (oh, 1))
        colsi = self.reshape(self.arange(0, ow * sw, sw, "int64", None), (1, ow))
        r = self.add(self.sub(rows, pt), self.mul(ki, dh))
        q = self.add(self.sub(colsi, pl), self.mul(kj, dw))
        return self.max(cols, (2,), False), self.add(self.mul(r, w), q)

    def layer_norm(self, x, weight, bias, n_axes: int, eps: float):
        """Normalise ``x`` over its last ``n_axes`` dims, then scale and shift by ``weight`` and
        ``bias`` (either may be None): ``(y, mean, rstd)``, the statistics kept with dims."""
        axes = tuple(range(len(x.shape) - n_axes, len(x.shape)))
        count = 1
        for a in axes:
            count *= x.shape[a]
        mean = self.div(self.sum(x, axes, True), count)
        d = self.sub(x, mean)
        var = self.div(self.sum(self.mul(d, d), axes, True), count)
        rstd = self.div(1.0, self.sqrt(self.add(var, eps)))
        y = self.mul(d, rstd)
        if weight is not None:
            y = self.mul(y, weight)
        if bias is not None:
            y = self.add(y, bias)
        return y, mean, rstd

    def gelu(self, x, approximate: str):
        """GELU: ``x * Phi(x)`` with the exact ``erf`` form, or its ``"tanh"`` approximation."""
        if approximate == "tanh":
            inner = self.mul(self.add(x, self.mul(self.mul(self.mul(x, x), x), 0.044715)),
                             math.sqrt(2.0 / math.pi))
            return self.mul(self.mul(x, 0.5), self.add(self.tanh(inner), 1.0))
        return self.mul(self.mul(x, 0.5), self.add(self.erf(self.mul(x, math.sqrt(0.5))), 1.0))

    # ------------------------------------------------------------------ composite helpers
    def _invert(self, x):
        """``~x`` for an integer array: an order-reversing bijection that never overflows."""
        dtype = self.dtype_of(x)
        top = int(np.iinfo(dtype).max) if dtype.startswith("uint") else -1
        return self.sub(top, x)  # -1 - x == ~x (signed); max - x == ~x (unsigned)

    def _as_array(self, v, like):
        """``v``, or a 0-d array of ``like``'s dtype holding the Python scalar ``v``."""
        return self.full((), v, self.dtype_of(like), None) if _is_scalar(v) else v


def _is_scalar(v) -> bool:
    return isinstance(v, (bool, int, float))


def _is_floating(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


_OPTIONAL = [name for name, value in vars(Backend).items()
             if isinstance(value, types.FunctionType)
             and not getattr(value, "__isabstractmethod__", False)
             and not name.startswith("_")
             and name not in {"is_available", "unavailable_reason", "device_count",
                              "synchronize", "dtype_of", "zeros_like"}]


def _erf_composite(b: Backend, x):
    """erf via Abramowitz-Stegun style split: a series for |x| < 0.5 and an erfc continued
    rational form elsewhere, built from required primitives."""
    # Constants from W. J. Cody, "Rational Chebyshev approximations for the error function"
    # (Math. Comp. 1969), the same ones most libm implementations use.
    a = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
         3.20937758913846947e03, 1.85777706184603153e-1)
    bb = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
    c = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
         2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
         2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
    d = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
         1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
         3.43936767414372164e03, 1.23033935480374942e03)
    p = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
         1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
    q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
         6.05183413124413191e-2, 2.33520497626869185e-3)
    inv_sqrt_pi = 5.6418958354775628695e-1

    ax = b.abs(x)
    # |x| <= 0.5: erf = x * P(x^2) / Q(x^2)
    y = b.mul(ax, ax)
    num = b.mul(y, a[4])
    den = y
    for i in range(3):
        num = b.mul(b.add(num, a[i]), y)
        den = b.mul(b.add(den, bb[i]), y)
    small = b.div(b.mul(x, b.add(num, a[3])), b.add(den, bb[3]))
    # 0.5 < |x| <= 4: erfc = exp(-x^2) * R(|x|)
    num = b.mul(ax, c[8])
    den = ax
    for i in range(7):
        num = b.mul(b.add(num, c[i]), ax)
        den = b.mul(b.add(den, d[i]), ax)
    mid = b.div(b.add(num, c[7]), b.add(den, d[7]))
    # |x| > 4: erfc = exp(-x^2)/|x| * (1/sqrt(pi) + 1/x^2 * S(1/x^2))
    safe_ax = b.where(b.lt(ax, 0.5), 1.0, ax)
    z = b.div(1.0, b.mul(safe_ax, safe_ax))
    num = b.mul(z, p[5])
    den = z
    for i in range(4):
        num = b.mul(b.add(num, p[i]), z)
        den = b.mul(b.add(den, q[i]), z)
    tail = b.div(b.mul(z, b.add(num, p[4])), b.add(den, q[4]))
    big = b.div(b.sub(inv_sqrt_pi, tail), safe_ax)
    r = b.where(b.lt(ax, 4.0), mid, big)
    erfc = b.mul(b.exp(b.neg(b.mul(ax, ax))), r)
    large = b.sub(1.0, erfc)
    signed = b.where(b.lt(x, 0), b.neg(large), large)
    out = b.where(b.lt(ax, 0.5), small, signed)
    return b.where(b.eq(x, x), out, x)
