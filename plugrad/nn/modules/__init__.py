"""The layers of ``plugrad.nn``, one module file per family."""
from plugrad.nn.modules.activation import (ELU, GELU, LeakyReLU, LogSoftmax, Mish, ReLU, ReLU6,
                                           SiLU, Sigmoid, Softmax, Softplus, Tanh)
from plugrad.nn.modules.container import (ModuleDict, ModuleList, ParameterDict,
                                          ParameterList, Sequential)
from plugrad.nn.modules.conv import Conv1d, Conv2d
from plugrad.nn.modules.linear import Bilinear, Identity, Linear
from plugrad.nn.modules.misc import Dropout, Embedding, Flatten, Unflatten
from plugrad.nn.modules.module import Module
from plugrad.nn.modules.normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from plugrad.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from plugrad.nn.modules.rnn import (GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell,
                                    RNNCellBase)
from plugrad.nn.modules.attention import MultiheadAttention
from plugrad.nn.modules.transformer import (Transformer, TransformerDecoder,
                                            TransformerDecoderLayer, TransformerEncoder,
                                            TransformerEncoderLayer)

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear",
           "Bilinear", "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
           "BatchNorm1d", "BatchNorm2d", "LayerNorm", "Dropout", "Embedding", "Flatten",
           "Unflatten", "ReLU", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "Mish", "Sigmoid",
           "Tanh", "Softplus", "Softmax", "LogSoftmax", "MultiheadAttention",
           "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer", "RNNBase", "RNN", "LSTM", "GRU",
           "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
