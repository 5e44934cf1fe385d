"""``torch.amp.GradScaler``: dynamic loss scaling for float16 training.

``scaler.scale(loss).backward()`` multiplies the loss (so the gradients) by the scale;
``scaler.step(opt)`` unscales the gradients, and steps only if they are all finite;
``scaler.update()`` halves the scale after an overflow and doubles it after
``growth_interval`` clean steps. With ``enabled=False`` every method is a pass-through.
"""
from __future__ import annotations

import enum
import warnings

import plugrad


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _params(optimizer):
    for group in optimizer.param_groups:
        yield from group["params"]


class GradScaler:
    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda":
            import plugrad.cuda
            if not plugrad.cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not "
                              "available.  Disabling.", UserWarning, stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._scale = None  # a 0-d float32 tensor on the device of the first scaled output
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._growth_tracker = 0
        self._per_optimizer: dict = {}

    # ---------------------------------------------------------------- scaling
    def scale(self, outputs):
        """``outputs`` (a tensor, or nested lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, plugrad.Tensor):
            return outputs * self._scale_on(outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _scale_on(self, device):
        if self._scale is None:
            self._scale = plugrad.full((), self._init_scale, dtype=plugrad.float32,
                                       device=device)
        return self._scale if self._scale.device == device else self._scale.to(device)

    def _state(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": OptState.READY,
                                                              "found_inf": None})

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale in place (e.g. before clipping)
        and note whether any is inf or NaN."""
        if not self._enabled:
            return
        if self._scale is None:
            raise RuntimeError("Attempted unscale_ but _scale is None.  This may indicate "
                               "your script did not use scaler.scale(loss or outputs) earlier "
                               "in the iteration.")
        st = self._state(optimizer)
        if st["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if st["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = 1.0 / self._scale.item()
        found = False
        with plugrad.no_grad():
            for p in _params(optimizer):
                g = p.grad
                if g is None:
                    continue
                if g.dtype is plugrad.float16 and not self._allow_fp16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                if not found and not bool(plugrad.isfinite(g).all()):
                    found = True
                g.mul_(inv_scale)
        st["found_inf"] = found
        st["stage"] = OptState.UNSCALED

    _allow_fp16 = False

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)`` on unscaled gradients, skipped (returning
        None) when any gradient is inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        st = self._state(optimizer)
        if st["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if st["stage"] is OptState.READY:
            self.unscale_(optimizer)
        result = None if st["found_inf"] else optimizer.step(*args, **kwargs)
        st["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Set the scale for the next iteration: ``new_scale`` if given, else back off after
        an overflow in any optimizer this iteration and grow after enough clean ones."""
        if not self._enabled or self._scale is None:
            return
        if new_scale is not None:
            value = new_scale.item() if isinstance(new_scale, plugrad.Tensor) else new_scale
            self._scale = plugrad.full((), float(value), dtype=plugrad.float32,
                                       device=self._scale.device)
        else:
            stepped = [s for s in self._per_optimizer.values() if s["found_inf"] is not None]
            if not stepped:
                raise AssertionError("No inf checks were recorded prior to update.")
            scale = self._scale.item()
            if any(s["found_inf"] for s in stepped):
                scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    scale *= self._growth_factor
                    self._growth_tracker = 0
            self._scale = plugrad.full((), scale, dtype=plugrad.float32,
                                       device=self._scale.device)
        self._per_optimizer = {}

    # ---------------------------------------------------------------- settings and state
    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """The scale and its schedule (empty when disabled), as PyTorch's keys."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = plugrad.full((), self._init_scale, dtype=plugrad.float32,
                                       device=self._scale.device)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
