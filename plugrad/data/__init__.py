"""Datasets and loaders (``torch.utils.data``), also importable as ``plugrad.utils.data``."""
from plugrad.data._utils.collate import default_collate, default_convert
from plugrad.data._utils.worker import get_worker_info
from plugrad.data.dataloader import DataLoader
from plugrad.data.dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset,
                                  StackDataset, Subset, TensorDataset, random_split)
from plugrad.data.distributed import DistributedSampler
from plugrad.data.sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                                  SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "Subset",
           "random_split", "DataLoader", "default_collate", "default_convert", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler",
           "DistributedSampler", "get_worker_info", "WeightedRandomSampler", "ChainDataset",
           "StackDataset"]
