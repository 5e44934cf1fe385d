"""The op database's entries for ``plugrad.nn.functional``: layers, activations, losses.

Each is checked like every other public op: forward against the reference backend in every
tested dtype, ``gradcheck`` in float64, and the bit-equality of its two backward bindings
(plain ``backward()`` against ``autograd.grad(create_graph=True)``), which is what reaches
the fused backward kernels (``gelu_backward``, ``layer_norm_backward``, conv's gradients,
``max_pool2d_backward``, ``cross_entropy_backward``, SDPA's backward) through their ops.
Names are ``nn.functional.X``. Samples stay tiny: the reference backend is pure Python.
"""
from __future__ import annotations

import plugrad.nn.functional as F
from plugrad.testing.opdb import ALL, BOOL, FLOATS, INTS, OpInfo, SampleInput as S, _add

_REALS = FLOATS + INTS  # PyTorch's integer kernels: exact, no promotion

#: ``nn.functional`` names that are not ops, or are checked elsewhere: why each is left out.
NOT_OPS_NN = {
    "nn.functional.dropout": "random: covered by tests/nn (mask statistics, eval identity)",
    "nn.functional.causal_mask": "builds a constant bool mask (a factory)",
    "nn.functional.multi_head_attention_forward":
        "a layer's whole forward: tests/nn/test_transformer.py compares it with PyTorch",
    "nn.functional.relu_": "the in-place form of nn.functional.relu (relu_ of the entry)",
}


def _F(name, sample_inputs, **kw) -> OpInfo:
    kw.setdefault("dtypes", FLOATS)
    kw.setdefault("differentiable", True)
    return OpInfo(f"nn.functional.{name}", getattr(F, name), sample_inputs, kind="public",
                  **kw)


def _activation(*kwargs_list, low=-2.0, high=2.0):
    def gen(make, dtype):
        yield S((make(2, 3, low=low, high=high),), name="2-d", method=False)
        yield S((make(3, low=low, high=high, layout="slice"),), name="strided", method=False)
        yield S((make(low=low, high=high),), name="0-d", method=False)
        for kw in kwargs_list:
            yield S((make(2, 3, low=low, high=high),), dict(kw), name=repr(kw), method=False)
    return gen


# ---------------------------------------------------------------------- layers
def s_linear(make, dtype):
    yield S((make(2, 3), make(4, 3), make(4)), name="2-d with bias", method=False)
    yield S((make(2, 2, 3), make(4, 3, layout="T")), name="3-d, no bias", method=False)
    yield S((make(3), make(2, 3), make(2)), name="1-d input", method=False)
    yield S((make(0, 3), make(2, 3), make(2)), name="empty batch", method=False)


def s_bilinear(make, dtype):
    yield S((make(2, 3), make(2, 2), make(4, 3, 2), make(4)), name="with bias", method=False)


def s_conv1d(make, dtype):
    yield S((make(1, 2, 5), make(3, 2, 2), make(3)), name="bias", method=False)
    yield S((make(2, 2, 6), make(2, 1, 3)), {"stride": 2, "padding": 1, "groups": 2},
            name="stride, padding, groups", method=False)


def s_conv2d(make, dtype):
    yield S((make(1, 2, 4, 4), make(3, 2, 2, 2), make(3)), name="bias", method=False)
    yield S((make(1, 2, 5, 5), make(2, 1, 3, 3)), {"stride": 2, "padding": 1, "groups": 2},
            name="stride, padding, groups", method=False)
    yield S((make(1, 1, 5, 5), make(1, 1, 2, 2)), {"dilation": 2, "padding": "same"},
            name="dilation, same padding", method=False)


def s_max_pool2d(make, dtype):
    yield S((make(1, 2, 4, 4),), {"kernel_size": 2}, name="2x2", method=False)
    yield S((make(1, 1, 5, 5),), {"kernel_size": 3, "stride": 2, "padding": 1},
            name="stride, padding", method=False)
    yield S((make(2, 5, 5),), {"kernel_size": 2, "ceil_mode": True}, name="ceil, unbatched",
            method=False)


def s_avg_pool2d(make, dtype):
    yield S((make(1, 2, 4, 4),), {"kernel_size": 2}, name="2x2", method=False)
    yield S((make(1, 1, 5, 5),), {"kernel_size": 3, "stride": 2, "padding": 1,
                                  "count_include_pad": False}, name="padding excluded",
            method=False)


def s_adaptive_avg_pool2d(make, dtype):
    yield S((make(1, 2, 4, 4), 1), name="to 1x1", method=False)
    yield S((make(1, 1, 5, 5), (2, 3)), name="uneven", method=False)


def s_layer_norm(make, dtype):
    yield S((make(2, 3), (3,), make(3), make(3)), name="affine", method=False)
    yield S((make(2, 2, 3), (2, 3)), name="two dims, no affine", method=False)
    yield S((make(2, 4), (4,)), {"eps": 1e-2}, name="eps", method=False)


def s_batch_norm(make, dtype):
    yield S((make(3, 2), None, None, make(2), make(2)), {"training": True},
            name="training, affine", method=False)
    yield S((make(2, 2, 3), make(2, low=-1, high=1), make(2, low=0.5, high=2)),
            {"training": False}, name="eval, running stats", method=False)


def s_embedding(make, dtype):
    yield S((make.index((2, 3), 4), make(4, 2)), name="2-d indices", method=False)
    yield S((make.index((3,), 4), make(4, 2)), {"padding_idx": 1}, name="padding_idx",
            method=False)


def s_normalize(make, dtype):
    yield S((make(2, 3, nonzero=True),), name="rows", method=False)
    yield S((make(2, 3, nonzero=True),), {"p": 1.0, "dim": 0}, name="p=1, dim 0", method=False)


def s_pad(make, dtype):
    yield S((make(2, 3), (1, 2)), name="last dim", method=False)
    yield S((make(1, 2, 3), (1, 0, 0, 2)), {"value": 0.5}, name="two dims, value",
            method=False)


def s_unfold(make, dtype):
    yield S((make(1, 2, 4, 4), 2), name="2x2", method=False)
    yield S((make(1, 1, 5, 5), 3), {"stride": 2, "padding": 1}, name="stride, padding",
            method=False)


def s_fold(make, dtype):
    yield S((make(1, 8, 9), (4, 4), 2), {"stride": 1}, name="2x2", method=False)


def s_sdpa(make, dtype):
    yield S((make(1, 2, 3, 4), make(1, 2, 3, 4), make(1, 2, 3, 4)), name="plain",
            method=False)
    yield S((make(2, 3, 4), make(2, 5, 4), make(2, 5, 2)), {"is_causal": True},
            name="causal, more keys", method=False)
    yield S((make(1, 3, 4), make(1, 3, 4), make(1, 3, 4), make.mask((3, 3)) | _diag(make)),
            name="bool mask", method=False)
    yield S((make(1, 2, 4), make(1, 3, 4), make(1, 3, 4), make(2, 3)),
            {"scale": 0.5}, name="float mask, scale", method=False)


def _diag(make):
    import plugrad
    return plugrad.eye(3, dtype=plugrad.bool, device=make.device)


# ---------------------------------------------------------------------- losses
def _probs(make, *shape):
    x = make(*shape)  # (softmax takes floating tensors only: integers as float32, as before)
    return F.softmax(x if x.dtype.is_floating_point else x.float(), dim=1).detach()


def s_cross_entropy(make, dtype):
    yield S((make(3, 4), make.index((3,), 4)), name="indices", method=False)
    yield S((make(3, 4), make.index((3,), 4)), {"reduction": "sum", "label_smoothing": 0.1},
            name="sum, label smoothing", method=False)
    yield S((make(2, 3, 2), make.index((2, 2), 3)), {"reduction": "none", "ignore_index": 1},
            name="spatial, ignore_index", method=False)
    yield S((make(3, 4), make.index((3,), 4)), {"weight": make(4, low=0.5, high=2)},
            name="class weights", method=False, grad=False)
    yield S((make(3, 4), _probs(make, 3, 4)), name="probabilities", method=False)


def s_nll_loss(make, dtype):
    yield S((make(3, 4, low=-3, high=0), make.index((3,), 4)), name="mean", method=False)
    yield S((make(3, 4), make.index((3,), 4)), {"reduction": "none"}, name="none",
            method=False)


def _regression(**extra):
    def gen(make, dtype):
        yield S((make(2, 3), make(2, 3)), name="mean", method=False)
        yield S((make(2, 3), make(3)), {"reduction": "sum"}, name="sum, broadcast target",
                method=False, grad=False)  # PyTorch warns on broadcasting; values only
        yield S((make(4), make(4)), {"reduction": "none", **extra}, name="none", method=False)
    return gen


def s_bce(make, dtype):
    yield S((make(2, 3, low=0.1, high=0.9), make(2, 3, low=0, high=1)), name="mean",
            method=False)
    yield S((make(4, low=0.1, high=0.9), make(4, low=0, high=1)),
            {"weight": make(4, low=0.5, high=2), "reduction": "sum"}, name="weighted sum",
            method=False, grad=False)


def s_bce_logits(make, dtype):
    yield S((make(2, 3), make(2, 3, low=0, high=1)), name="mean", method=False)
    yield S((make(2, 3), make(2, 3, low=0, high=1)), {"pos_weight": make(3, low=0.5, high=2)},
            name="pos_weight", method=False, grad=False)


def s_kl_div(make, dtype):
    yield S((make(2, 3, low=-3, high=0), make(2, 3, low=0, high=1)),
            {"reduction": "batchmean"}, name="batchmean", method=False)
    yield S((make(2, 3), make(2, 3)), {"reduction": "sum", "log_target": True},
            name="log target", method=False)


_add(
    # integers: PyTorch's CPU GEMM convolutions and max pools compute them (its transposed
    # convolutions, average pools and dilated convolutions have int64 kernels only)
    _F("linear", s_linear, dtypes=FLOATS + INTS),
    _F("bilinear", s_bilinear, dtypes=_REALS),
    _F("conv1d", s_conv1d, dtypes=FLOATS + INTS),
    _F("conv2d", s_conv2d, dtypes=FLOATS + ("int64",),
       xfails={("test_unsupported_dtype", "*", "int32"):
               "only the dilated sample raises (PyTorch's slow_conv_dilated: int64 only); "
               "the others compute in int32, as PyTorch's"}),
    _F("max_pool2d", s_max_pool2d, dtypes=FLOATS + INTS),
    _F("avg_pool2d", s_avg_pool2d, dtypes=FLOATS + ("int64",)),
    _F("adaptive_avg_pool2d", s_adaptive_avg_pool2d),
    _F("layer_norm", s_layer_norm),
    _F("batch_norm", s_batch_norm),
    _F("embedding", s_embedding, dtypes=ALL),
    _F("normalize", s_normalize),
    _F("pad", s_pad, dtypes=ALL),
    _F("unfold", s_unfold, dtypes=FLOATS + BOOL),
    _F("fold", s_fold, dtypes=FLOATS + BOOL),
    _F("scaled_dot_product_attention", s_sdpa),
    _F("one_hot", lambda make, dtype: [S((make(3, low=0, high=3),), name="classes",
                                         method=False),
                                       S((make(2, low=0, high=2), 5), name="num_classes",
                                         method=False)],
       dtypes=("int64",), differentiable=False),
    # activations
    _F("relu", _activation(), dtypes=_REALS),
    _F("relu6", _activation(low=-3, high=8), dtypes=_REALS),
    _F("leaky_relu", _activation({"negative_slope": 0.2})),
    _F("elu", _activation({"alpha": 0.5})),
    _F("hardtanh", _activation({"min_val": -1, "max_val": 1}), dtypes=_REALS),
    _F("gelu", _activation({"approximate": "tanh"})),
    _F("silu", _activation()),
    _F("mish", _activation()),
    _F("sigmoid", _activation(), dtypes=ALL),
    _F("tanh", _activation(), dtypes=ALL),
    _F("softplus", _activation({"beta": 2.0, "threshold": 1.0})),
    _F("logsigmoid", _activation()),
    _F("softsign", _activation(), dtypes=_REALS),
    _F("glu", lambda make, dtype: [S((make(2, 4),), name="last dim", method=False),
                                   S((make(4, 2),), {"dim": 0}, name="dim 0", method=False)]),
    # as plugrad.softmax's entries: floating only (PyTorch has no integer kernel)
    _F("softmax", lambda make, dtype: [S((make(2, 3),), {"dim": 1}, name="dim 1",
                                         method=False)], dtypes=FLOATS),
    _F("log_softmax", lambda make, dtype: [S((make(2, 3),), {"dim": 0}, name="dim 0",
                                             method=False)], dtypes=FLOATS),
    # losses
    _F("cross_entropy", s_cross_entropy),
    _F("nll_loss", s_nll_loss),
    _F("mse_loss", _regression()),
    _F("l1_loss", _regression(),
       xfails={("test_unsupported_dtype", "*", "int*"):
               "an integer loss computes with reduction 'none' or 'sum' and raises with "
               "'mean' (PyTorch's abs(input - target), then mean)"}),
    _F("smooth_l1_loss", _regression(beta=0.5)),
    _F("huber_loss", _regression(delta=0.5)),
    _F("binary_cross_entropy", s_bce),
    _F("binary_cross_entropy_with_logits", s_bce_logits),
    _F("kl_div", s_kl_div),
)
