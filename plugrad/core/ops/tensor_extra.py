"""Imports the modules of issue 15's tensor ops (importing them declares the ops)."""
from plugrad.core.ops import order  # noqa: F401
from plugrad.core.ops import scans  # noqa: F401
from plugrad.core.ops import arrange  # noqa: F401
from plugrad.core.ops import products  # noqa: F401
from plugrad.core.ops import scatter_ops  # noqa: F401
from plugrad.core.ops import compat  # noqa: F401 - spellings real programs use (issue 14)
from plugrad.core.ops import math_more  # noqa: F401
from plugrad.core.ops import tensor_more  # noqa: F401
from plugrad.core.ops import numeric_more  # noqa: F401
from plugrad.core.ops import windows  # noqa: F401
from plugrad.core.ops import linalg_lu  # noqa: F401
