"""Public autograd API (``plugrad.autograd``), as in ``torch.autograd``."""
from plugrad.core.autograd.anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from plugrad.core.autograd.function import Function, FunctionCtx, once_differentiable
from plugrad.core.autograd.functional import backward, grad
from plugrad.core.autograd.gradcheck import gradcheck, gradgradcheck
from plugrad.core.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                             no_grad, set_grad_enabled)
from plugrad.core.autograd.node import Node
from plugrad.legacy import Variable

__all__ = ["Function", "FunctionCtx", "Node", "backward", "grad", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "detect_anomaly",
           "set_detect_anomaly", "is_anomaly_enabled", "once_differentiable", "gradcheck",
           "gradgradcheck", "Variable"]
