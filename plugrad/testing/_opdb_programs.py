"""The op database's entries for the spellings real PyTorch programs needed (issue 14):
``select``, ``ravel``, ``type_as``, ``nan_to_num`` (``plugrad/core/ops/compat.py``).

Comparisons with PyTorch itself are in ``tests/programs/test_compat_ops.py``.
"""
from __future__ import annotations

import plugrad

from plugrad.testing.opdb import ALL, FLOATS, SampleInput as S, _add, _P


def s_select(make, dtype):
    yield S((make(3, 4), 1, 2), name="dim 1")
    yield S((make(3, 4, layout="T"), 0, -1), name="neg index, transposed")
    yield S((make(2, 3, 2), -1, 0), name="neg dim")
    yield S((make(4), 0, 3), name="1-d to 0-d")


def s_ravel(make, dtype):
    yield S((make(2, 3),), name="2-d")
    yield S((make(3, 2, layout="T"),), name="transposed (a copy)")
    yield S((make(),), name="0-d")


def s_type_as(make, dtype):
    # float targets are checked against PyTorch (the suite compares floats in float64)
    yield S((make(2, 3), make(1)), name="same dtype")
    for other in ("int64", "bool"):
        yield S((make(2, 3), plugrad.zeros(1, dtype=getattr(plugrad, other),
                                           device=make.device)), name=f"to {other}",
                grad=False)


def s_nan_to_num(make, dtype):
    # the default replacements (the dtype's extremes) are checked against PyTorch: the
    # suite's float64 reference has other extremes
    if dtype in FLOATS:
        special = plugrad.tensor([[1.5, float("nan"), -2.0], [float("inf"), -float("inf"), 0.0]],
                                 device=make.device).to(getattr(plugrad, dtype))
        yield S((special, 1.0, 2.0, -3.0), name="given values", grad=False)
        yield S((special, None, 7.0, -7.0), name="nan default", grad=False)
    yield S((make(2, 3),), name="finite")


_add(
    _P("select", sample_inputs=s_select, differentiable=True, dtypes=ALL),
    _P("ravel", sample_inputs=s_ravel, differentiable=True, dtypes=ALL),
    _P("type_as", lambda x, o: x.type_as(o), sample_inputs=s_type_as, differentiable=True,
       method="type_as", dtypes=ALL),
    _P("nan_to_num", sample_inputs=s_nan_to_num, differentiable=True, dtypes=ALL),
)
