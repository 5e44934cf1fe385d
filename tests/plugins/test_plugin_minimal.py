"""The backend author's guide (docs/backends.md) is enough to write a working backend:
``examples/plugins/plugrad-minimal`` is the guide's code, and it trains a model."""
from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

import plugrad
import plugrad.nn as nn
import plugrad.optim as optim
from plugrad.backends.contract import Backend, optional_kernels, required_primitives
from plugrad.core.registry import get_registry

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "backends.md"
EXAMPLE = ROOT / "examples" / "plugins" / "plugrad-minimal"


def _guide_files() -> dict[str, str]:
    """The code blocks of the guide that start with ``# file: NAME``."""
    out = {}
    for body in re.findall(r"```\w+\n(# file: .*?)```", GUIDE.read_text(), re.S):
        first, rest = body.split("\n", 1)
        out[first.removeprefix("# file: ").strip()] = rest
    return out


def test_example_is_the_guide_code():
    files = _guide_files()
    assert set(files) == {"pyproject.toml", "plugrad_minimal.py"}
    for name, text in files.items():
        assert (EXAMPLE / name).read_text() == text, f"{name} differs from docs/backends.md"
    assert 'minimal = "plugrad_minimal"' in files["pyproject.toml"]
    assert '[project.entry-points."plugrad.backends"]' in files["pyproject.toml"]


def test_guide_lists_exactly_the_contract():
    text = GUIDE.read_text()
    listed = re.findall(r"^\| `(\w+)\(", text, re.M)
    assert sorted(listed) == sorted(required_primitives())
    for name in listed:  # each row carries the docstring's first sentence
        first = " ".join(getattr(Backend, name).__doc__.split()).split(". ")[0]
        assert first.replace("``", "`").replace("|", "\\|") in text, name
    for name in optional_kernels():
        assert f"`{name}`" in text, f"optional kernel {name} is not in the guide"
    assert f"Implement the {len(required_primitives())} required primitives" in text


@pytest.fixture(scope="module")
def minimal_module():
    spec = importlib.util.spec_from_file_location("plugrad_minimal",
                                                  EXAMPLE / "plugrad_minimal.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def mini(minimal_module):
    reg = get_registry()
    name = reg.register_plugin(minimal_module)
    yield reg.backends["mini"]
    reg.unregister_plugin(name)
    assert "mini" not in reg.backends


def test_registered_in_process(mini):
    reg = get_registry()
    assert type(mini).__mro__[1] is Backend and mini.name == "minimal"
    sources = reg.kernel_sources("mini")
    assert all(sources[op] == "minimal" for op in required_primitives())
    assert all(sources[op] == "composite" for op in optional_kernels())
    x = plugrad.tensor([[1., 2.], [3., 4.]], device="mini", requires_grad=True)
    assert repr(x * 2) == "tensor([[2., 4.],\n        [6., 8.]], device='mini', grad_fn=" \
                          "<MulBackward0>)"
    (x @ x).softmax(-1).sum().backward()  # softmax is a composite on mini
    assert x.grad.device == "mini" and x.grad.shape == (2, 2)
    assert plugrad.tensor(3.0, device="mini").shape == ()


def _train(device):
    """A tiny MLP regression (Linear-Tanh-Linear, MSELoss, Adam), all on ``device``."""
    plugrad.manual_seed(0)
    x = plugrad.linspace(-2, 2, 32).reshape(32, 1)
    y = x.sin() * 2
    x, y = x.to(device), y.to(device)
    model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1)).to(device)
    opt = optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _ in range(150):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.device == device for p in model.parameters())
    return losses


def test_trains_a_tiny_model(mini):
    losses = _train("mini")
    assert losses[-1] < losses[0] / 20, (losses[0], losses[-1])
    assert losses == pytest.approx(_train("cpu"), rel=1e-4, abs=1e-6)


def test_conformance_suite_passes_on_minimal(site):
    """Installed as the guide says (entry point ``minimal``), the guide's backend passes the
    conformance suite's kernel checks with the guide's command."""
    shutil.copy(EXAMPLE / "plugrad_minimal.py", site.root / "plugrad_minimal.py")
    site.add("plugrad-minimal", {"minimal": "plugrad_minimal"}, {})
    out = site.run("-m", "pytest", "--pyargs", "plugrad.testing.conformance",
                   "--plugrad-backend", "mini", "-k", "test_kernel", "-p", "no:cacheprovider",
                   "-q", timeout=600)
    assert out.returncode == 0, out.stdout[-5000:] + out.stderr[-2000:]
    assert "ops failing: 0" in out.stdout
    assert "matmul (kernel)" in out.stdout and " mini " in out.stdout


def test_sign_of_bool_on_minimal(mini):
    assert plugrad.tensor([True, False], device="mini").sign().tolist() == [True, False]
