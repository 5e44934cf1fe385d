"""The dtypes ``nn.functional`` accepts: PyTorch implements most layers, activations and
losses for floating tensors only, and refuses the others rather than compute an integer
answer. One check keeps the wording the same everywhere."""
from __future__ import annotations

import plugrad


def expect_dtype(op: str, x, *, ints: bool = False, bool_: bool = False,
                 arg: str = "input") -> None:
    """Raise ``DTypeError`` unless ``x`` is floating (or integer with ``ints``, bool with
    ``bool_``), naming the op, the argument and its dtype."""
    dt = getattr(x, "dtype", None)
    if dt is None or dt.is_floating_point:
        return
    if dt == plugrad.bool:
        if bool_:
            return
    elif ints:
        return
    wanted = "floating-point" + (", integer" if ints else "") + (" or bool" if bool_ else "")
    raise plugrad.DTypeError(f"{op}: expected a {wanted} tensor for '{arg}', got {dt} "
                             f"(PyTorch's {op} is not implemented for {dt})")
