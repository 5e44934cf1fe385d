"""The op database's entries for the math ops (``plugrad.core.ops.transcendental``,
``plugrad.core.ops.bitwise``, ``plugrad.special``) and their kernels (``contract_math.py``).

Public entries get forward-vs-ref in every dtype, float64 gradcheck (inside each function's
domain) and the bit-equality of the two backward bindings; kernel entries get random samples
and the special values (NaN, infinities, signed zeros, extremes, subnormals; integer edges
and shifts by negative amounts and by the bit width or more) against the reference backend.
"""
from __future__ import annotations

import numpy as np

import plugrad
import plugrad.special
from plugrad.testing import _specials as sp
from plugrad.testing.opdb import (ALL, BOOL, FLOATS, INTS, K_FLOATS, K_INTS, OpInfo,
                                  SampleInput as S, _add, _arr, _KS, _P, k_binary, k_unary,
                                  s_binary, s_unary, sp_binary, sp_unary)

# ---------------------------------------------------------------------- public: unary
_UNARY = [  # name, (low, high) inside the domain (for gradcheck), aliases are declared
    ("asin", (-0.9, 0.9)), ("acos", (-0.9, 0.9)), ("atan", (-2, 2)), ("sinh", (-2, 2)),
    ("cosh", (-2, 2)), ("asinh", (-2, 2)), ("acosh", (1.2, 3)), ("atanh", (-0.9, 0.9)),
    ("erfc", (-2, 2)), ("erfinv", (-0.9, 0.9)), ("lgamma", (0.2, 3)), ("digamma", (0.2, 3)),
    ("sinc", (-2, 2)), ("deg2rad", (-2, 2)), ("rad2deg", (-2, 2)),
]
for _name, (_lo, _hi) in _UNARY:
    _add(_P(_name, sample_inputs=s_unary(_lo, _hi), differentiable=True, dtypes=ALL))


def s_frac(make, dtype):
    yield from s_unary(-3, 3)(make, dtype)


def s_logit(make, dtype):
    yield from s_unary(0.1, 0.9)(make, dtype)
    yield S((make(2, 3, low=0.0, high=1.0),), {"eps": 0.2}, name="eps 0.2")


def s_polygamma(make, dtype):
    """``(x, n)``: the entry's function swaps them back (``polygamma(n, x)``)."""
    for n in (1, 2, 3):
        yield S((make(2, 3, low=0.5, high=3.0), n), name=f"n={n}")
    yield S((make(3, low=0.5, high=3.0), 0), name="n=0 (digamma)")
    yield S((make(low=0.5, high=3.0), 1), name="0-d")


_add(
    _P("frac", sample_inputs=s_frac, differentiable=True, dtypes=FLOATS),
    _P("logit", sample_inputs=s_logit, differentiable=True, dtypes=ALL),
    _P("polygamma", lambda x, n: plugrad.polygamma(n, x), sample_inputs=s_polygamma,
       differentiable=True, dtypes=ALL, method=lambda args, kw: args[0].polygamma(args[1]),
       tol={"float32": (1e-4, 1e-4), "float16": (2e-2, 2e-2)}),
)


# ---------------------------------------------------------------------- public: binary
_add(
    # (atan2 and hypot take Tensor operands only, as in PyTorch)
    _P("atan2", sample_inputs=s_binary(rhs_nonzero=True, scalars=False), differentiable=True,
       promotion="float", dtypes=ALL),
    _P("hypot", sample_inputs=s_binary(scalars=False), differentiable=True, promotion="float",
       dtypes=FLOATS),
    _P("copysign", sample_inputs=s_binary(rhs_nonzero=True), differentiable=True,
       promotion="float", dtypes=ALL),
    _P("xlogy", sample_inputs=s_binary(rlow=0.2, rhigh=3.0), differentiable=True,
       promotion="float", dtypes=ALL),
    _P("logaddexp", sample_inputs=s_binary(scalars=False), differentiable=True,
       promotion="float", dtypes=FLOATS),
    _P("logaddexp2", sample_inputs=s_binary(scalars=False), differentiable=True,
       promotion="float", dtypes=FLOATS),
    _P("float_power", sample_inputs=s_binary(0.5, 2.0), differentiable=True, dtypes=ALL,
       np_ref=lambda a, b: np.power(np.asarray(a, np.float64), np.asarray(b, np.float64))),
    OpInfo("special.xlog1py", plugrad.special.xlog1py, s_binary(rlow=0.2, rhigh=3.0),
           kind="public", differentiable=True, dtypes=ALL),
)


# ---------------------------------------------------------------------- public: bitwise
def s_shift(make, dtype):
    """Shift amounts are int64 for a bool input (PyTorch has no bool shift; a bool shifted by
    an integer is promoted)."""
    sd = "int64" if dtype == "bool" else None
    yield S((make(2, 3, low=-20, high=20), make(2, 3, low=0, high=5, dtype=sd)),
            name="same shape")
    yield S((make(2, 3, low=-20, high=20), make(3, low=0, high=5, dtype=sd)), name="broadcast")
    yield S((make(2, 3, low=-20, high=20), 3), name="scalar shift")
    yield S((make(2, 3, low=-20, high=20), -1), name="negative scalar shift")
    yield S((make(2, 3, low=-20, high=20), 64), name="shift by the width")
    yield S((make(low=-20, high=20), make(low=0, high=3, dtype=sd)), name="0-d")


_INT_OR_BOOL = BOOL + INTS
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    _add(_P(_name, sample_inputs=s_binary(-20, 20), promotion="promote", dtypes=_INT_OR_BOOL))
_add(
    _P("bitwise_not", sample_inputs=s_unary(-20, 20), dtypes=_INT_OR_BOOL),
    _P("bitwise_left_shift", sample_inputs=s_shift, dtypes=_INT_OR_BOOL),
    _P("bitwise_right_shift", sample_inputs=s_shift, dtypes=_INT_OR_BOOL),
)


# ---------------------------------------------------------------------- kernels
def sp_shift(make, dtype):
    """Each integer edge shifted by -1 .. 2 * bits (PyTorch's results out of range)."""
    bits = int(dtype.lstrip("uint"))
    shifts = list(range(0 if dtype.startswith("u") else -2, bits + 3)) + [2 * bits]
    shifts = [s for s in shifts if sp.iinfo(dtype)[0] <= s <= sp.iinfo(dtype)[1]]
    edges = sp.int_edges(dtype)
    a = [x for x in edges for _ in shifts]
    b = [s for _ in edges for s in shifts]
    yield S((_arr(a, dtype), _arr(b, dtype)), name="edges by every shift", in_dtype=True)


def k_shift(make, dtype):
    yield S((make(2, 3, low=-20, high=20), make(2, 3, low=0, high=5)), name="same shape")
    yield S((make(2, 3, low=-20, high=20), make(3, low=0, high=5)), name="broadcast")
    yield S((make(0, 3), make(3, low=0, high=5)), name="zero-size")
    yield S((make(2, 3, low=-20, high=20), 3), name="array-scalar")
    yield S((3, make(2, 3, low=0, high=5)), name="scalar-array")


_KERNEL_DOMAINS = {"asin": (-1, 1), "acos": (-1, 1), "acosh": (1, 3), "atanh": (-1, 1),
                   "erfinv": (-1, 1), "lgamma": (-3, 5), "digamma": (-3, 5), "erfc": (-3, 3)}
_add(
    *(_KS(n, k_unary(*_KERNEL_DOMAINS.get(n, (-2, 2))), K_FLOATS, sp_unary())
      for n in ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erfc",
                "erfinv", "lgamma", "digamma")),
    *(_KS(n, k_binary(), K_FLOATS, sp_binary()) for n in ("atan2", "hypot", "copysign")),
    *(_KS(n, k_binary(-20, 20), BOOL + K_INTS, sp_binary())
      for n in ("bitwise_and", "bitwise_or", "bitwise_xor")),
    _KS("bitwise_not", k_unary(-20, 20), K_INTS, sp_unary()),
    _KS("left_shift", k_shift, K_INTS, sp_shift), _KS("right_shift", k_shift, K_INTS, sp_shift),
)
