"""The state each differential test starts from (the summary line: ``tests/conftest.py``).

Reproducible: each op's draws are seeded by its name (``test_differential.py``), and every
test starts from the same global state (default dtypes, grad mode, both libraries' random
generators), so a test gives the same cases and results alone or after any other test.
"""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _same_start():
    """What another test may have left changed (``set_default_dtype``, ``no_grad`` state,
    generators) is put back to the defaults for this one."""
    import plugrad
    plugrad.set_default_dtype(plugrad.float32)
    plugrad.manual_seed(0)
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_default_dtype(torch.float32)
        torch.manual_seed(0)
    with plugrad.enable_grad():
        if torch is None:
            yield
        else:
            with torch.enable_grad():
                yield
