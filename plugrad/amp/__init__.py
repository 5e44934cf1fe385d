"""Mixed precision (``torch.amp``): :class:`autocast` and :class:`GradScaler`.

Inside ``autocast(device_type, dtype)`` the ops of PyTorch's lower-precision list
(matmul, linear, convolutions, ...) run in ``dtype`` (float16, or bfloat16: CPU autocast's
default), the float32 list (losses, norms, ...) in float32, and the rest in their inputs'
dtype. The lists are data in :mod:`plugrad.core.autocast`. The :class:`GradScaler` scales
the loss so float16 gradients do not underflow, and skips steps whose gradients overflowed.
"""
from plugrad.amp.autocast_mode import (autocast, custom_bwd, custom_fwd, get_autocast_dtype,
                                       is_autocast_available, is_autocast_enabled,
                                       set_autocast_dtype, set_autocast_enabled)
from plugrad.amp.grad_scaler import GradScaler, OptState
from plugrad.core.autocast import autocast_args

__all__ = ["autocast", "GradScaler", "OptState", "custom_fwd", "custom_bwd",
           "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype",
           "set_autocast_enabled", "set_autocast_dtype", "autocast_args"]
