"""Differential testing against PyTorch: generated programs run on ``torch`` and ``plugrad``.

Every public entry of the op database (``plugrad.testing.opdb``, ``_opdb_nn`` and the
area modules: new entries are picked up automatically) gets property-based cases drawn
from a seeded generator (:func:`draw_case`): one of its samples (0-d, empty, broadcasting, non-contiguous inputs), with
values from a family (uniform, special: nan/inf/±0/huge/subnormal, ties, zeros,
extremes), in a declared dtype or an undeclared one (then torch and plugrad must both
raise), through the function, the method, the in-place method or the in-place method on a
view, elementwise ops also with freshly drawn mutually broadcastable shapes and mixed
dtypes, and in float64 with first- and second-order gradients (``autograd.grad`` with
``create_graph``). See ``runner.py`` for what is compared.

Divergences listed in ``known.py`` are accepted (and must keep diverging); any other fails
with the case, which replays with ``runner.run_case``. Reproducible: each op's draws are
a pure function of its name and device (``random.Random`` seeded by them: hypothesis'
adaptive generation drew other cases after other tests had run in the same session, and
a run must be the same alone and in the full suite), and each test starts from the same
global state (``conftest.py``).

Environment:
* ``PLUGRAD_DIFF_EXAMPLES=N``: cases per op on ``cpu`` (default 25; ``ref`` runs N//4, at
  least 1). Raise it to hunt for bugs, e.g. ``PLUGRAD_DIFF_EXAMPLES=200``.
* ``PLUGRAD_DIFF_COLLECT=path``: record every divergence as a JSON line in ``path`` and
  do not fail (for triage); the rates are printed at the end of the run either way.
"""
from __future__ import annotations

import os
import random
import zlib

import pytest

torch = pytest.importorskip("torch", reason="differential tests compare with PyTorch, "
                            "which is not installed")


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


def _shapes(rng):
    """Three mutually broadcastable shapes (0 to 3 dims of 0 to 3 elements, size-1 and
    missing leading dims broadcasting), as hypothesis' ``mutually_broadcastable_shapes``."""
    result = [rng.randint(0, 3) for _ in range(rng.randint(0, 3))]
    shapes = []
    for _ in range(3):
        tail = result[len(result) - rng.randint(0, len(result)):] if result else []
        shapes.append(tuple(1 if rng.random() < 0.3 else n for n in tail))
    return tuple(shapes)


def draw_case(rng, info, device):
    """One case for ``info``: a sample, a value family, a dtype (declared, or one that must
    be rejected), a calling form, a gradient order, broadcast shapes and mixed dtypes for
    elementwise ops. ``rng`` is a ``random.Random``: the draws are a pure function of its
    seed."""
    declared = [d for d in DTYPES if d in info.dtypes]
    others = [d for d in DTYPES if d not in info.dtypes]
    grad_ok = info.differentiable and "float64" in declared
    pick, order = rng.randint(0, 9), 0
    if grad_ok and pick < 3:
        dtype, order = "float64", rng.choice((1, 2))
    elif others and pick == 9:
        dtype = rng.choice(others)
    else:
        dtype = rng.choice(declared)
    forms = ["fn"] + (["method"] if info.method is not None else []) + \
        (["inplace", "inplace_view"] if info.inplace else [])
    shapes = dtype2 = None
    if _pointwise(info) and rng.random() < 0.5:
        shapes = _shapes(rng)
        if order == 0 and rng.randint(0, 3) == 0:
            dtype2 = rng.choice(DTYPES)
    return Case(info.name, device, dtype, sample=rng.randint(0, 15),
                family=rng.choice(FAMILIES), seed=rng.randint(0, 2 ** 20),
                form=rng.choice(forms), order=order, shapes=shapes, dtype2=dtype2)


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
    rng = random.Random(zlib.crc32(f"{info.name}/{device}".encode()))
    for _ in range(PER_DEVICE[device]):
        check(info, draw_case(rng, info, device))


_BY_NAME = {info.name: info for info in PUBLIC}


@pytest.mark.parametrize("entry", KNOWN, ids=lambda k: f"{k.ops[0]}:{k.match}")
def test_known_still_diverge(entry):
    """A KNOWN entry whose example no longer diverges (in the way it says) must go."""
    case = entry.example
    form, divs = run_case(_BY_NAME[case.op], case)
    if entry.platform:  # torch's answer is its CPU's: agreeing here is no fix
        unexplained = [d for d in divs if known_for(case.op, case, form, d) is None]
        assert not unexplained, [str(d) for d in unexplained]
        return
    assert any(entry.matches(case.op, case, form, d) for d in divs), (
        f"KNOWN entry for {entry.ops} ({entry.match}) no longer diverges on its example "
        f"{case!r}: it is fixed, remove it from tests/differential/known.py "
        f"(divergences now: {[str(d) for d in divs]})")
