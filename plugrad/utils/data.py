"""``plugrad.utils.data`` is :mod:`plugrad.data` under PyTorch's name."""
from plugrad.data import *  # noqa: F401,F403
from plugrad.data import __all__  # noqa: F401
