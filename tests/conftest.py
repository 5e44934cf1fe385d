"""Shared fixtures: every test that takes ``device`` runs on each available backend."""
import pytest

import plugrad
from plugrad.core.registry import get_registry


def available_devices():
    """Device types of the built-in backends that can run here (``cuda`` only with a GPU).

    Third-party backends installed in the environment are checked by the conformance
    suite (plugrad.testing), not by the project's own tests.
    """
    registry = get_registry()
    return [t.device_type for t in registry.available_tables()
            if registry.origins.get(t.device_type) == "built-in"]


DEVICES = available_devices()


@pytest.fixture(params=DEVICES)
def device(request):
    """A device type string: ``cpu``, ``ref`` (and ``cuda`` where a GPU is present)."""
    return request.param


@pytest.fixture(autouse=True)
def _seeded():
    plugrad.manual_seed(0)
    yield


def pytest_report_header(config):
    missing = [] if "cuda" in DEVICES else ["cuda (no CuPy/GPU here: cuda tests are skipped)"]
    return [f"plugrad devices under test: {', '.join(DEVICES)}"] + missing
