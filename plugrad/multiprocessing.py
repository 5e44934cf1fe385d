"""``torch.multiprocessing``: Python's :mod:`multiprocessing` (plugrad tensors do not travel
through shared memory; send NumPy arrays), plus ``spawn`` as PyTorch spells it."""
from multiprocessing import *  # noqa: F401,F403
import multiprocessing as _mp


class ProcessRaisedException(Exception):
    """A process started by :func:`spawn` failed; the message holds its traceback."""


def _wrap(fn, i, args, errors):
    import traceback
    try:
        fn(i, *args)
    except Exception:
        errors.put((i, traceback.format_exc()))
        raise SystemExit(1)


def spawn(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn"):
    """Run ``fn(i, *args)`` in ``nprocs`` processes; raise if any of them fails."""
    ctx = _mp.get_context(start_method)
    errors = ctx.SimpleQueue()
    procs = [ctx.Process(target=_wrap, args=(fn, i, args, errors), daemon=daemon)
             for i in range(nprocs)]
    for p in procs:
        p.start()
    if not join:
        return procs
    for p in procs:
        p.join()
    if not errors.empty():
        i, text = errors.get()
        raise ProcessRaisedException(f"\n\n-- Process {i} terminated with the following "
                                     f"error:\n{text}")
    for i, p in enumerate(procs):
        if p.exitcode:
            raise ProcessRaisedException(f"process {i} terminated with exit code "
                                         f"{p.exitcode}")
    return None


def get_all_sharing_strategies():
    return {"file_system"}


def get_sharing_strategy() -> str:
    return "file_system"


def set_sharing_strategy(new_strategy: str) -> None:
    """Accepted: nothing is shared between plugrad processes but pickled arrays."""
