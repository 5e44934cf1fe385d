"""``plugrad.nn``: modules, layers, initialisers and functional ops, as in ``torch.nn``.

Built on the public core only (``plugrad``, ``plugrad.autograd``) and the core's fused ops
re-exported by :mod:`plugrad.nn.functional`; it never sees a backend.
"""
from plugrad.nn import functional, init, parallel, utils  # noqa: F401
from plugrad.nn.modules import *  # noqa: F401,F403
from plugrad.nn.losses import *  # noqa: F401,F403
from plugrad.nn.losses import __all__ as _losses_all
from plugrad.nn.modules import __all__ as _modules_all
from plugrad.nn.modules.module import RemovableHandle  # noqa: F401
from plugrad.nn.parameter import Buffer, Parameter
from plugrad.nn.parallel import DataParallel  # noqa: E402 - torch.nn.DataParallel

__all__ = list(_modules_all) + list(_losses_all) + ["Parameter", "Buffer", "functional", "init", "utils",
                                                      "DataParallel"]
