"""Padding layers: ``ReflectionPad1d/2d/3d``, ``ReplicationPad1d/2d/3d``,
``CircularPad1d/2d/3d``, ``ZeroPad1d/2d/3d``, ``ConstantPad1d/2d/3d`` (``F.pad``'s modes)."""
from __future__ import annotations

from plugrad.nn import functional as F
from plugrad.nn.modules.module import Module


class _PadNd(Module):
    """``padding``: an int (every side) or ``2 * n`` ints, last dimension first."""

    _n = 1
    _mode = "constant"

    def __init__(self, padding, value: float = 0.0):
        super().__init__()
        n = self._n
        if isinstance(padding, int):
            padding = (padding,) * (2 * n)
        padding = tuple(int(p) for p in padding)
        if len(padding) != 2 * n:
            raise ValueError(f"{type(self).__name__}: padding must be an int or {2 * n} ints, "
                             f"got {padding}")
        self.padding, self.value = padding, value

    def forward(self, input):
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):

    def __init__(self, padding, value: float):
        super().__init__(padding, value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_PadNd):

    def __init__(self, padding):
        super().__init__(padding, 0.0)


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        n = self._n
        if input.ndim not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.ndim}D input)")
        return super().forward(input)


def _family(base, prefix, mode=None):
    made = []
    for n in (1, 2, 3):
        attrs = {"_n": n, "__doc__": f"``F.pad`` over the last {n} dimension(s)"
                                     f"{'' if mode is None else f', mode {mode!r}'}."}
        if mode is not None:
            attrs["_mode"] = mode
        made.append(type(f"{prefix}{n}d", (base,), attrs))
    return made


ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _family(_PadNd, "ReflectionPad", "reflect")
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _family(_PadNd, "ReplicationPad",
                                                               "replicate")
CircularPad1d, CircularPad2d, CircularPad3d = _family(_CircularPadNd, "CircularPad", "circular")
ZeroPad1d, ZeroPad2d, ZeroPad3d = _family(_ZeroPadNd, "ZeroPad")
ConstantPad1d, ConstantPad2d, ConstantPad3d = _family(_ConstantPadNd, "ConstantPad")
for _cls in (ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d,
             ReplicationPad2d, ReplicationPad3d, CircularPad1d, CircularPad2d, CircularPad3d,
             ZeroPad1d, ZeroPad2d, ZeroPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d):
    _cls.__module__ = __name__
