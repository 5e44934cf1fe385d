"""Shared fixtures: every test that takes ``device`` runs on each built-in backend.

``cuda`` is always a parameter: without CuPy or a GPU its tests skip, saying why.
"""
import pytest

import plugrad
from plugrad.core.registry import get_registry


def builtin_devices():
    """``(device_type, reason_unavailable)`` for each built-in backend.

    Third-party backends installed in the environment are checked by the conformance
    suite (plugrad.testing), not by the project's own tests.
    """
    registry = get_registry()
    out = []
    for device_type, backend in sorted(registry.backends.items()):
        if registry.origins.get(device_type) != "built-in":
            continue
        reason = "" if backend.is_available() else backend.unavailable_reason()
        out.append((device_type, reason))
    return out


BUILTIN = builtin_devices()
DEVICES = [d for d, reason in BUILTIN if not reason]


@pytest.fixture(params=[pytest.param(d, marks=pytest.mark.skipif(
    bool(reason), reason=f"device {d!r} unavailable: {reason}")) for d, reason in BUILTIN])
def device(request):
    """A device type string: ``cpu``, ``ref``, and ``cuda`` (skipped without a GPU)."""
    return request.param


@pytest.fixture(autouse=True)
def _seeded():
    plugrad.manual_seed(0)
    yield


def pytest_report_header(config):
    lines = [f"plugrad devices under test: {', '.join(DEVICES)}"]
    lines += [f"skipping device {d}: {reason}" for d, reason in BUILTIN if reason]
    return lines


# ------------------------------------------------ the differential suite's summary line
# Here rather than in tests/differential/conftest.py: under pytest-xdist (the README's test
# command) the controller collects nothing, so only this conftest is loaded there; each
# worker hands its counts over at the end of its session and the controller adds them up.
from differential.stats import STATS  # noqa: E402  (tests/ is on sys.path: rootdir conftest)


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["plugrad_differential"] = STATS.dump()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    STATS.merge(getattr(node, "workeroutput", {}).get("plugrad_differential", {}))


def pytest_terminal_summary(terminalreporter):
    lines = STATS.lines()
    if lines:
        terminalreporter.section("differential testing against torch")
        for line in lines:
            terminalreporter.write_line(line)
