"""``plugrad.utils``: PyTorch's ``torch.utils`` namespace.

``plugrad.utils.data`` *is* :mod:`plugrad.data` (the same module objects, registered under
both names, so ``plugrad.utils.data.DataLoader is plugrad.data.DataLoader`` and a program's
``from torch.utils.data.dataloader import DataLoader`` finds ``plugrad.data.dataloader``):
the implementation lives where the layer rules put it, the name is PyTorch's.
"""
import sys

from plugrad import data
from plugrad.data import _utils, dataloader, dataset, distributed, sampler  # noqa: F401

sys.modules[__name__ + ".data"] = data
for _name in ("_utils", "_utils.collate", "_utils.worker", "dataloader", "dataset",
              "distributed", "sampler"):
    sys.modules[f"{__name__}.data.{_name}"] = sys.modules[f"plugrad.data.{_name}"]
del _name

from plugrad.utils import backend, checkpoint, dlpack  # noqa: E402,F401 - torch.utils.dlpack; backend arrays
