"""``plugrad.nn.parallel``: data-parallel wrappers (``torch.nn.parallel``)."""
from plugrad.nn.parallel.data_parallel import DataParallel, data_parallel
from plugrad.nn.parallel.distributed import DistributedDataParallel

DDP = DistributedDataParallel

__all__ = ["DistributedDataParallel", "DDP", "DataParallel", "data_parallel"]
