"""``examples/plugins/plugrad-pylist``: a backend from scratch on flat Python lists passes
the whole conformance suite, installed as a user installs it (the README's test command
installs it with ``-e``), run with the guide's command from an empty folder."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import plugrad
import plugrad.nn as nn
from plugrad.core.registry import get_registry

INSTALL = "pip install -e ./examples/plugins/plugrad-pylist"


def test_it_is_found_through_its_entry_point():
    reg = get_registry()
    reg.load_entry_points()
    if "pylist" not in reg.backends:
        pytest.fail(f"the example plugin plugrad-pylist is not installed: run `{INSTALL}` "
                    f"(the README's test command does)")
    assert reg.backends["pylist"].name == "pylist"
    assert reg.origins["pylist"] == "plugrad-pylist (entry point pylist)"
    assert type(reg.backends["pylist"]).__mro__[1].__name__ == "Backend"  # no helper base


def test_a_small_model_trains_on_it():
    plugrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).to("pylist")
    opt = plugrad.optim.SGD(model.parameters(), lr=0.1)
    x = plugrad.randn(8, 3, device="pylist")
    y = (x.sum(1, keepdim=True) > 0).float()
    losses = []
    for _ in range(20):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0], losses


def test_conformance_suite_passes(tmp_path):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PLUGRAD_DEVICE", None)
    out = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "plugrad.testing.conformance",
                          "--plugrad-backend", "pylist", "-q", "-p", "no:cacheprovider", "-o",
                          "addopts=", "--rootdir", str(tmp_path)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert "ops failing: 0" in out.stdout and "test_contract" not in out.stdout.split("passed")[-1]
