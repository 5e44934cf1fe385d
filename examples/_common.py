"""Helpers shared by the examples: common arguments, an optional tqdm progress bar, data paths.

Nothing here is needed by ``plugrad`` itself; ``tqdm`` and ``matplotlib`` are optional
(``pip install -e .[examples]``) and every example runs without them.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"


def add_common_args(parser: argparse.ArgumentParser, seed: int = 0) -> None:
    """``--device``, ``--seed`` and ``--no-progress``, the same in every example."""
    parser.add_argument("--device", default=None,
                        help="cpu, ref, cuda, ... (default: plugrad's default device)")
    parser.add_argument("--seed", type=int, default=seed, help=f"random seed (default {seed})")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (plain per-epoch lines only)")


def resolve_device(name):
    """The device an example runs on: ``name``, or plugrad's default device; checks that the
    backend is available so that a missing GPU is one clear line, not a traceback."""
    import plugrad
    dev = plugrad.device(name) if name else plugrad.get_default_device()
    from plugrad.core.registry import get_registry
    backend = get_registry().backends.get(dev.type)
    if backend is None:
        raise SystemExit(f"unknown device {dev.type!r}; `python -m plugrad info` lists the "
                         f"backends")
    if not backend.is_available():
        raise SystemExit(f"device {dev.type!r} is unavailable: {backend.unavailable_reason()}")
    return dev


_BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def limit_blas_threads_early(n: int = 1) -> None:
    """Before NumPy is imported: default the BLAS thread count to ``n`` (a user's own
    ``OPENBLAS_NUM_THREADS`` etc. still wins). See :func:`blas_threads`."""
    if "numpy" not in sys.modules:
        for var in _BLAS_THREAD_VARS:
            os.environ.setdefault(var, str(n))


def blas_threads(n):
    """A context that runs BLAS with ``n`` threads (``None``: leave it alone).

    The examples' matrix products are small (a batch of 32 through a 512x64 layer), where
    OpenBLAS's worker threads cost far more than they save, and on a busy machine they
    can make each product 50-200x slower. Uses ``threadpoolctl`` if it is installed;
    otherwise it is a no-op (a script run sets the environment with
    :func:`limit_blas_threads_early` instead).
    """
    if n is None:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=n, user_api="blas")


def have_tqdm() -> bool:
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


def progress(iterable, total=None, desc: str = "", enabled: bool = True):
    """A tqdm progress bar over ``iterable`` if tqdm is installed (and ``enabled``), else
    ``iterable`` itself; either way the result has ``set_postfix_str`` and ``close``."""
    if enabled and have_tqdm():
        from tqdm.auto import tqdm
        return tqdm(iterable, total=total, desc=desc, leave=False, dynamic_ncols=True)
    return _Plain(iterable)


class _Plain:
    """What :func:`progress` returns without tqdm: the iterable, with no-op bar methods."""

    def __init__(self, iterable):
        self._iterable = iterable

    def __iter__(self):
        return iter(self._iterable)

    def set_postfix_str(self, *_args, **_kwargs):
        pass

    def close(self):
        pass


def log(message: str) -> None:
    """Print a line without breaking an active tqdm bar."""
    if have_tqdm():
        from tqdm.auto import tqdm
        tqdm.write(message, file=sys.stdout)
    else:
        print(message, flush=True)
