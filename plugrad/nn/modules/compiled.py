"""``torch.compile(module)``: a module whose calls are captured and replayed."""
from __future__ import annotations

from plugrad.capture import CompiledFunction
from plugrad.nn.modules.module import Module


class OptimizedModule(Module):
    """Wraps ``_orig_mod`` as PyTorch's compiled module does: its parameters and state dict
    (keys under ``_orig_mod.``), its attributes read through, its calls compiled."""

    def __init__(self, mod: Module, *, fullgraph: bool = False, dynamic=None):
        super().__init__()
        self._orig_mod = mod
        self._compiled_call = CompiledFunction(mod.__call__, fullgraph=fullgraph,
                                               dynamic=dynamic)

    def forward(self, *args, **kwargs):
        return self._compiled_call(*args, **kwargs)

    def explain(self):
        """How the calls so far were served (replayed, recorded, eager and why)."""
        return self._compiled_call.explain()

    def __getattr__(self, name):
        modules = self.__dict__.get("_modules", {})
        if name in modules or "_orig_mod" not in modules:
            return super().__getattr__(name)
        return getattr(modules["_orig_mod"], name)

    def __repr__(self) -> str:
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"
