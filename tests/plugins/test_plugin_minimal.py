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
from plugrad.core.registry import BackendError, Registry, get_registry

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
    rows = dict(re.findall(r"^\| `(\w+)\(.*?\)[^`]*` \| (.*) \|$", text, re.M))
    assert sorted(rows) == sorted(required_primitives())
    for name, meaning in rows.items():  # each row is the primitive's docstring, word for word
        doc = " ".join(getattr(Backend, name).__doc__.split()).replace("``", "`")
        assert meaning == re.sub(r":meth:`(\w+)`", r"`\1`", doc).replace("|", "\\|"), name
    for name in optional_kernels():
        assert f"`{name}`" in text, f"optional kernel {name} is not in the guide"
    n = len(required_primitives())
    assert f"Implement the {n} required primitives" in text
    readme = (ROOT / "README.md").read_text()
    assert f"primitives ({n}, " in readme and f"{n} required primitives" in readme


def _quoted(text: str) -> str:
    """The guide's prose with its line breaks undone (quotes in backticks span lines)."""
    return " ".join(text.split())


def test_guide_quotes_the_real_errors(minimal_module, monkeypatch):
    """Section 8's quoted refusals are what this Python and this registry say, word for word;
    the missing-primitives TypeError is quoted for every supported Python's wording."""
    guide = _quoted(GUIDE.read_text())
    full = minimal_module.MinimalBackend
    lacking = type("MinimalBackend", (Backend,), {
        k: v for k, v in vars(full).items() if k not in ("exp", "matmul", "__dict__")})
    with pytest.raises(TypeError) as python_says:
        lacking()
    assert f"`TypeError: {python_says.value}`" in guide
    for wording in ("with abstract methods exp, matmul` (Python 3.10 and 3.11)",
                    "without an implementation for abstract methods 'exp', 'matmul'` (3.12"):
        assert f"Can't instantiate abstract class MinimalBackend {wording}" in guide

    reg = Registry()
    made_anyway = type("MinimalBackend", (full,), {})()
    monkeypatch.setattr(type(made_anyway), "__abstractmethods__", frozenset({"exp", "matmul"}))
    with pytest.raises(BackendError) as registry_says:
        reg.add_backend(made_anyway)
    assert f"`{registry_says.value}`" in guide
    monkeypatch.undo()

    other = full()
    other.name = "other"
    reg.add_backend(other, origin="plugrad-other (entry point other)")
    with pytest.raises(BackendError) as served:
        reg.add_backend(full(), origin="plugrad-minimal (entry point minimal)")
    assert f"`{served.value}`" in guide

    monkeypatch.setattr("plugrad.core.registry.CONTRACT_VERSION", 2)
    with pytest.raises(BackendError) as version:
        reg.add_backend(full())
    assert f"BackendError: {version.value}" in guide
    assert "`plugrad: backend plugin 'minimal' from plugrad-minimal failed to load and was " \
           "skipped: ModuleNotFoundError: No module named 'numpyy'`" in guide
    # the kernel counts of the `info --verbose` samples
    n_req, n_opt = len(required_primitives()), len(optional_kernels())
    assert f"native ({n_req}): abs, add, argmax" in guide and f"composite ({n_opt}):" in guide
    cpu = get_registry().kernel_sources("cpu")
    native_cpu = sum(1 for src in cpu.values() if src == "numpy")
    composite_cpu = sorted(op for op, src in cpu.items() if src == "composite")
    assert f"native ({native_cpu - 2}): abs, acos, ... composite ({len(composite_cpu)}): " \
           f"{', '.join(composite_cpu)} contributed (2)" in guide


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
