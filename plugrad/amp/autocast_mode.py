"""``torch.autocast`` / ``torch.amp.autocast``: the context manager (and decorator) that
turns autocast on or off for one device type, in this thread, for the span of a block."""
from __future__ import annotations

import functools
import warnings

from plugrad.core import autocast as _ac
from plugrad.core import dtypes as _dt


def _check_device_type(device_type) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    return device_type.split(":")[0]


def is_autocast_available(device_type: str) -> bool:
    """Autocast serves ``cuda`` and every host device (``cpu``, ``ref``, plugins)."""
    from plugrad.core.registry import get_registry
    return device_type in ("cpu", "cuda") or device_type in get_registry().backends


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` in this thread (no argument: ``cuda``, as
    PyTorch's legacy form)."""
    return _ac.state.enabled[_ac.key(device_type or "cuda")]


def set_autocast_enabled(device_type, enabled=None) -> None:
    """``set_autocast_enabled(device_type, enabled)`` (or the legacy ``(enabled)`` for
    ``cuda``): switch autocast without a block; prefer ``with autocast(...)``."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    k = _ac.key(device_type)
    was = _ac.state.enabled[k]
    _ac.state.enabled[k] = bool(enabled)
    if bool(enabled) != was:
        (_ac.enter if enabled else _ac.leave)()


def get_autocast_dtype(device_type: str):
    """The dtype autocast uses on ``device_type`` (float16 on cuda, bfloat16 elsewhere,
    unless set)."""
    return _ac.state.dtype[_ac.key(device_type)]


def set_autocast_dtype(device_type: str, dtype) -> None:
    _ac.state.dtype[_ac.key(device_type)] = _dt.get_dtype(dtype)


class autocast:
    """``with torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None):``
    (also ``@torch.autocast(...)`` on a function). Nested blocks restore the state they
    found; ``enabled=False`` turns autocast off inside the block and changes nothing else."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled=None):
        device_type = _check_device_type(device_type)
        self.device = device_type
        self._key = _ac.key(device_type)
        self.fast_dtype = (_dt.get_dtype(dtype) if dtype is not None
                           else get_autocast_dtype(device_type))
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)
        enabled = bool(enabled)
        if enabled and not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        if enabled and device_type == "cuda":
            import plugrad.cuda
            if not plugrad.cuda.is_available():
                warnings.warn("User provided device_type of 'cuda', but CUDA is not "
                              "available. Disabling", UserWarning, stacklevel=2)
                enabled = False
        if enabled and self.fast_dtype not in _ac.SUPPORTED_DTYPES[self._key]:
            what = "CUDA" if self._key == "cuda" else "CPU"
            warnings.warn(f"In {what} autocast, but the target dtype is not supported. "
                          f"Disabling autocast.\n{what} Autocast only supports dtype of "
                          f"{', '.join(str(d) for d in _ac.SUPPORTED_DTYPES[self._key])} "
                          f"currently.", UserWarning, stacklevel=2)
            enabled = False
        self._enabled = enabled
        self._saved = []

    def __enter__(self):
        st = _ac.state
        self._saved.append((st.enabled[self._key], st.dtype[self._key], st.cache_enabled))
        st.enabled[self._key] = self._enabled
        st.dtype[self._key] = self.fast_dtype
        st.cache_enabled = self._cache_enabled
        _ac.enter()

    def __exit__(self, *exc) -> bool:
        st = _ac.state
        st.enabled[self._key], st.dtype[self._key], st.cache_enabled = self._saved.pop()
        _ac.leave()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs=None):
    """Decorator for a custom ``autograd.Function.forward``: with ``cast_inputs``, run it
    with autocast off and its floating inputs cast to ``cast_inputs`` (when autocast was on);
    otherwise run it in the autocast state of the caller (remembered for ``custom_bwd``)."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        import plugrad
        ctx = args[0]
        ctx._fwd_used_autocast = is_autocast_enabled(device_type)
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None or not ctx._fwd_used_autocast:
            return fwd(*args, **kwargs)
        target = _dt.get_dtype(cast_inputs)

        def cast(v):
            if isinstance(v, plugrad.Tensor) and v.dtype.is_floating_point:
                return v.to(target)
            return v
        with autocast(device_type, enabled=False):
            return fwd(*[cast(a) for a in args],
                       **{k: cast(v) for k, v in kwargs.items()})
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    """Decorator for a custom ``autograd.Function.backward``: runs it in the autocast state
    its forward ran in."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type, enabled=getattr(ctx, "_fwd_used_autocast", False),
                      dtype=getattr(ctx, "_dtype", None)):
            return bwd(*args, **kwargs)
    return decorate_bwd
