"""``torch.backends.cudnn``: settable flags; plugrad has no cuDNN, so they change nothing."""
enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: no plugrad backend calls cuDNN."""
    return False


def version():
    return None


class flags:
    """``with torch.backends.cudnn.flags(enabled=..., benchmark=..., deterministic=...)``."""

    def __init__(self, enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
                 allow_tf32=True):
        self._new = dict(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                         deterministic=deterministic, allow_tf32=allow_tf32)

    def __enter__(self):
        module = globals()
        self._old = {k: module[k] for k in self._new}
        module.update(self._new)
        return self

    def __exit__(self, *exc):
        globals().update(self._old)
        return False
