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
from plugrad.nn.modules.spatial import *  # noqa: F401,F403 - transposed conv, pads, resampling
from plugrad.nn.modules.spatial import __all__ as _spatial_all
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

# issue 15 (nn layers): more activations, norms, channel dropout, bags, distances
from plugrad.nn.modules.activation import (CELU, GLU, PReLU, RReLU, SELU, Hardshrink,  # noqa: E402
                                           Hardsigmoid, Hardswish, Hardtanh, LogSigmoid,
                                           Softmax2d, Softmin, Softshrink, Softsign,
                                           Tanhshrink, Threshold)
from plugrad.nn.modules.distance import CosineSimilarity, PairwiseDistance  # noqa: E402
from plugrad.nn.modules.misc import (AlphaDropout, Dropout1d, Dropout2d, Dropout3d,  # noqa: E402
                                     EmbeddingBag, FeatureAlphaDropout)
from plugrad.nn.modules.normalization import (GroupNorm, InstanceNorm1d,  # noqa: E402
                                              InstanceNorm2d, InstanceNorm3d,
                                              LocalResponseNorm, RMSNorm)

__all__ += ["CELU", "GLU", "PReLU", "RReLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish",
            "Hardtanh", "LogSigmoid", "Softmax2d", "Softmin", "Softshrink", "Softsign",
            "Tanhshrink", "Threshold", "CosineSimilarity", "PairwiseDistance", "AlphaDropout",
            "Dropout1d", "Dropout2d", "Dropout3d", "EmbeddingBag", "FeatureAlphaDropout",
            "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
            "LocalResponseNorm", "RMSNorm"]
__all__ += list(_spatial_all)

# PyTorch's submodule paths as attributes, as after PyTorch's own ``import torch.nn``:
# programs name classes by them (``torch.nn.modules.dropout.Dropout`` in a safe_globals list)
from plugrad.nn.modules import (activation, batchnorm, container, conv, distance,  # noqa: E402,F401
                                dropout, flatten, fold, instancenorm, linear, loss, module,
                                normalization, padding, pixelshuffle, pooling, rnn, sparse,
                                transformer, upsampling, utils)

# issue 15, round 2: volumetric layers, unpooling, channel shuffle, CTC
from plugrad.nn.modules.volumetric import *  # noqa: E402,F401,F403
from plugrad.nn.modules.volumetric import __all__ as _volumetric_all  # noqa: E402
from plugrad.nn.modules.ctc import CTCLoss, NLLLoss2d  # noqa: E402,F401

__all__ += list(_volumetric_all) + ["CTCLoss", "NLLLoss2d"]

# ... reachable by PyTorch's file paths too (``torch.nn.modules.conv.Conv3d``)
for _file, _names in {"pooling": ("AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "AvgPool3d",
                                  "LPPool3d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
                                  "MaxUnpool3d"),
                      "batchnorm": ("BatchNorm3d",), "loss": ("CTCLoss", "NLLLoss2d"),
                      "conv": ("Conv3d", "ConvTranspose3d")}.items():
    for _name in _names:
        setattr(globals()[_file], _name, globals()[_name])
channelshuffle = volumetric  # torch.nn.modules.channelshuffle.ChannelShuffle
