"""Learning-rate schedules (``torch.optim.lr_scheduler``), PyTorch's names and behaviour.

``_base`` holds the scheduler protocol; ``_decays`` the rules of the epoch, ``_cycles`` the
cyclical policies, ``_combined`` the schedules of schedules, ``_plateau`` the metric-driven one.
"""
from plugrad.optim.lr_scheduler._base import LRScheduler, _LRScheduler
from plugrad.optim.lr_scheduler._combined import ChainedScheduler, SequentialLR
from plugrad.optim.lr_scheduler._cycles import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from plugrad.optim.lr_scheduler._decays import (ConstantLR, CosineAnnealingLR, ExponentialLR,
                                                LambdaLR, LinearLR, MultiplicativeLR,
                                                MultiStepLR, PolynomialLR, StepLR)
from plugrad.optim.lr_scheduler._plateau import ReduceLROnPlateau

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "LambdaLR", "MultiplicativeLR", "LinearLR", "ConstantLR", "PolynomialLR",
           "OneCycleLR", "CyclicLR", "CosineAnnealingWarmRestarts", "SequentialLR",
           "ChainedScheduler", "ReduceLROnPlateau", "_LRScheduler"]
