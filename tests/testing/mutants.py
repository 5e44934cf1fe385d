"""Deliberately broken backends: each breaks one clause of the backend contract.

Every mutant is a correct backend (NumPy's or the pure-Python reference) with one or two
methods replaced. ``test_mutants.py`` registers each one and runs the conformance suite on
it; the suite must refuse all of them. A new clause of the contract comes with a mutant
here that breaks it (``test_every_clause_has_a_mutant`` holds that).

``ops`` selects the conformance cases run for a mutant (``-k``): the primitives whose
cases can see the defect, which keeps the run short. ``clause`` names the broken rule.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import random

import numpy as np

from plugrad.backends.numpy import NumPyBackend
from plugrad.backends.reference import ReferenceBackend, RefArray
from plugrad.backends.reference.array import broadcast_shapes, broadcast_values, cast


@dataclasses.dataclass(frozen=True)
class Mutant:
    code: str          # short id, also in the backend's name
    base: type
    clause: str        # the rule it breaks, in words
    ops: tuple         # -k selection: primitives whose cases must catch it
    methods: dict      # name -> replacement (a function of self, ...)
    clause_ids: tuple = ()  # ids of plugrad.testing._contract clauses it breaks, if any

    @property
    def device(self) -> str:
        """``mutNN``: a device name no ``-k`` selection of op names can match."""
        return f"mut{MUTANTS.index(self):02d}"

    def backend(self):
        cls = type(f"Mutant_{self.code}", (self.base,), dict(self.methods))
        b = cls()
        b.name, b.device_type = f"mutant-{self.code}", self.device
        return b


# ---------------------------------------------------------------------- helpers
def _raw(shape, dtype, values) -> RefArray:
    """A RefArray whose values are NOT rounded to its dtype (the reference rounds on store)."""
    out = RefArray.__new__(RefArray)
    out.shape, out.dtype, out.data = tuple(shape), dtype, list(values)
    return out


def _ref_map(round_scalars=True, keep=None, check_ints=False):
    """A ``_map`` for ReferenceBackend that breaks one rule: scalars kept unrounded, results
    of the ``keep`` dtypes kept at double precision, or integer overflow raising."""
    def _map(self, fn, *operands, weak=None, out=None):
        arrays = [x for x in operands if not isinstance(x, (bool, int, float))]
        weak = weak or arrays[0].dtype
        shape = broadcast_shapes(*(x.shape for x in arrays))
        cols = [itertools.repeat(cast(x, weak) if round_scalars else x)
                if isinstance(x, (bool, int, float)) else broadcast_values(x, shape)
                for x in operands]
        values = list(map(fn, *cols))
        dtype = out or weak
        if check_ints and dtype.startswith(("int", "uint")):
            bits = int(dtype.lstrip("uint"))
            lo, hi = (0, 2 ** bits - 1) if dtype[0] == "u" else (-2 ** (bits - 1),
                                                                   2 ** (bits - 1) - 1)
            bad = [v for v in values if not lo <= v <= hi]
            if bad:
                raise OverflowError(f"integer overflow in {dtype}: {bad[0]}")
        if keep is not None and dtype in keep:
            return _raw(shape, dtype, (float(v) for v in values))
        return RefArray(shape, dtype, values)
    return _map


def _np_argmax_ignoring_nan(self, x, axis, keepdims):
    y = np.where(np.isnan(x), -np.inf, x) if x.dtype.kind == "f" else x
    return np.argmax(y, axis=axis, keepdims=keepdims).astype(np.int64)


def _np_argmax_last(self, x, axis, keepdims):
    if axis is None:
        flat = np.ravel(x)
        i = flat.size - 1 - np.argmax(flat[::-1])
        return np.array(i, dtype=np.int64).reshape((1,) * x.ndim if keepdims else ())
    n = x.shape[axis]
    return (n - 1 - np.argmax(np.flip(x, axis), axis=axis, keepdims=keepdims)).astype(np.int64)


def _np_sqrt_raises(self, x):
    if (x < 0).any():
        raise ValueError("math domain error")
    return np.sqrt(x)


def _np_div_raises(self, a, b):
    if np.any(np.asarray(b) == 0):
        raise ZeroDivisionError("float division by zero")
    return np.divide(a, b)


def _np_floordiv_trunc(self, a, b):
    with np.errstate(all="ignore"):
        q = np.trunc(np.true_divide(a, b))
    dtype = (a if hasattr(a, "dtype") else b).dtype
    return q.astype(dtype)


def _np_astype_rint(self, x, dtype):
    with np.errstate(all="ignore"):
        if x.dtype.kind == "f" and np.dtype(dtype).kind in "iu":
            return np.rint(x).astype(dtype)
        return np.asarray(x).astype(dtype, copy=True)


def _np_astype_nan_false(self, x, dtype):
    with np.errstate(all="ignore"):
        if dtype == "bool" and x.dtype.kind == "f":
            return (x != 0) & ~np.isnan(x)
        return np.asarray(x).astype(dtype, copy=True)


def _np_astype_alias(self, x, dtype):
    if x.dtype == np.dtype(dtype):
        return x
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(dtype, copy=True)


def _np_astype_saturate(self, x, dtype):
    with np.errstate(all="ignore"):
        if dtype == "float16" and x.dtype.kind == "f":
            return np.clip(x, -65504, 65504).astype(dtype)
        return np.asarray(x).astype(dtype, copy=True)


def _np_prod_empty_zero(self, x, axes, keepdims):
    out = np.multiply.reduce(x, axis=axes, keepdims=keepdims, dtype=x.dtype)
    if x.size == 0:
        out = np.zeros_like(out)
    return out


def _np_scatter_add_overwrite(self, x, axis, index, src):
    out = np.array(x, copy=True)
    np.put_along_axis(out, index, np.take_along_axis(out, index, axis) + src, axis)
    return out


def _np_to_numpy_wide(self, x):
    a = np.asarray(x)
    return a.astype(np.float64) if a.dtype == np.float32 else a


def _np_from_numpy_ftz(self, a, dtype, device):
    with np.errstate(all="ignore"):
        out = np.array(a, dtype=dtype, copy=True)
    if out.dtype.kind == "f":
        out[np.abs(out) < np.finfo(out.dtype).tiny] = 0
    return out


def _np_restart_stream(self, shape, dtype, device):
    rng = np.random.default_rng(getattr(self, "_mut_seed", 0))
    sample = rng.random(shape, dtype=np.float64 if dtype == "float64" else np.float32)
    return self.from_numpy(sample, dtype, device)


def _np_seed_keep(self, seed):
    self._mut_seed = seed
    NumPyBackend.seed(self, seed)


def _np_sum_alias(self, x, axes, keepdims):
    if axes == ():
        return x
    return NumPyBackend.sum(self, x, axes, keepdims)


def _np_device_refused(self, a, dtype, device):
    if device is not None:
        raise ValueError(f"unknown device {device}")
    return NumPyBackend.from_numpy(self, a, dtype, device)


def _f32(dtype):
    return "float32" if dtype == "bfloat16" else dtype


class _BF16AsFloat32(NumPyBackend):
    """Declares bfloat16 but computes and stores it as float32 (never rounded to bfloat16)."""

    def __init__(self):
        super().__init__()
        self.dtypes = self.dtypes | {"bfloat16"}

    def from_numpy(self, a, dtype, device):
        return super().from_numpy(a, _f32(dtype), device)

    def full(self, shape, value, dtype, device):
        return super().full(shape, value, _f32(dtype), device)

    def astype(self, x, dtype):
        return super().astype(x, _f32(dtype))

    def uniform(self, shape, dtype, device):
        return super().uniform(shape, _f32(dtype), device)

    def normal(self, shape, dtype, device):
        return super().normal(shape, _f32(dtype), device)


def _np_assign_loop(self, dst, key, value):
    """Element by element from a live view: an overlapping value is overwritten as read."""
    region = dst[key]
    src = np.broadcast_to(value, region.shape) if not isinstance(value, (bool, int, float)) \
        else np.full(region.shape, value, dst.dtype)
    for idx in np.ndindex(region.shape):
        region[idx] = src[idx]
    return dst


def _np_argsort_nan_first(self, x, axis, descending):
    y = np.where(np.isnan(x), -np.inf, x) if x.dtype.kind == "f" else x
    return NumPyBackend.argsort(y, axis, descending)


def _np_lt_by_sub(self, a, b):
    with np.errstate(all="ignore"):
        return np.less(np.subtract(a, b), 0)


# ---------------------------------------------------------------------- reference helpers
def _ref_max_ignoring_nan(self, x, axes, keepdims):
    return self._reduce(x, axes, keepdims,
                        lambda v: max((u for u in v if u == u), default=math.nan))


def _ref_argmax_ignoring_nan(self, x, axis, keepdims):
    def pick(v):
        best = None
        for i, u in enumerate(v):
            if u == u and (best is None or u > v[best]):
                best = i
        return best or 0
    if axis is None:
        return RefArray((1,) * x.ndim if keepdims else (), "int64", [pick(x.data)])
    return self._reduce(x, (axis,), keepdims, pick, out="int64")


def _ref_round_half_away(self, x):
    return self._map(lambda v: math.copysign(math.floor(abs(v) + 0.5), v)
                     if math.isfinite(v) else v, x)


def _ref_floor_loses_sign(self, x):
    return self._map(lambda v: float(math.floor(v)) if math.isfinite(v) else v, x)


def _ref_uniform_open_low(self, shape, dtype, device=None):
    """(0, 1]: ``1 - random()``, exactly rounded to the dtype."""
    return RefArray(shape, dtype, [1.0 - self._rng.random() for _ in range(math.prod(shape))])


def _ref_uniform_rounds_up(self, shape, dtype, device=None):
    """A double in [0, 1) rounded to the dtype: in float16, 1.0 comes up."""
    return RefArray(shape, dtype, [self._rng.random() for _ in range(math.prod(shape))])


def _ref_shape_list(self, x, shape):
    out = RefArray(shape, x.dtype, x.data)
    out.shape = list(out.shape)
    return out


def _ref_sum_0d_as_1(self, x, axes, keepdims):
    out = ReferenceBackend.sum(self, x, axes, keepdims)
    return RefArray((1,), out.dtype, out.data) if out.shape == () else out


def _ref_normal_wide(self, shape, dtype, device=None):
    return RefArray(shape, dtype, [self._rng.gauss(0.0, 2.0) for _ in range(math.prod(shape))])


def _ref_normal_is_uniform(self, shape, dtype, device=None):
    return RefArray(shape, dtype, [self._rng.random() * 3.4 - 1.7
                                   for _ in range(math.prod(shape))])


def _ref_seed_ignored(self, seed):
    pass


def _ref_seed_fixed(self, seed):
    self._rng = random.Random(0)


def _ref_correlated(self, shape, dtype, device=None):
    """Each call restarts at the same point: successive draws are equal."""
    state = self._rng.getstate()
    out = ReferenceBackend.uniform(self, shape, dtype, device)
    self._rng.setstate(state)
    return out


def _np_atan2_by_ratio(self, a, b):
    """``atan(a / b)``: the wrong quadrant for ``b < 0``, NaN for ``0 / 0``."""
    with np.errstate(all="ignore"):
        return np.arctan(np.divide(a, b))


def _np_right_shift_no_fill(self, a, b):
    """A shift by the width or more gives 0 even for a negative ``a`` (no sign fill)."""
    out = NumPyBackend.right_shift(self, a, b)
    bits = np.iinfo(out.dtype).bits
    return np.where(np.asarray(b) >= bits, np.zeros((), out.dtype), out)


def _ref_lgamma_pole_nan(self, x):
    """``math.lgamma``'s domain error taken as NaN (at the poles lgamma is inf)."""
    def f(v):
        try:
            return math.lgamma(v)
        except ValueError:
            return math.nan
        except OverflowError:
            return math.inf
    return self._map(f, x)


N, R = NumPyBackend, ReferenceBackend
MUTANTS = [
    # ---- NaN, ties and IEEE special values
    Mutant("maxnan", R, "max ignores NaN (NaN propagates)", ("max",),
           {"max": _ref_max_ignoring_nan}),
    Mutant("maxnan_np", N, "max ignores NaN: np.fmax", ("max",),
           {"max": lambda self, x, axes, keepdims: np.fmax.reduce(x, axis=axes,
                                                                  keepdims=keepdims)}),
    Mutant("minnan", N, "min ignores NaN: np.fmin", ("min",),
           {"min": lambda self, x, axes, keepdims: np.fmin.reduce(x, axis=axes,
                                                                  keepdims=keepdims)}),
    Mutant("argmaxnan", R, "argmax ignores NaN (NaN counts as the maximum)", ("argmax",),
           {"argmax": _ref_argmax_ignoring_nan}),
    Mutant("argmaxnan_np", N, "argmax ignores NaN", ("argmax",),
           {"argmax": _np_argmax_ignoring_nan}),
    Mutant("argmaxtie", N, "argmax ties resolve to the last occurrence", ("argmax",),
           {"argmax": _np_argmax_last}),
    Mutant("maximumnan", N, "maximum ignores NaN: np.fmax", ("maximum",),
           {"maximum": lambda self, a, b: np.fmax(a, b)}),
    Mutant("eqnan", N, "eq says NaN == NaN", ("eq",),
           {"eq": lambda self, a, b: np.equal(a, b) | (np.isnan(a) & np.isnan(b))
            if np.asarray(a).dtype.kind == "f" and np.asarray(b).dtype.kind == "f"
            else np.equal(a, b)}),
    Mutant("ltnan", N, "lt is True where an operand is NaN", ("lt",),
           {"lt": lambda self, a, b: np.logical_not(np.greater_equal(a, b))}),
    Mutant("signnan", N, "sign(NaN) is 0", ("sign",),
           {"sign": lambda self, x: np.sign(np.nan_to_num(x)) if x.dtype.kind == "f"
            else np.sign(x)}),
    Mutant("expraises", R, "exp raises OverflowError on overflow (IEEE: inf)", ("exp",),
           {"exp": lambda self, x: self._map(math.exp, x)}),
    Mutant("sinraises", R, "sin(inf) raises ValueError (IEEE: NaN)", ("sin",),
           {"sin": lambda self, x: self._map(math.sin, x)}),
    Mutant("lograises", R, "log(0) raises ValueError (IEEE: -inf)", ("log",),
           {"log": lambda self, x: self._map(math.log, x)}),
    Mutant("sqrtraises", N, "sqrt of a negative raises (IEEE: NaN)", ("sqrt",),
           {"sqrt": _np_sqrt_raises}),
    Mutant("divraises", N, "x / 0 raises ZeroDivisionError (IEEE: inf or NaN)", ("div",),
           {"div": _np_div_raises}),
    Mutant("logwarns", N, "log(0) emits a RuntimeWarning (no warnings)", ("log",),
           {"log": lambda self, x: np.log(x)}),
    Mutant("atan2ratio", N, "atan2 as atan(a / b): wrong quadrant, atan2(0, 0) NaN",
           ("atan2",), {"atan2": _np_atan2_by_ratio}),
    Mutant("lgammapole", R, "lgamma at 0 and the negative integers is NaN (it is inf)",
           ("lgamma",), {"lgamma": _ref_lgamma_pole_nan}),
    Mutant("asinzero", N, "asin(-0.0) is +0.0 (the sign of zero is kept)", ("asin",),
           {"asin": lambda self, x: np.arcsin(x) + np.zeros((), x.dtype)}),
    Mutant("shiftnofill", N, "x >> (bits or more) is 0 for negative x (the sign fill, -1)",
           ("right_shift",), {"right_shift": _np_right_shift_no_fill}),
    Mutant("andbool", N, "bitwise_and of bool arrays gives int8", ("bitwise_and",),
           {"bitwise_and": lambda self, a, b: np.bitwise_and(a, b).astype(np.int8)
            if np.asarray(a).dtype == np.bool_ else np.bitwise_and(a, b)}),
    Mutant("pow00", N, "0 ** 0 is 0 (it is 1)", ("pow",),
           {"pow": lambda self, a, b: np.where((np.asarray(a) == 0) & (np.asarray(b) == 0),
                                               np.zeros((), np.result_type(a, b)),
                                               NumPyBackend.pow(self, a, b))}),
    # ---- signed zeros, rounding
    Mutant("floorzero", R, "floor(-0.0) is +0.0", ("floor",),
           {"floor": _ref_floor_loses_sign}),
    Mutant("floorzero_np", N, "floor(-0.0) is +0.0 (floor(x) + 0.0)", ("floor",),
           {"floor": lambda self, x: np.floor(x) + np.zeros((), x.dtype)}),
    Mutant("negsub", N, "neg as 0 - x: neg(0.0) is +0.0", ("neg",),
           {"neg": lambda self, x: np.subtract(np.zeros((), x.dtype), x)}),
    Mutant("abszero", N, "abs(-0.0) is -0.0", ("abs",),
           {"abs": lambda self, x: np.where(x < 0, -x, x)}),
    Mutant("roundaway", R, "round halves away from zero (halves go to even)", ("round",),
           {"round": _ref_round_half_away}),
    Mutant("roundaway_np", N, "round as floor(x + 0.5)", ("round",),
           {"round": lambda self, x: np.floor(x + np.asarray(0.5, x.dtype))}),
    Mutant("floordivtrunc", N, "floordiv rounds toward zero (toward -inf)", ("floordiv",),
           {"floordiv": _np_floordiv_trunc}),
    # ---- integers
    Mutant("intraise", R, "integer overflow raises (it wraps)", ("add", "mul", "neg"),
           {"_map": _ref_map(check_ints=True)}),
    Mutant("ltsub", N, "lt as (a - b) < 0: wrong where a - b wraps", ("lt",),
           {"lt": _np_lt_by_sub}),
    Mutant("maxzero", N, "integer max starts from 0", ("max",),
           {"max": lambda self, x, axes, keepdims: np.maximum.reduce(
               x, axis=axes, keepdims=keepdims, initial=0) if x.dtype.kind in "iu"
            else np.maximum.reduce(x, axis=axes, keepdims=keepdims)}),
    # ---- casts
    Mutant("castround", N, "float to int rounds (it truncates toward zero)", ("astype",),
           {"astype": _np_astype_rint}),
    Mutant("castnanbool", N, "NaN to bool is False (anything to bool is x != 0)",
           ("astype",), {"astype": _np_astype_nan_false}),
    Mutant("castsaturate", N, "float to float16 saturates at 65504 (IEEE: inf)",
           ("astype",), {"astype": _np_astype_saturate}),
    # ---- precision and weak scalars
    Mutant("f32double", R, "float32/float16 values kept at double precision",
           ("add", "mul", "sum"), {"_map": _ref_map(keep=("float16", "float32"))},
           ("add+sub+mul+div+sum+matmul+eq:results rounded to the dtype",)),
    Mutant("f16double", R, "float16 values kept at double precision", ("add", "div"),
           {"_map": _ref_map(keep=("float16",))}),
    Mutant("weakscalar", R, "weak Python scalars not rounded to the array's dtype",
           ("add", "mul", "div"), {"_map": _ref_map(round_scalars=False)},
           ("add+sub+mul+div+pow+maximum+minimum+eq+lt+floordiv+remainder+where:weak scalars "
            "take the array's dtype",)),
    # ---- random numbers
    Mutant("uniformopen", R, "uniform draws from (0, 1]", ("uniform",),
           {"uniform": _ref_uniform_open_low}, ("uniform:range [0, 1)",)),
    Mutant("uniformround", R, "uniform rounds a double up to 1.0 in float16", ("uniform",),
           {"uniform": _ref_uniform_rounds_up}),
    Mutant("uniformwide", N, "uniform draws from [0, 2)", ("uniform",),
           {"uniform": lambda self, shape, dtype, device: NumPyBackend.uniform(
               self, shape, dtype, device) * 2}),
    Mutant("uniformskew", N, "uniform is not uniform (u**2)", ("uniform",),
           {"uniform": lambda self, shape, dtype, device: NumPyBackend.uniform(
               self, shape, dtype, device) ** 2}, ("uniform:uniform distribution",)),
    Mutant("normalwide", R, "normal has standard deviation 2", ("normal",),
           {"normal": _ref_normal_wide}, ("normal:normal distribution",)),
    Mutant("normaluniform", R, "normal draws uniformly from [-1.7, 1.7)", ("normal",),
           {"normal": _ref_normal_is_uniform}),
    Mutant("seedignored", R, "seed does nothing", ("seed",), {"seed": _ref_seed_ignored},
           ("seed+uniform+normal:same seed, same stream",)),
    Mutant("seedfixed", R, "every seed gives the same stream", ("seed",),
           {"seed": _ref_seed_fixed}),
    Mutant("restart", N, "each draw restarts the stream (successive draws equal)",
           ("uniform",), {"uniform": _np_restart_stream, "seed": _np_seed_keep},
           ("seed+uniform+normal:independent draws",)),
    Mutant("samedraws", R, "successive draws are equal", ("uniform",),
           {"uniform": _ref_correlated}),
    # ---- transfer, aliasing, shapes
    Mutant("nocopy", N, "from_numpy shares memory with its argument", ("from_numpy",),
           {"from_numpy": lambda self, a, dtype, device: np.asarray(a, dtype=dtype)},
           ("from_numpy:from_numpy copies",)),
    Mutant("ftz", N, "from_numpy flushes subnormals to zero", ("from_numpy",),
           {"from_numpy": _np_from_numpy_ftz},
           ("from_numpy+to_numpy:host transfer keeps every value",)),
    Mutant("copyalias", N, "copy returns its input (never a view)", ("copy",),
           {"copy": lambda self, x: x}),
    Mutant("castalias", N, "astype to the same dtype returns its input (always a copy)",
           ("astype",), {"astype": _np_astype_alias}),
    Mutant("sumalias", N, "sum over no axes returns its input", ("sum",),
           {"sum": _np_sum_alias}),
    Mutant("widehost", N, "to_numpy gives float64 for float32", ("to_numpy",),
           {"to_numpy": _np_to_numpy_wide}),
    Mutant("shapelist", R, "reshape gives a shape that is a list", ("reshape",),
           {"reshape": _ref_shape_list}),
    Mutant("shape0d", R, "a full sum is shape (1,), not 0-d", ("sum",),
           {"sum": _ref_sum_0d_as_1}),
    Mutant("keepdims", N, "sum ignores keepdims", ("sum",),
           {"sum": lambda self, x, axes, keepdims: NumPyBackend.sum(self, x, axes, False)}),
    Mutant("prodempty", N, "an empty product is 0 (it is 1)", ("prod",),
           {"prod": _np_prod_empty_zero}),
    Mutant("cumexcl", N, "cumsum is exclusive", ("cumsum",),
           {"cumsum": lambda self, x, axis: np.cumsum(x, axis=axis, dtype=x.dtype) - x}),
    Mutant("reshapeF", N, "reshape in column-major order", ("reshape",),
           {"reshape": lambda self, x, shape: np.reshape(x, shape, order="F")}),
    Mutant("permuteinv", N, "permute applies the inverse permutation", ("permute",),
           {"permute": lambda self, x, axes: np.transpose(x, np.argsort(axes))}),
    Mutant("slicestep", N, "slice ignores the step", ("slice",),
           {"slice": lambda self, x, key: x[tuple(slice(k.start, k.stop) for k in key)]}),
    Mutant("scatteroverwrite", N, "scatter_add overwrites repeated indices", ("scatter_add",),
           {"scatter_add": _np_scatter_add_overwrite}),
    Mutant("devindex", N, "from_numpy refuses an explicit device index 0", ("device",),
           {"from_numpy": _np_device_refused},
           ("from_numpy+full+uniform+device_count:device indices",)),
    Mutant("bf16asf32", _BF16AsFloat32, "bfloat16 declared, held at float32 precision",
           ("add", "exp"), {}),
    Mutant("assignloop", N, "assign reads an overlapping value while writing it",
           ("assign",), {"assign": _np_assign_loop},
           ("assign:assign copies an overlapping value first",)),
    Mutant("argsortnan", N, "argsort puts NaN first (it sorts as the largest)", ("argsort",),
           {"argsort": _np_argsort_nan_first}),
    Mutant("argmaxint32", N, "argmax returns int32", ("argmax",),
           {"argmax": lambda self, x, axis, keepdims: np.argmax(
               x, axis=axis, keepdims=keepdims).astype(np.int32)}),
    Mutant("dlpackflat", N, "from_dlpack flattens (the shape is kept, 0-d too)",
           ("from_dlpack",), {"from_dlpack": lambda self, obj, device: np.from_dlpack(
               obj).reshape(-1)}),
    Mutant("absboolalias", N, "abs of a bool array returns its input (results are new)",
           ("abs",), {"abs": lambda self, x: x if x.dtype == np.bool_ else np.abs(x)}),
    Mutant("maxboolint", N, "max of a bool array gives int8 (bool arrays reach max)",
           ("max",), {"max": lambda self, x, axes, keepdims: np.max(
               x.astype(np.int8) if x.dtype == np.bool_ else x, axis=axes,
               keepdims=keepdims)}),
]
