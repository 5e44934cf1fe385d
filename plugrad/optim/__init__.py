"""Optimizers and learning-rate schedules (``torch.optim``), on the public Tensor API only."""
from plugrad.optim import lr_scheduler
from plugrad.optim.adadelta import Adadelta
from plugrad.optim.adagrad import Adagrad
from plugrad.optim.adam import Adam, AdamW
from plugrad.optim.adamax import Adamax
from plugrad.optim.asgd import ASGD
from plugrad.optim.lbfgs import LBFGS
from plugrad.optim.nadam import NAdam
from plugrad.optim.optimizer import Optimizer
from plugrad.optim.radam import RAdam
from plugrad.optim.rmsprop import RMSprop
from plugrad.optim.rprop import Rprop
from plugrad.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "LBFGS",
           "NAdam", "RAdam", "Adamax", "Rprop", "ASGD", "lr_scheduler"]
