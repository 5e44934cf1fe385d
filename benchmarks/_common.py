"""Shared helpers of the asv suites (not a benchmark module itself).

Every suite is parametrised by device over the same list, so that results stay comparable
from machine to machine: ``cpu`` always runs, ``ref`` (pure Python) only at small sizes, and
``cuda`` only where ``plugrad.cuda.is_available()``. Impossible combinations raise
``NotImplementedError`` in ``setup``, which asv records as skipped.
"""
import plugrad

DEVICES = ["cpu", "ref", "cuda"]

# largest problem (in elements, or a suite's own size label) the ref backend is asked to run
REF_MAX_ELEMENTS = 10_000


def require(device, size=None, ref_max=REF_MAX_ELEMENTS):
    """Skip (``NotImplementedError``) what this machine or backend cannot run."""
    if device.startswith("cuda") and not plugrad.cuda.is_available():
        raise NotImplementedError("no CUDA device")
    if device == "ref" and size is not None and size > ref_max:
        raise NotImplementedError("too large for the pure-Python ref backend")


def require_nn(*names):
    """Skip on a plugrad without these ``plugrad.nn`` members (older commits)."""
    try:
        nn = plugrad.nn
    except (AttributeError, ImportError) as e:
        raise NotImplementedError(f"plugrad.nn unavailable: {e}")
    for name in names:
        if not hasattr(nn, name):
            raise NotImplementedError(f"plugrad.nn.{name} unavailable")
    return nn


def sync(device):
    """Wait for queued device work, so that a timing covers it."""
    if device.startswith("cuda"):
        plugrad.cuda.synchronize()


def randn(shape, device, requires_grad=False):
    plugrad.manual_seed(0)
    return plugrad.randn(*shape, device=device, requires_grad=requires_grad)
