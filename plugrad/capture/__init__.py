"""Capture and replay (``plugrad.compile``): a call recorded once as a flat program of
kernel calls on bare arrays -- forward, backward and optimizer update alike -- and replayed
without Tensors, nodes or dispatch while its guards hold. See ``docs/compile.md``."""
from plugrad.capture.compiled import CaptureReport, CompiledFunction, GraphBreakError
from plugrad.capture.program import Program

__all__ = ["CaptureReport", "CompiledFunction", "GraphBreakError", "Program"]


def host_scalars(compute, *tensors, key=None) -> tuple:
    """Python floats computed on the host from ``tensors`` (an optimizer's bias corrections
    from its step counter), to be passed to kernels as they are. Eagerly it is just
    ``compute(*host_arrays)``; in a captured step it is recomputed on every replay, where a
    plain ``.item()`` would stop the capture. With ``key`` (what identifies the computation
    across calls), ``compute`` may read state live, e.g. its param group's ``lr``."""
    from plugrad.core import tracing
    k = tensors[0]._k if tensors else None
    return tracing.host_scalars(compute, k, *[t._data for t in tensors], key=key)


__all__.append("host_scalars")
