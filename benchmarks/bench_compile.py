"""Captured and replayed steps (``plugrad.compile``) beside their eager counterparts:
the seeds' Celsius loop step, a tiny op, and the MLP step of ``bench_models``.

Each suite times one call of the compiled step after it is trusted (two recordings in
``setup``), so the figure is the replay's; ``time_eager`` is the same step uncompiled.
"""
import plugrad

from ._common import DEVICES, require, sync
from .bench_models import MLPStep


def _compile_or_skip(fn):
    if not hasattr(plugrad, "compile") or not hasattr(plugrad, "capture"):
        raise NotImplementedError("plugrad.compile unavailable")
    compiled = plugrad.compile(fn)
    for _ in range(3):
        compiled()
    return compiled


class CelsiusStep:
    """The seeds' loop: ``weight * celsius + bias``, MSE, backward, manual SGD update."""
    params = (DEVICES,)
    param_names = ["device"]

    def setup(self, device):
        require(device)
        self.c = plugrad.tensor([0.0, 100.0], device=device)
        self.f = plugrad.tensor([32.0, 212.0], device=device)
        self.w = plugrad.tensor(0.0, requires_grad=True, device=device)
        self.b = plugrad.tensor(0.0, requires_grad=True, device=device)
        self.compiled = _compile_or_skip(self.step)

    def step(self):
        error = ((self.w * self.c + self.b - self.f) ** 2).mean()
        error.backward()
        with plugrad.no_grad():
            self.w -= 0.0001 * self.w.grad
            self.b -= 0.0001 * self.b.grad
        self.w.grad.zero_()
        self.b.grad.zero_()
        return error

    def time_compiled(self, device):
        self.compiled()
        sync(device)

    def time_eager(self, device):
        self.step()
        sync(device)


class TinyOp:
    """``(x * y + x).sum().backward()`` on 16 elements."""
    params = (DEVICES,)
    param_names = ["device"]

    def setup(self, device):
        require(device)
        self.x = plugrad.randn(16, requires_grad=True, device=device)
        self.y = plugrad.randn(16, requires_grad=True, device=device)
        self.compiled = _compile_or_skip(self.step)

    def step(self):
        (self.x * self.y + self.x).sum().backward()

    def time_compiled(self, device):
        self.compiled()
        sync(device)


class CompiledMLPStep(MLPStep):
    """``bench_models.MLPStep``, captured and replayed."""

    def setup(self, device, size):
        super().setup(device, size)
        self.compiled = _compile_or_skip(self._step)

    def time_step(self, device, size):
        self.compiled()
        sync(device)

    def peakmem_step(self, device, size):
        self.compiled()


class CompiledModuleMLPStep(MLPStep):
    """``bench_models.MLPStep`` with only the model compiled (``torch.compile(model)``): the
    loss, its backward (the captured backward program) and the update stay outside."""

    def setup(self, device, size):
        super().setup(device, size)
        if not hasattr(plugrad, "compile"):
            raise NotImplementedError("plugrad.compile unavailable")
        self.model = plugrad.compile(self.model)
        for _ in range(3):
            self._step()

    def time_step(self, device, size):
        self._step()
        sync(device)
