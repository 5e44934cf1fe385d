"""Autocast: which ops run in lower precision inside ``torch.autocast``, as data, and the one
helper the ops call to cast their inputs.

PyTorch's policy has three lists per device type: ops that run in the autocast dtype
(``lower_precision_fp``: matmuls, linear, convolutions), ops that run in float32
(``fp32``: losses, norms, reductions prone to overflow), and ops that run in the widest
input type (``promote``). Everything else runs in whatever dtype its inputs have. The
``cuda`` lists apply to CUDA tensors; the ``cpu`` lists to every other device (``cpu``,
``ref``, plugins), as PyTorch's CPU autocast serves its host device.

The state (enabled, dtype per device type) is thread-local, as in PyTorch. ``active``
counts the autocast regions open in any thread: an op's hook is
``if _autocast.active: a, b = _autocast.autocast_args("matmul", a, b)``, one global read
while no region is open.
"""
from __future__ import annotations

import threading

from plugrad.core import dtypes as _dt
from plugrad.core.errors import DTypeError

LOWER_PRECISION = {
    "cuda": frozenset({
        "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "convolution", "prelu", "addmm", "addmv", "addr", "matmul",
        "einsum", "mm", "mv", "linalg_vecdot", "linear", "addbmm", "baddbmm", "bmm",
        "chain_matmul", "linalg_multi_dot", "lstm_cell", "gru_cell", "rnn_tanh_cell",
        "rnn_relu_cell", "scaled_dot_product_attention"}),
    "cpu": frozenset({
        "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm",
        "addbmm", "linear", "matmul", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "prelu", "scaled_dot_product_attention",
        "_native_multi_head_attention"}),
}

FLOAT32 = {
    "cuda": frozenset({
        "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
        "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm", "group_norm",
        "norm", "frobenius_norm", "nuclear_norm", "cosine_similarity", "poisson_nll_loss",
        "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss", "kl_div",
        "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss",
        "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
        "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist",
        "renorm", "logsumexp", "upsample_nearest1d", "upsample_nearest2d",
        "upsample_nearest3d", "upsample_linear1d", "upsample_bilinear2d",
        "upsample_trilinear3d", "upsample_bicubic2d", "cross_entropy"}),
    "cpu": frozenset({
        "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile",
        "nanquantile", "stft", "cdist", "trace", "view_as_complex", "cholesky",
        "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr",
        "pinverse", "max_pool3d", "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d",
        "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d",
        "replication_pad3d", "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
        "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy",
        "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss",
        "triplet_margin_loss", "multi_margin_loss", "ctc_loss", "kl_div",
        "multilabel_margin_loss", "binary_cross_entropy_with_logits", "linalg_cond",
        "linalg_matrix_rank", "linalg_solve", "linalg_cholesky", "linalg_svdvals",
        "linalg_eigvals", "linalg_eigvalsh", "linalg_inv", "linalg_householder_product",
        "linalg_tensorinv", "linalg_tensorsolve", "geqrf", "qr", "svd", "triangular_solve",
        "fractional_max_pool2d", "fractional_max_pool3d", "adaptive_max_pool3d",
        "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh",
        "linalg_lstsq", "linalg_inv_ex"}),
}

# float32 unless the call names its own output dtype (PyTorch's ``fp32_set_opt_dtype``)
FLOAT32_UNLESS_DTYPE = {
    "cuda": frozenset({"prod", "softmax", "log_softmax", "cumprod", "cumsum",
                       "linalg_vector_norm", "linalg_matrix_norm", "sum"}),
    "cpu": frozenset(),
}

PROMOTE = {
    "cuda": frozenset({"addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot",
                       "grid_sampler", "index_put", "scatter_add", "tensordot"}),
    "cpu": frozenset({"stack", "cat", "index_copy"}),
}

# ops that PyTorch refuses under CUDA autocast (their float16 results are unsafe)
BANNED = {"cuda": {"binary_cross_entropy": (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional."
    "binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss.  "
    "binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.")}, "cpu": {}}

DEFAULT_DTYPE = {"cuda": _dt.float16, "cpu": _dt.bfloat16}
SUPPORTED_DTYPES = {"cuda": (_dt.float16, _dt.bfloat16), "cpu": (_dt.float16, _dt.bfloat16)}

active = 0  # open autocast regions, all threads together
_lock = threading.Lock()


class _State(threading.local):
    def __init__(self):
        self.enabled = {"cuda": False, "cpu": False}
        self.dtype = dict(DEFAULT_DTYPE)
        self.cache_enabled = True


state = _State()


def key(device_type: str) -> str:
    """Whose lists and state serve ``device_type``: ``cuda``, or ``cpu`` for every other."""
    return "cuda" if device_type == "cuda" else "cpu"


def enter() -> None:
    global active
    with _lock:
        active += 1


def leave() -> None:
    global active
    with _lock:
        active -= 1


def _eligible(t) -> bool:
    """PyTorch casts floating tensors other than float64."""
    dt = getattr(t, "dtype", None)
    return dt is not None and dt.is_floating_point and dt is not _dt.float64


def _cast(op: str, t, dtype):
    if not _eligible(t) or t.dtype is dtype:
        return t
    if dtype.name not in t._k.dtypes:
        raise DTypeError(f"{op} under autocast: the {t.device} backend {t._k.name!r} cannot "
                         f"hold {dtype}; it supports {', '.join(sorted(t._k.dtypes))}. Pass "
                         f"another dtype to autocast (e.g. dtype=torch.float16)")
    return t.to(dtype)


def autocast_args(op: str, *tensors, out_dtype=None):
    """``tensors`` cast as autocast wants for ``op`` on their device (unchanged outside an
    autocast region, for ops in no list, and for non-tensors, integers and float64).

    ``out_dtype``: the op's own ``dtype=`` argument, which overrides the float32 cast of
    the ``FLOAT32_UNLESS_DTYPE`` ops."""
    first = next((t for t in tensors if getattr(t, "device", None) is not None), None)
    if first is None:
        return tensors
    k = key(first.device.type)
    if not state.enabled[k]:
        return tensors
    if op in LOWER_PRECISION[k]:
        dtype = state.dtype[k]
    elif op in FLOAT32[k] or (op in FLOAT32_UNLESS_DTYPE[k] and out_dtype is None):
        dtype = _dt.float32
    elif op in PROMOTE[k]:
        dts = [t.dtype for t in tensors if _eligible(t)]
        if not dts:
            return tensors
        dtype = dts[0]
        for d in dts[1:]:
            dtype = _dt.promote_types(dtype, d)
    elif op in BANNED[k]:
        raise RuntimeError(BANNED[k][op])
    else:
        return tensors
    return tuple(_cast(op, t, dtype) for t in tensors)
