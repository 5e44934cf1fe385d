"""The backend contract: the specification every backend implements.

A backend carries out array *primitives* on its own array type and never sees autograd (the
gradient rules live in ``plugrad.core``), so the required primitives below buy it all of
autograd, ``nn`` and ``optim``.

Conventions shared by every primitive (the core guarantees the inputs, the backend the results;
``docs/backends.md`` explains each, ``plugrad.testing.conformance`` checks each):

* Arrays are the backend's own type; ``.shape`` is a tuple of Python ints.
* Dtypes cross as the names of :data:`DTYPE_NAMES` (``bool``, ``uint8``, ``int8``,
  ``int16``, ``int32``, ``int64``, ``float16``, ``bfloat16``, ``float32``, ``float64``). A
  backend lists its own in ``dtypes`` (another name is refused at registration) and is
  passed no other. bool arrays never reach the arithmetic primitives, ``sum``, ``prod``,
  ``cumsum`` or the floating ones; where they go (``abs``, ``lt``, ``max``, ``argmax``,
  ``matmul``, ``scatter_add``), ``False < True`` and they add as logical or.
* Binary primitives get two arrays of one dtype, or one array and one Python scalar on
  either side, never two scalars. A scalar is weak: it is rounded to the array's dtype
  *before* the operation, and the result has that dtype. Arrays broadcast by NumPy rules.
* Axes are non-negative ints; shapes are tuples of ints. Transcendental primitives
  (``exp``, ``log``, ...) only ever get floating arrays.
* A result holds values of its dtype: a float32 (float16, bfloat16) result is rounded to it
  (to nearest, ties to even). Integer arithmetic wraps modulo ``2**bits``, never raises.
* Results share no memory with the inputs, and no input is written, except that
  ``reshape``, ``permute``, ``broadcast_to``, ``slice`` (and the optional ``flip``) may
  return views, ``assign``/``update_`` write their destination, ``to_numpy`` and
  ``from_dlpack`` may share memory with the host array or the DLPack object.
* IEEE 754 for floats, signs of zeros included (``log(0) == -inf``, ``sin(inf)`` is NaN,
  ``exp(1000) == inf``, ``floor(-0.0)`` is ``-0.0``), never an exception nor a warning.
* Host transfer: NumPy arrays of the dtype's NumPy type; ``bfloat16`` crosses as float32
  values. A declared dtype that fails a round trip is refused when the device is first used.
* Devices: creation primitives get an index in ``[0, device_count())``, or None.

Required primitives are the abstract methods of :class:`Backend`; optional kernels, the
methods with a body, fall back to a composite (:mod:`plugrad.backends.composites`). The nn
kernels' part of the spec is :mod:`plugrad.backends.contract_nn`, the linear-algebra
factorisations' :mod:`plugrad.backends.contract_linalg`, the math kernels' (inverse
trigonometric, hyperbolic, gamma, bit operations) :mod:`plugrad.backends.contract_math`.
"""
from __future__ import annotations

import abc
import types

import numpy as np

from plugrad.backends.composites import Composites
from plugrad.backends.contract_linalg import LinalgKernels
from plugrad.backends.contract_math import MathKernels
from plugrad.backends.contract_nn import NNKernels

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


class Backend(NNKernels, LinalgKernels, MathKernels, Composites, abc.ABC):
    """Base class of every backend. Subclass it, set the attributes, implement the primitives."""

    #: Unique backend name, e.g. ``"numpy"``.
    name: str = ""
    #: The device type this backend serves, e.g. ``"cpu"``, ``"cuda"``, ``"ref"``.
    device_type: str = ""
    #: Dtype names this backend supports.
    dtypes: frozenset = frozenset({"bool", "int32", "int64", "float16", "float32", "float64"})
    #: The DLPack device type of its arrays (1 CPU, 2 CUDA, ...) if they export DLPack; None:
    #: tensors export a host copy (see docs/backends.md, "Host transfer").
    dlpack_device_type: int | None = None
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

    def rng_state(self) -> bytes | None:
        """This backend's generator state as bytes (``torch.get_rng_state`` saves it), or
        None where it cannot be read out (then only seeding repeats a run). Optional."""
        return None

    def set_rng_state(self, state: bytes) -> None:
        """Restore a state :meth:`rng_state` returned. Optional (with :meth:`rng_state`)."""
        raise NotImplementedError(f"backend {self.name!r} cannot restore a generator state")

    def inplace_kernels(self) -> dict:
        """For ``plugrad.compile``, which replays a captured step: kernels that compute
        ``name(dst, *args)`` into ``dst`` and return it, by kernel name (``{"add": f}`` with
        ``f(dst, value)``). A replay uses them where ``dst`` is a temporary nothing reads
        afterwards, of the result's shape and floating dtype: no new buffer. A kernel that can
        write into another operand than its first maps positions to forms called with its own
        arguments (``{"where": {2: f}}``, ``f(cond, a, b)`` into ``b``). Optional."""
        return {}

    def compile_program(self, steps: list) -> list:
        """For ``plugrad.compile``: a trusted captured program, as the list of its kernel
        calls in order, to rewrite for speed before it is replayed. Each step has ``name``,
        ``fn``, ``args``, ``kwargs`` and ``outs``; an argument that is an input, a tensor's
        array or an earlier step's result is an object with a ``slot``; ``arg_meta`` holds
        each argument's captured ``(shape, dtype)`` (None where it is no slot) and
        ``out_meta`` the result's (the arrays' own ``shape`` and ``dtype``). Return the steps to
        replay: a step's ``fn``, ``args`` and ``kwargs`` may be replaced by a faster form of
        the same kernel (same results, same effects), with ``fallback = ((exceptions,
        callable), ...)``: where the form raises one of those, the replay calls the
        callable with the same arguments instead. Leave other backends' steps alone.
        Optional: by default the program is replayed as captured."""
        return steps

    # ------------------------------------------------------------------ transfer, creation
    @abc.abstractmethod
    def from_numpy(self, a: np.ndarray, dtype: str, device: int | None):
        """A new array on ``device`` (index, or None for the default) holding ``a`` cast to
        ``dtype``: a copy (the caller may reuse ``a``) of exactly its shape, 0-d included, a
        wider float rounded to ``dtype`` (overflow gives ``±inf``)."""

    @abc.abstractmethod
    def to_numpy(self, x) -> np.ndarray:
        """The values of ``x`` as a NumPy array (may share memory on host backends)."""

    @abc.abstractmethod
    def full(self, shape: tuple, value, dtype: str, device: int | None):
        """A new array of ``shape`` filled with the Python scalar ``value`` (rounded to
        ``dtype`` as a weak scalar is)."""

    @abc.abstractmethod
    def astype(self, x, dtype: str):
        """A new array with the values of ``x`` converted to ``dtype`` (always a copy).
        Float to integer truncates toward zero (for a value in the target's range; NaN,
        infinities and values out of range give an unspecified value, without an error);
        integer to integer wraps modulo ``2**bits``; to a narrower float rounds to nearest,
        ties to even (overflow gives ``±inf``); anything to bool is ``x != 0`` (NaN is True)."""

    @abc.abstractmethod
    def assign(self, dst, key: tuple, value):
        """Write ``value`` into ``dst[key]`` in place and return ``dst``.

        ``key`` is a tuple of ``slice`` objects normalised as for :meth:`slice`, at most one
        per dimension, possibly empty (the whole array). ``value`` is an array of
        ``dst``'s dtype broadcastable to the selected region, or a Python scalar. Overlap
        between ``value`` and ``dst`` must give the result of copying ``value`` first. A
        backend whose array cannot be written (e.g. a 0-d immutable scalar) returns a new
        array instead; the core always uses the returned array.
        """

    # ------------------------------------------------------------------ unary
    @abc.abstractmethod
    def neg(self, x):
        """``-x`` elementwise (numbers): integers wrap (``-min == min``), ``-0.0`` for 0.0."""

    @abc.abstractmethod
    def abs(self, x):
        """``|x|`` elementwise: integers wrap (``abs(min) == min``), 0.0 for -0.0, a bool
        array comes back as a copy."""

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
        """Largest integer value not greater than ``x`` (floating; same dtype). ``-0.0``,
        infinities and NaN are returned unchanged."""

    @abc.abstractmethod
    def round(self, x):
        """Round to nearest integer value, halves to even (floating; same dtype). ``2.5``
        gives ``2.0``, ``-0.4`` gives ``-0.0``; infinities and NaN are unchanged."""

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
        """Floor division, rounding toward negative infinity (Python's ``//``). Integer
        division by zero is the core's concern: it checks before calling."""

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
        ``a`` and ``b`` are arrays of one dtype or Python scalars, at least one of them an
        array; the result has that array's dtype (a scalar branch is rounded to it)."""

    # ------------------------------------------------------------------ reductions
    @abc.abstractmethod
    def sum(self, x, axes: tuple | None, keepdims: bool):
        """Sum over ``axes`` (None: all). Result has ``x``'s dtype; an empty sum is 0.
        Integers wrap; a float sum that overflows is ``±inf``, ``inf + -inf`` is NaN."""

    @abc.abstractmethod
    def prod(self, x, axes: tuple | None, keepdims: bool):
        """Product over ``axes`` (None: all). An empty product is 1. Result has ``x``'s
        dtype: integers wrap, a float overflow is ``±inf``."""

    @abc.abstractmethod
    def max(self, x, axes: tuple | None, keepdims: bool):
        """Maximum over ``axes`` (None: all), propagating NaN. Never called on an empty axis.
        A group holding a NaN gives NaN; which zero a ``-0.0``/``0.0`` tie gives is open."""

    @abc.abstractmethod
    def argmax(self, x, axis: int | None, keepdims: bool):
        """int64 index of the maximum along ``axis`` (None: of the flattened array). Ties
        resolve to the first occurrence; NaN counts as the maximum."""

    @abc.abstractmethod
    def cumsum(self, x, axis: int):
        """Inclusive cumulative sum along ``axis``, same dtype (integers wrap)."""

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
        """Basic slicing: ``key`` is one ``slice`` per dimension (``()`` for 0-d), normalised:
        ints with ``0 <= start <= stop <= size`` and ``step >= 1``. Result has
        ``len(range(start, stop, step))`` along each."""

    @abc.abstractmethod
    def concat(self, arrays: list, axis: int):
        """Join arrays of one dtype along an existing ``axis``."""

    @abc.abstractmethod
    def gather(self, x, axis: int, index):
        """``out[i][j][k] = x[i][index[i][j][k]][k]`` for ``axis == 1`` (``torch.gather``).
        ``index`` is int64 with ``x.ndim`` dims and the same size as ``x`` in every dimension
        but ``axis``; every entry lies in ``[0, x.shape[axis])``. ``out.shape == index.shape``."""

    @abc.abstractmethod
    def scatter_add(self, x, axis: int, index, src):
        """A copy of ``x`` with ``out[i][index[i][j][k]][k] += src[i][j][k]`` (``axis == 1``).
        ``index`` and ``src`` have one shape, equal to ``x.shape`` in every dimension but
        ``axis``; repeated indices accumulate."""

    @abc.abstractmethod
    def matmul(self, a, b):
        """Matrix product of ``a`` (..., n, k) and ``b`` (..., k, m); batch dims broadcast.
        A new array the caller owns: ``linear`` adds its bias into it with ``update_``."""

    # ------------------------------------------------------------------ random
    @abc.abstractmethod
    def seed(self, seed: int) -> None:
        """Reset this backend's generator: the same seed gives the same stream afterwards."""

    @abc.abstractmethod
    def uniform(self, shape: tuple, dtype: str, device: int | None):
        """Samples from U[0, 1) of a floating dtype. 1.0 never appears, not even by rounding
        to a narrow dtype (round such samples toward zero)."""

    @abc.abstractmethod
    def normal(self, shape: tuple, dtype: str, device: int | None):
        """Samples from the standard normal distribution of a floating dtype."""

    # ================================================================== optional kernels
    # Each body points at its composite fallback (composites.py); docs/backends.md section 3
    # says how to override one, and to decline an input (``Backend.softmax(self, x, axis)``).

    def dtype_of(self, x) -> str:
        """The dtype name of ``x`` (not a kernel; right as it is for NumPy-style dtypes)."""
        return str(x.dtype)

    # ------------------------------------------------------------------ creation, casts
    def copy(self, x):
        """A new array equal to ``x`` (never a view)."""
        return _C.copy(self, x)

    def from_dlpack(self, obj, device: int | None):
        """An array on ``device`` holding the values of ``obj``, a DLPack exporter in host
        memory or on this backend's ``dlpack_device_type``; it may share ``obj``'s memory."""
        return _C.from_dlpack(self, obj, device)

    def arange(self, start, stop, step, dtype: str, device: int | None):
        """``start, start + step, ...`` up to but excluding ``stop``."""
        return _C.arange(self, start, stop, step, dtype, device)

    def update_(self, op: str, dst, value):
        """``dst = op(dst, value)`` written into ``dst`` in place, for ``op`` one of ``add``,
        ``sub``, ``mul``, ``div`` (``value``: an array of ``dst``'s dtype broadcastable to it,
        or a Python scalar). Returns ``dst``, or a new array where ``assign`` would."""
        return _C.update_(self, op, dst, value)

    # ------------------------------------------------------------------ elementwise
    def ceil(self, x):
        """Smallest integer value not less than ``x`` (floating)."""
        return _C.ceil(self, x)

    def sign(self, x):
        """-1, 0 or 1 by sign (NaN stays NaN for floats)."""
        return _C.sign(self, x)

    def isnan(self, x):
        """True where ``x`` is NaN."""
        return _C.isnan(self, x)

    def sigmoid(self, x):
        """``1 / (1 + exp(-x))`` without overflow for any ``x``."""
        return _C.sigmoid(self, x)

    def log1p(self, x):
        """``log(1 + x)``, accurate for small ``x``."""
        return _C.log1p(self, x)

    def expm1(self, x):
        """``exp(x) - 1``, accurate for small ``x``."""
        return _C.expm1(self, x)

    def erf(self, x):
        """Error function, accurate to about 1e-15 relative in float64."""
        return _C.erf(self, x)

    def ne(self, a, b):
        """``a != b`` (True where either is NaN)."""
        return _C.ne(self, a, b)

    def gt(self, a, b):
        """``a > b``."""
        return _C.gt(self, a, b)

    def le(self, a, b):
        """``a <= b``."""
        return _C.le(self, a, b)

    def ge(self, a, b):
        """``a >= b``."""
        return _C.ge(self, a, b)

    def logical_or(self, a, b):
        """``a or b`` on bool arrays (either side may be a Python scalar)."""
        return _C.logical_or(self, a, b)

    def logical_xor(self, a, b):
        """``a != b`` on bool arrays."""
        return _C.logical_xor(self, a, b)

    def remainder(self, a, b):
        """Python's ``%`` (NumPy's ``remainder``): the result has the sign of ``b``."""
        return _C.remainder(self, a, b)

    def fmod(self, a, b):
        """C's ``fmod``: the exact remainder with the sign of ``a`` (``-0.0`` for a negative
        multiple), ``a`` for a finite ``a`` over ``b = ±inf``, NaN for ``b = 0`` or an
        infinite ``a``. Integer operands have a nonzero ``b`` (the core checks)."""
        return _C.fmod(self, a, b)

    def maximum(self, a, b):
        """Elementwise maximum, propagating NaN."""
        return _C.maximum(self, a, b)

    def minimum(self, a, b):
        """Elementwise minimum, propagating NaN."""
        return _C.minimum(self, a, b)

    # ------------------------------------------------------------------ reductions
    def min(self, x, axes: tuple | None, keepdims: bool):
        """Minimum over ``axes`` (None: all), propagating NaN."""
        return _C.min(self, x, axes, keepdims)

    def argmin(self, x, axis: int | None, keepdims: bool):
        """int64 index of the first minimum along ``axis``; NaN counts as the minimum."""
        return _C.argmin(self, x, axis, keepdims)

    def logsumexp(self, x, axes: tuple | None, keepdims: bool):
        """``log(sum(exp(x)))`` over ``axes`` without overflow; an all ``-inf`` slice gives ``-inf``."""
        return _C.logsumexp(self, x, axes, keepdims)

    # ------------------------------------------------------------------ movement, indexing
    def pad(self, x, widths: tuple, value):
        """Constant padding: ``widths`` is one ``(before, after)`` pair (non-negative) per dim."""
        return _C.pad(self, x, widths, value)

    def flip(self, x, axes: tuple):
        """Reverse the order of elements along ``axes``."""
        return _C.flip(self, x, axes)

    def take(self, x, axis: int, index):
        """``x`` indexed along ``axis`` by a 1-D int64 ``index`` (``index_select``)."""
        return _C.take(self, x, axis, index)

    def scatter(self, x, axis: int, index, src):
        """A copy of ``x`` with ``out[..index..] = src`` along ``axis`` (``torch.scatter``);
        each target position is written at most once (the core guarantees unique indices)."""
        return _C.scatter(self, x, axis, index, src)

    def nonzero(self, x):
        """int64 array (n, ndim) of the indices of non-zero elements, row-major order."""
        return _C.nonzero(self, x)

    def argsort(self, x, axis: int, descending: bool):
        """int64 indices that sort ``x`` along ``axis``; ties keep their order (stable).
        NaN sorts as the largest value."""
        return _C.argsort(self, x, axis, descending)


_C = Composites

_OPTIONAL = [name for name, value in {**vars(NNKernels), **vars(LinalgKernels),
                                      **vars(MathKernels),
                                      **vars(Backend)}.items()
             if isinstance(value, types.FunctionType)
             and not getattr(value, "__isabstractmethod__", False)
             and not name.startswith("_")
             and name not in {"is_available", "unavailable_reason", "device_count",
                              "synchronize", "dtype_of", "inplace_kernels", "compile_program",
                              "rng_state",
                              "set_rng_state"}]
