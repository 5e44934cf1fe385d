"""Run unmodified PyTorch programs: ``import torch`` (and every ``torch.X.Y``) gives plugrad.

:func:`install_torch_alias` puts an import hook first on ``sys.meta_path``; from then on
``torch`` is a small module that answers with plugrad's names, and ``torch.X.Y`` is the very
module object ``plugrad.X.Y`` (so ``torch.nn.Module is plugrad.nn.Module``). The real torch,
even if installed, is never reached. ``python -m plugrad run`` installs it before running a
script; a notebook calls ``plugrad.install_torch_alias()`` in its first cell.

Two PyTorch names mean something else in plugrad and are mapped elsewhere:
``torch.backends`` (PyTorch's knobs such as ``cudnn.benchmark``) is
:mod:`plugrad.torch_backends`, because ``plugrad.backends`` holds the backend plugins; and
``torch.version`` is :mod:`plugrad.version`. A ``torch.X`` plugrad lacks raises
``ModuleNotFoundError`` naming both ``torch.X`` and ``plugrad.X``.

Child processes inherit the alias: it sets ``PLUGRAD_TORCH_ALIAS=1`` and puts
``plugrad/_bootstrap`` (a ``sitecustomize``) first on ``PYTHONPATH``, so that every Python
started from here (spawned DataLoader workers, ``mpiexec``'d ranks, ``subprocess``) installs
the hook when it first imports torch. Forked workers inherit it in memory.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
import types
from pathlib import Path

ALIAS_ENV = "PLUGRAD_TORCH_ALIAS"
DEVICE_ENV = "PLUGRAD_DEVICE"
BOOTSTRAP_DIR = str(Path(__file__).resolve().parent / "_bootstrap")

# torch-side prefix -> plugrad module; longest prefix wins, the rest maps torch.X -> plugrad.X
_RENAMED = {"torch.backends": "plugrad.torch_backends", "torch.version": "plugrad.version"}
# top-level names whose torch meaning is not plugrad's attribute of that name
_TOP_RENAMED = {name.split(".", 1)[1]: target for name, target in _RENAMED.items()}

# the PyTorch release whose API plugrad follows (a program may compare versions)
TORCH_API_VERSION = "2.13.0"


def torch_version() -> str:
    """``torch.__version__`` under the alias: PyTorch's API level, plugrad's release."""
    import plugrad
    return f"{TORCH_API_VERSION}+plugrad.{plugrad.__version__}"


def plugrad_name(fullname: str) -> str:
    """The plugrad module that serves the torch module ``fullname``."""
    for prefix, target in _RENAMED.items():
        if fullname == prefix or fullname.startswith(prefix + "."):
            return target + fullname[len(prefix):]
    return "plugrad" + fullname[len("torch"):]


class TorchModule(types.ModuleType):
    """The ``torch`` module under the alias: plugrad's attributes, PyTorch's spelling.

    A module of its own (not ``plugrad`` itself) so that the import system can hang
    ``torch.backends`` on it without touching ``plugrad.backends``.
    """

    def __getattr__(self, name: str):
        import plugrad
        if name in _TOP_RENAMED:
            value = importlib.import_module(_TOP_RENAMED[name])
        else:
            try:
                value = getattr(plugrad, name)
            except AttributeError:
                if name.startswith("__"):
                    raise
                raise AttributeError(f"module 'torch' has no attribute {name!r}: plugrad, which "
                                     f"runs this program, has no plugrad.{name}") from None
        return value

    def __dir__(self):
        import plugrad
        return sorted(set(dir(plugrad)) | set(self.__dict__) | set(_TOP_RENAMED))


class _ExistingModule:
    """Loads a torch name as an already imported plugrad module (no code runs twice)."""

    def __init__(self, module):
        self.module = module
        self.real_spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        if self.real_spec is not None:  # the import system set __spec__ to the torch one
            module.__spec__ = self.real_spec


class _TorchLoader:
    """Makes the ``torch`` module itself.

    Loaders and finders are duck-typed by the import system; not deriving from
    ``importlib.abc`` keeps ``importlib.resources`` (and tempfile, shutil...) out of
    ``import plugrad``.
    """

    def create_module(self, spec):
        return TorchModule("torch", "plugrad's stand-in for torch (plugrad.torch_alias)")

    def exec_module(self, module):
        import plugrad
        module.__version__ = torch_version()
        module.__file__ = plugrad.__file__
        module.__path__ = []


class TorchFinder:
    """Finds ``torch`` and ``torch.*`` among plugrad's modules."""

    def invalidate_caches(self):
        """Nothing is cached (the finder protocol's optional method)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "torch":
            return importlib.machinery.ModuleSpec("torch", _TorchLoader(), is_package=True)
        if not fullname.startswith("torch."):
            return None
        name = plugrad_name(fullname)
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and not name.startswith(exc.name):
                raise  # a plugrad module exists but something it imports is missing
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: plugrad runs this program in place of PyTorch "
                f"and has no {name!r} (the module {fullname!r} maps to)",
                name=fullname) from None
        return importlib.machinery.ModuleSpec(fullname, _ExistingModule(module),
                                              is_package=hasattr(module, "__path__"))


_finder: TorchFinder | None = None


def is_installed() -> bool:
    return _finder is not None


def install_torch_alias(device=None, *, children: bool = True) -> None:
    """Make ``import torch`` (and every ``torch.X.Y``) give plugrad from now on.

    ``device`` (else ``$PLUGRAD_DEVICE``) becomes the default device; a device other than
    ``cpu`` and ``cuda`` (``ref``, a plugin's) also takes over the name ``cpu``, where a
    PyTorch program puts what does not go to the GPU. ``children``: let Python processes
    started from here inherit the alias (environment variables, see the module docstring).
    Calling it again changes nothing but the device.
    """
    global _finder
    real = sys.modules.get("torch")
    if real is not None and not isinstance(real, TorchModule):
        raise RuntimeError("install_torch_alias: the real torch is already imported in this "
                           "process; install the alias before anything imports torch (first "
                           "cell of a notebook, or run the script with python -m plugrad run)")
    import plugrad
    from plugrad.core import naming
    from plugrad.core.device import map_cpu_to, set_default_device
    device = device if device is not None else (os.environ.get(DEVICE_ENV) or None)
    if device is not None:
        set_default_device(device)
        dev = plugrad.device(device)
        map_cpu_to(dev if dev.type not in ("cpu", "cuda") else None)
    if _finder is None:
        _finder = TorchFinder()
        sys.meta_path.insert(0, _finder)
        naming.set_prefix("torch")
    if children:
        os.environ[ALIAS_ENV] = "1"
        if device is not None:
            os.environ[DEVICE_ENV] = str(device)
        parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if BOOTSTRAP_DIR not in parts:
            os.environ["PYTHONPATH"] = os.pathsep.join([BOOTSTRAP_DIR, *parts])


def uninstall_torch_alias() -> None:
    """Undo :func:`install_torch_alias` in this process (the environment is restored too)."""
    global _finder
    from plugrad.core import naming
    from plugrad.core.device import map_cpu_to
    if _finder is not None:
        sys.meta_path.remove(_finder)
        _finder = None
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        module = sys.modules[name]
        if isinstance(module, TorchModule) or getattr(module, "__name__", "").startswith(
                "plugrad"):
            del sys.modules[name]
    naming.set_prefix("plugrad")
    map_cpu_to(None)
    os.environ.pop(ALIAS_ENV, None)
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
             if p and p != BOOTSTRAP_DIR]
    if parts:
        os.environ["PYTHONPATH"] = os.pathsep.join(parts)
    else:
        os.environ.pop("PYTHONPATH", None)
