"""Optimizers and learning-rate schedules (``torch.optim``), on the public Tensor API only."""
from plugrad.optim import lr_scheduler
from plugrad.optim.adadelta import Adadelta
from plugrad.optim.adagrad import Adagrad
from plugrad.optim.adam import Adam, AdamW
from plugrad.optim.lbfgs import LBFGS
from plugrad.optim.optimizer import Optimizer
from plugrad.optim.rmsprop import RMSprop
from plugrad.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "LBFGS",
           "lr_scheduler"]
