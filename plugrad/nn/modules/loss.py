"""``torch.nn.modules.loss``: the loss modules (and their bases ``_Loss``,
``_WeightedLoss``, which programs subclass) at PyTorch's path; they live in
:mod:`plugrad.nn.losses`."""
from plugrad.nn.losses import *  # noqa: F401,F403
from plugrad.nn.losses import __all__, _Loss, _WeightedLoss  # noqa: F401
