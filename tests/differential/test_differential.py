"""Differential testing against PyTorch: generated programs run on ``torch`` and ``plugrad``.

Every public entry of the op database (``plugrad.testing.opdb``, ``_opdb_nn`` and the
area modules: new entries are picked up automatically) gets property-based cases drawn by
hypothesis: one of its samples (0-d, empty, broadcasting, non-contiguous inputs), with
values from a family (uniform, special: nan/inf/±0/huge/subnormal, ties, zeros,
extremes), in a declared dtype or an undeclared one (then torch and plugrad must both
raise), through the function, the method, the in-place method or the in-place method on a
view, elementwise ops also with freshly drawn mutually broadcastable shapes and mixed
dtypes, and in float64 with first- and second-order gradients (``autograd.grad`` with
``create_graph``). See ``runner.py`` for what is compared.

Divergences listed in ``known.py`` are accepted (and must keep diverging); any other fails
with the case, which replays with ``runner.run_case``. Reproducible: each op's draws are
seeded by its name, with no example database.

Environment:
* ``PLUGRAD_DIFF_EXAMPLES=N``: cases per op on ``cpu`` (default 25; ``ref`` runs N//4, at
  least 1). Raise it to hunt for bugs, e.g. ``PLUGRAD_DIFF_EXAMPLES=200``.
* ``PLUGRAD_DIFF_COLLECT=path``: record every divergence as a JSON line in ``path`` and
  do not fail (for triage); the rates are printed at the end of the run either way.
"""
from __future__ import annotations

import os
import zlib

import pytest

torch = pytest.importorskip("torch", reason="differential tests compare with PyTorch, "
                            "which is not installed")
pytest.importorskip("hypothesis", reason="differential tests draw cases with hypothesis")

from hypothesis import Phase, given, seed, settings, strategies as st  # noqa: E402
from hypothesis.extra.numpy import mutually_broadcastable_shapes  # noqa: E402

from plugrad.testing.opdb import OP_DB  # noqa: E402

from .harness import DTYPES, FAMILIES, POINTWISE_MODULES, Case, Skip  # noqa: E402
from .known import KNOWN, known_for  # noqa: E402
from .runner import run_case  # noqa: E402
from .stats import COLLECT, STATS  # noqa: E402

PUBLIC = [info for info in OP_DB if info.kind == "public" and not info.random]
EXAMPLES = int(os.environ.get("PLUGRAD_DIFF_EXAMPLES", "25"))
PER_DEVICE = {"cpu": EXAMPLES, "ref": max(1, EXAMPLES // 4)}


def _pointwise(info) -> bool:
    module = getattr(info.op, "__module__", "").rsplit(".", 1)[-1]
    return info.promotion is not None or module in POINTWISE_MODULES


@st.composite
def cases(draw, info, device):
    declared = [d for d in DTYPES if d in info.dtypes]
    others = [d for d in DTYPES if d not in info.dtypes]
    grad_ok = info.differentiable and "float64" in declared
    pick, order = draw(st.integers(0, 9)), 0
    if grad_ok and pick < 3:
        dtype, order = "float64", draw(st.sampled_from((1, 2)))
    elif others and pick == 9:
        dtype = draw(st.sampled_from(others))
    else:
        dtype = draw(st.sampled_from(declared))
    forms = ["fn"] + (["method"] if info.method is not None else []) + \
        (["inplace", "inplace_view"] if info.inplace else [])
    shapes = dtype2 = None
    if _pointwise(info) and draw(st.booleans()):
        shapes = draw(mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3,
                                                    min_side=0, max_side=3)).input_shapes
        if order == 0 and draw(st.integers(0, 3)) == 0:
            dtype2 = draw(st.sampled_from(DTYPES))
    return Case(info.name, device, dtype, sample=draw(st.integers(0, 15)),
                family=draw(st.sampled_from(FAMILIES)), seed=draw(st.integers(0, 2 ** 20)),
                form=draw(st.sampled_from(forms)), order=order, shapes=shapes, dtype2=dtype2)


def check(info, case):
    """Run one case; fail on a divergence that no KNOWN entry accepts."""
    try:
        form, divs = run_case(info, case)
    except Skip:
        return
    unexplained = [d for d in divs if known_for(info.name, case, form, d) is None]
    STATS.record(case, form, divs, unexplained)
    if unexplained and not COLLECT:
        raise AssertionError("plugrad differs from torch:\n  " + "\n  ".join(
            map(str, unexplained)) + f"\nreplay: run_case(opdb entry {info.name!r}, {case!r})")


@pytest.mark.parametrize("device", sorted(PER_DEVICE))
@pytest.mark.parametrize("info", PUBLIC, ids=lambda i: i.name)
def test_matches_torch(info, device):
    @seed(zlib.crc32(f"{info.name}/{device}".encode()))
    @settings(settings.get_profile("plugrad-differential"), max_examples=PER_DEVICE[device],
              phases=(Phase.generate, Phase.shrink))
    @given(cases(info, device))
    def run(case):
        check(info, case)
    run()


_BY_NAME = {info.name: info for info in PUBLIC}


@pytest.mark.parametrize("entry", KNOWN, ids=lambda k: f"{k.ops[0]}:{k.match}")
def test_known_still_diverge(entry):
    """A KNOWN entry whose example no longer diverges (in the way it says) must go."""
    case = entry.example
    form, divs = run_case(_BY_NAME[case.op], case)
    assert any(entry.matches(case.op, case, form, d) for d in divs), (
        f"KNOWN entry for {entry.ops} ({entry.match}) no longer diverges on its example "
        f"{case!r}: it is fixed, remove it from tests/differential/known.py "
        f"(divergences now: {[str(d) for d in divs]})")
