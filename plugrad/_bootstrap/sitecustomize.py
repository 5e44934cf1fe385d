"""Bootstrap of the torch alias in child processes (see :mod:`plugrad.torch_alias`).

``install_torch_alias`` puts this folder first on ``PYTHONPATH``; Python imports
``sitecustomize`` at start-up, so every Python process started below a run of
``python -m plugrad run`` (spawned DataLoader workers, ``mpiexec``'d ranks, ``subprocess``)
arrives here. With ``PLUGRAD_TORCH_ALIAS=1`` it registers a tiny finder that installs the
alias the first time something imports ``torch`` (so a child that never does pays
nothing), then hands over to any other ``sitecustomize`` further down the path.
"""
import os
import sys


class _InstallOnFirstImport:
    """Stands first on ``sys.meta_path`` until ``torch`` is first imported."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch" and not name.startswith("torch."):
            return None
        sys.meta_path.remove(self)
        from plugrad.torch_alias import install_torch_alias
        install_torch_alias()
        import importlib.util
        return importlib.util.find_spec(name)


def _chain_next_sitecustomize():
    """Run the ``sitecustomize`` this one shadows, as Python would have without us."""
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


if os.environ.get("PLUGRAD_TORCH_ALIAS") == "1":
    sys.meta_path.insert(0, _InstallOnFirstImport())
_chain_next_sitecustomize()
