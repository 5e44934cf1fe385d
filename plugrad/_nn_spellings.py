"""The ``torch.*`` spellings of ``nn.functional`` ops (``torch.conv2d``, ``torch.dropout``,
``torch.layer_norm``, ``torch.selu_``, ...), with the arguments PyTorch's ATen schemas give
them: ``torch.batch_norm`` takes the weight first, ``torch.embedding`` the weight before the
indices, the losses an integer ``reduction`` (0 none, 1 mean, 2 sum), pools ``stride=[]``.

They live outside the core (which may not import ``nn``) and load with ``nn.functional`` on
first use of one of them (``plugrad.__getattr__``), so ``import plugrad`` stays light.
"""
from __future__ import annotations

import plugrad
import plugrad.nn.functional as F
from plugrad.nn.functional_layers import embedding_renorm_ as _embedding_renorm

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(op, r):
    if isinstance(r, str):
        return r
    if r not in _REDUCTIONS:
        raise RuntimeError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {r}")
    return _REDUCTIONS[r]


def _stride(stride):
    return None if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else stride


def _inplace(fn):
    """``torch.f_(x, ...)``: ``f`` of (a copy of) ``x`` written into ``x``."""
    def f_(input, *args, **kwargs):
        return input.copy_(fn(input.clone(), *args, **kwargs))
    f_.__name__ = fn.__name__ + "_"
    return f_


# ---------------------------------------------------------------------- convolution
conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d = F.conv_transpose1d, F.conv_transpose2d
conv_transpose3d = F.conv_transpose3d


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """ATen's one convolution entry (1-d, 2-d and 3-d; transposed or not)."""
    nd = weight.ndim - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-d, 4-d or 5-d weight, got "
                           f"{weight.ndim}-d")
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


# ---------------------------------------------------------------------- pooling
def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                        return_indices=True)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                        count_include_pad)


adaptive_avg_pool1d = F.adaptive_avg_pool1d


def adaptive_max_pool1d(input, output_size):
    """Values and indices, as ATen's op (``F.adaptive_max_pool1d`` returns values only)."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


# ---------------------------------------------------------------------- normalization
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


# ---------------------------------------------------------------------- dropout
def dropout(input, p, train):
    return F.dropout(input, p, train)


def alpha_dropout(input, p, train):
    return F.alpha_dropout(input, p, train)


def feature_dropout(input, p, train):
    """Whole channels (dim 1) zeroed, any rank >= 2 (ATen's ``feature_dropout``)."""
    if not train or p == 0:
        return input
    if input.ndim < 2:
        raise RuntimeError(f"feature_dropout: expected a tensor with at least 2 dims, got "
                           f"{input.ndim}")
    if p == 1:
        return input * 0.0
    mask_shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    keep = plugrad.empty(mask_shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    return input * keep / (1 - p)


def feature_alpha_dropout(input, p, train):
    return F.feature_alpha_dropout(input, p, train)


dropout_, alpha_dropout_ = _inplace(dropout), _inplace(alpha_dropout)
feature_dropout_, feature_alpha_dropout_ = (_inplace(feature_dropout),
                                            _inplace(feature_alpha_dropout))


# ---------------------------------------------------------------------- activations
def selu(input):
    return F.selu(input)


def celu(input, alpha=1.0):
    return F.celu(input, alpha)


def rrelu(input, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    return F.rrelu(input, lower, upper, training)


def threshold(input, threshold, value):
    return F.threshold(input, threshold, value)


def hardshrink(input, lambd=0.5):
    return F.hardshrink(input, lambd)


prelu = F.prelu
selu_, celu_, rrelu_, threshold_ = (_inplace(selu), _inplace(celu), _inplace(rrelu),
                                    _inplace(threshold))


def relu_(input):
    return input.relu_()


# ---------------------------------------------------------------------- layers
pixel_shuffle, pixel_unshuffle, bilinear = F.pixel_shuffle, F.pixel_unshuffle, F.bilinear


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """ATen's order (the weight first); ``padding_idx=-1`` is "none", as in ATen."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def constant_pad_nd(input, pad, value=0):
    return F.pad(input, list(pad), "constant", value)


def embedding_renorm_(input, indices, max_norm, norm_type):
    return _embedding_renorm(input, indices, max_norm, norm_type)


# ---------------------------------------------------------------------- losses
def kl_div(input, target, reduction=1, *, log_target=False):
    return F.kl_div(input, target, reduction=_reduction("kl_div", reduction),
                    log_target=log_target)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return F.hinge_embedding_loss(input, target, margin,
                                  reduction=_reduction("hinge_embedding_loss", reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False,
                        reduction=1):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction("binary_cross_entropy_with_logits",
                                                    reduction), pos_weight=pos_weight)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
             zero_infinity=False):
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction("ctc_loss", reduction), zero_infinity)


# ---------------------------------------------------------------------- sampling
_MODES, _PADDINGS = ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")


def affine_grid_generator(theta, size, align_corners):
    return F.affine_grid(theta, size, align_corners)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """ATen's form: the mode (0 bilinear, 1 nearest, 2 bicubic) and the padding (0 zeros,
    1 border, 2 reflection) as integers."""
    return F.grid_sample(input, grid, _MODES[interpolation_mode], _PADDINGS[padding_mode],
                         align_corners)


grid_sampler_2d = grid_sampler_3d = grid_sampler


def channel_shuffle(input, groups):
    return F.channel_shuffle(input, groups)


native_channel_shuffle = channel_shuffle


# ---------------------------------------------------------------------- recurrent cells
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return F.linear(input, w_ih, b_ih).add(F.linear(hx, w_hh, b_hh)).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return F.linear(input, w_ih, b_ih).add(F.linear(hx, w_hh, b_hh)).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step (PyTorch's gate order i, f, g, o); ``hx`` is ``(h, c)``."""
    h, c = hx
    gates = F.linear(input, w_ih, b_ih).add(F.linear(h, w_hh, b_hh))
    i, f, g, o = gates.chunk(4, -1)
    c1 = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c1.tanh(), c1


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step (PyTorch's gate order r, z, n; ``n`` sees ``r * (W_hn h + b_hn)``)."""
    xr, xz, xn = F.linear(input, w_ih, b_ih).chunk(3, -1)
    hr, hz, hn = F.linear(hx, w_hh, b_hh).chunk(3, -1)
    r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return (1 - z) * n + z * hx


NAMES = frozenset(n for n, v in list(globals().items()) if n.isidentifier()
                  and not n.startswith("_") and callable(v) and not isinstance(v, type(F)))
