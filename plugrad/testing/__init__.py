"""Testing tools for plugrad and for the authors of backends.

* :func:`assert_close` compares tensors (any device), NumPy arrays, numbers and nested
  lists with PyTorch's default tolerances per dtype.
* :mod:`plugrad.testing.opdb` is the op database: every public op and every backend kernel
  with its samples, dtypes and reference.
* :mod:`plugrad.testing.conformance` is the conformance suite generated from it; run it on
  any backend with ``pytest --pyargs plugrad.testing.conformance --plugrad-backend NAME``
  (the ``--plugrad-backend`` option comes from the pytest plugin
  :mod:`plugrad.testing.plugin`, installed with plugrad).
"""
from plugrad.testing._comparison import assert_close, default_tolerances

__all__ = ["assert_close", "default_tolerances"]
