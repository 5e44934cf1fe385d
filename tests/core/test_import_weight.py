"""``import plugrad`` stays light: what it does not need at import is loaded on first use.

Import time is one of issue 18's targets; these are the modules that each cost milliseconds and
that a plain ``import plugrad`` once pulled in (through ``importlib.abc``, ``torch.save``'s
argparse/json, ``numpy.random``, pluggy's entry-point scan, the nn package).
"""
import subprocess
import sys

import pytest

DEFERRED = ["numpy.random", "importlib.resources", "importlib.metadata", "argparse", "tempfile",
            "pluggy", "plugrad.nn", "plugrad.optim", "plugrad.compile",
            "plugrad.core.serialization"]


def _run(code: str) -> str:
    """Run ``code`` in a fresh interpreter.

    The snippets compare ``sys.modules`` before and after ``import plugrad``: what the site
    start-up loads (a ``.pth`` file importing certifi pulls in ``importlib.resources`` and
    ``tempfile`` on some machines) is not plugrad's doing.
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_plugrad_leaves_heavy_modules_unloaded():
    loaded = _run("import sys\n"
                  "before = set(sys.modules)\n"
                  "import plugrad\n"
                  f"print([m for m in {DEFERRED!r} if m in sys.modules and m not in before])")
    assert loaded.strip() == "[]", f"import plugrad loaded {loaded.strip()}"


@pytest.mark.parametrize("name", ["save", "load", "SerializationError", "nn", "conv2d",
                                  "compile"])
def test_deferred_names_are_listed_and_load_on_use(name):
    out = _run("import plugrad\n"
               f"print({name!r} in dir(plugrad), getattr(plugrad, {name!r}) is not None)")
    assert out.split() == ["True", "True"]


def test_save_and_load_work_from_a_cold_import(tmp_path):
    path = tmp_path / "t.pt"
    out = _run("import plugrad as torch\n"
               f"torch.save({{'w': torch.arange(3.0)}}, {str(path)!r})\n"
               f"print(torch.load({str(path)!r})['w'].tolist())")
    assert out.strip() == "[0.0, 1.0, 2.0]"


def test_torch_alias_imports_without_importlib_abc():
    out = _run("import sys\n"
               "preloaded = 'importlib.resources' in sys.modules\n"
               "import plugrad\n"
               "plugrad.install_torch_alias()\n"
               "import torch, torch.nn.functional as F\n"
               "print(F.relu(torch.tensor([-1.0, 2.0])).tolist(),\n"
               "      not preloaded and 'importlib.resources' in sys.modules)")
    assert out.split("]")[0] + "]" == "[0.0, 2.0" + "]"
    assert out.strip().endswith("False")


def test_first_tensors_leave_bfloat16_support_unloaded():
    """ml_dtypes (NumPy's bfloat16) costs about a second to import beside NumPy 2.4: a program
    that never asks for bfloat16 does not pay it, one that does gets it on its first one."""
    out = _run("import sys\n"
               "import plugrad\n"
               "x = plugrad.randn(3, 4, requires_grad=True)\n"
               "(x.float().relu() * 2.0).sum().backward()\n"
               "print('ml_dtypes' in sys.modules)\n"
               "y = plugrad.full((2,), 1.5, dtype=plugrad.bfloat16) * 2.0\n"
               "print('ml_dtypes' in sys.modules, y.dtype, y.tolist())")
    assert out.split("\n")[:2] == ["False", "True plugrad.bfloat16 [3.0, 3.0]"]
