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


def host_read(decide, *tensors):
    """``decide(*host_arrays)``: a check or a branch on tensor data (an index range check)
    returning a small decision. Eagerly just that; in a captured step it runs again on every
    replay's data before anything else -- raising as eager would, and sending the call back
    to eager execution when the decision differs."""
    from plugrad.core import tracing
    return tracing.host_read(decide, tensors[0]._k, *[t._data for t in tensors])


__all__ += ["host_scalars", "host_read"]
