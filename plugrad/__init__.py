"""plugrad: PyTorch-style tensors and autograd on pluggable backends.

``import plugrad as torch`` runs a typical PyTorch tutorial. Every primitive is carried out
by a backend plugin (NumPy on ``cpu``, CuPy on ``cuda``, pure Python on ``ref``, or a
third-party package), found through a pluggy registry.
"""
from plugrad.core import methods as _methods  # noqa: F401 - binds the Tensor methods
from plugrad.core.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                             no_grad, set_grad_enabled)
from plugrad.core.device import Device, device, get_default_device, set_default_device
from plugrad.core.dtypes import (DType, bfloat16, float16, float32, float64, get_default_dtype,
                                 int8, int16, int32, int64, promote_types, set_default_dtype,
                                 uint8)
from plugrad.core.dtypes import bool_ as bool  # noqa: A001 - PyTorch's name
from plugrad.core.memory_format import (channels_last, channels_last_3d, contiguous_format,
                                         memory_format, preserve_format)
from plugrad.core.printing import get_printoptions, printoptions, set_printoptions
from plugrad.core.registry import BackendError
from plugrad.core.tensor import Size, Tensor
from plugrad.core.errors import (ArgumentError, DeviceError, DTypeError, IndexOutOfRangeError,
                                 OpError, ShapeError)
from plugrad.core.factories import (arange, as_tensor, empty, empty_like, eye, from_dlpack,
                                    from_numpy, full,
                                    full_like, linspace, logspace, ones, ones_like, tensor,
                                    zeros, zeros_like)
from plugrad.core.random import (Generator, bernoulli, default_generator, get_rng_state,
                                 initial_seed, manual_seed, multinomial, normal, rand,
                                 rand_like, randint, randint_like, randn, randn_like, randperm,
                                 seed, set_rng_state)
from plugrad.core.api import *  # noqa: F401,F403 - the torch.* function namespace
from plugrad.core import queries as _queries  # noqa: E402 - queries, constants, torch.abs_ ...
from plugrad.core.queries import (angle, asarray, broadcast_shapes, can_cast, dtype, e,  # noqa: E402,E501
                                  fill, frombuffer, inf, is_complex, is_conj, is_neg,
                                  is_nonzero, nonzero_static,
                                  is_same_size, is_signed, is_warn_always_enabled, nan,
                                  newaxis, pi, range, result_type, scalar_tensor,
                                  set_warn_always)
from plugrad.legacy import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor,  # noqa: E402
                            DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor,
                            ShortTensor)
from plugrad import autograd, cuda  # noqa: E402
from plugrad.process_knobs import *  # noqa: F401,F403,E402 - set_num_threads, ...
from plugrad.legacy import range  # noqa: E402,A004 - PyTorch's deprecated torch.range
import plugrad.linalg as linalg  # noqa: E402 - the submodule, not api's ops module of that name
from plugrad.torch_alias import install_torch_alias, uninstall_torch_alias  # noqa: E402
from plugrad.amp.autocast_mode import (autocast, get_autocast_dtype,  # noqa: E402
                                       is_autocast_available, is_autocast_enabled,
                                       set_autocast_dtype, set_autocast_enabled)

globals().update(_queries.inplace_functions())
_queries.bind_tensor_queries()

half, double, long, short = float16, float64, int64, int16
dtype = DType  # torch.dtype: the class of every dtype (isinstance checks, annotations)
float, int = float32, int32  # noqa: A001 - PyTorch's names

__version__ = "0.1.0"


_LAZY_SUBMODULES = {"nn", "optim", "data", "utils", "testing", "serialization", "random",
                    "version", "multiprocessing", "special", "capture", "onnx",
                    "accelerator", "jit", "distributions"}


#: names whose modules are imported on first use (``torch.save`` pulls in json and argparse)
_LAZY_ATTRIBUTES = {"save": "plugrad.core.serialization", "load": "plugrad.core.serialization",
                    "SerializationError": "plugrad.core.serialization"}


#: ``torch.conv2d``, ``torch.dropout``, ... (plugrad/_nn_spellings.py): loaded with nn on first use
_NN_SPELLINGS = frozenset("""conv1d conv2d conv3d conv_transpose1d conv_transpose2d
    conv_transpose3d convolution max_pool1d max_pool2d max_pool3d max_pool1d_with_indices
    avg_pool1d adaptive_avg_pool1d adaptive_max_pool1d layer_norm group_norm rms_norm batch_norm
    instance_norm dropout dropout_ alpha_dropout alpha_dropout_ feature_dropout feature_dropout_
    feature_alpha_dropout feature_alpha_dropout_ selu selu_ celu celu_ rrelu rrelu_ threshold
    threshold_ hardshrink prelu relu_ pixel_shuffle pixel_unshuffle bilinear embedding
    embedding_renorm_ constant_pad_nd kl_div poisson_nll_loss margin_ranking_loss
    hinge_embedding_loss cosine_embedding_loss triplet_margin_loss
    binary_cross_entropy_with_logits rnn_tanh_cell rnn_relu_cell lstm_cell gru_cell ctc_loss
    affine_grid_generator grid_sampler grid_sampler_2d grid_sampler_3d channel_shuffle
    native_channel_shuffle""".split())


def __getattr__(name):
    """``plugrad.nn`` and friends load on first use, so ``import plugrad`` stays light."""
    if name in _LAZY_SUBMODULES:
        import importlib
        module = importlib.import_module(f"plugrad.{name}")
        globals()[name] = module
        return module
    if name == "compile":  # torch.compile: plugrad.compiler sits above nn
        import importlib
        fn = globals()[name] = importlib.import_module("plugrad.compiler").compile
        return fn
    if name in _NN_SPELLINGS or name in _LAZY_ATTRIBUTES:  # (imported by name, as above)
        import importlib
        module = _LAZY_ATTRIBUTES.get(name, "plugrad._nn_spellings")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'plugrad' has no attribute {name!r}")


def __dir__():
    """The names above that load on first use are listed too (tab completion, ``dir(torch)``)."""
    return sorted(set(globals()) | _LAZY_SUBMODULES | _NN_SPELLINGS | set(_LAZY_ATTRIBUTES)
                  | {"compile"})


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(t) -> int:
    return t.numel()


def is_floating_point(t) -> bool:
    return t.dtype.is_floating_point


def is_autocast_cpu_enabled() -> bool:
    """PyTorch's older spelling of ``is_autocast_enabled("cpu")``."""
    return is_autocast_enabled("cpu")


def get_autocast_cpu_dtype():
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    return get_autocast_dtype("cuda")
