"""pytest plugin: run the whole test suite with ``cuda`` served by the fake CuPy.

    python -m pytest -p tests.cuda.fake_plugin tests

Every test parametrised over ``device`` then also runs on ``cuda`` -- through plugrad's CuPy
backend on ``tests/cuda/fake_cupy.py`` (NumPy underneath). This checks plugrad's code paths on
the ``cuda`` device, not CuPy and not a GPU. ``FAKE_CUPY_DEVICES=2`` pretends there are two GPUs.
It must be loaded with ``-p`` so that it runs before ``tests/conftest.py`` asks which devices
are available.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import fake_cupy  # noqa: E402

fake_cupy.install(n_devices=int(os.environ.get("FAKE_CUPY_DEVICES", "1")))


def pytest_report_header(config):
    return [f"cupy is FAKE (tests/cuda/fake_cupy.py, NumPy-backed, "
            f"{fake_cupy.N_DEVICES} device(s)): checks plugrad's code paths, not CuPy or a GPU"]
