"""Fixtures of the tests that run plugrad's ``cuda`` backend on the fake CuPy."""
import os
import sys

import numpy as np
import pytest

from plugrad.core.registry import get_registry

sys.path.insert(0, os.path.dirname(__file__))
import fake_cupy  # noqa: E402


def _use_fake(monkeypatch, n_devices):
    fake_cupy.install(monkeypatch, n_devices=n_devices)
    from plugrad.backends.cupy import CuPyBackend
    backend = CuPyBackend()
    reg = get_registry()
    monkeypatch.setitem(reg.backends, "cuda", backend)
    monkeypatch.setitem(reg.origins, "cuda", "built-in")
    reg._tables.pop("cuda", None)
    reg.seeded.pop("cuda", None)
    return backend


@pytest.fixture
def fake_cuda(monkeypatch):
    """One fake GPU."""
    backend = _use_fake(monkeypatch, 1)
    yield backend
    get_registry()._tables.pop("cuda", None)
    get_registry().seeded.pop("cuda", None)
    fake_cupy.reset(1)


@pytest.fixture
def fake_cuda2(monkeypatch):
    """Two fake GPUs (``cuda:0``, ``cuda:1``)."""
    backend = _use_fake(monkeypatch, 2)
    yield backend
    get_registry()._tables.pop("cuda", None)
    get_registry().seeded.pop("cuda", None)
    fake_cupy.reset(1)


def on_gpu(t):
    return isinstance(t._data, fake_cupy.ndarray)


def same(a, b, tol=1e-6):
    a, b = a.detach().cpu().numpy(), b.detach().cpu().numpy()
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
