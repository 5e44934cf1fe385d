"""The contract's nn kernels: the shared fast forms (``XpKernels``, run here on NumPy) agree
with the composite fallbacks and with PyTorch; the composites themselves run on the
pure-Python reference backend (``tests/backends``, and the layer tests)."""
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

from plugrad.backends._xp_windows import XpWindowKernels
from plugrad.backends.contract import Backend, optional_kernels
from plugrad.backends.cupy import CuPyBackend
from plugrad.backends.numpy import NumPyBackend
from plugrad.backends.xp_kernels import XpKernels

NN_KERNELS = ("unfold2d", "fold2d", "conv2d", "conv2d_grad_input", "conv2d_grad_weight",
              "max_pool2d", "max_pool2d_backward", "layer_norm", "layer_norm_backward", "gelu",
              "gelu_backward", "softmax", "log_softmax", "logsumexp", "sigmoid",
              "softmax_backward", "log_softmax_backward", "cross_entropy_backward",
              "scaled_dot_product_attention", "scaled_dot_product_attention_backward")
GEOMS = [((3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
         ((2, 3), (2, 1), ((0, 1), (2, 0)), (1, 2), 2)]
TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}


@pytest.fixture(scope="module")
def fast_and_composite():
    class Composite(NumPyBackend):
        pass
    for name in NN_KERNELS:  # the contract's bodies, on NumPy primitives
        setattr(Composite, name, getattr(Backend, name))
    return NumPyBackend(), Composite()


def close(a, b, dtype=np.float64):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype == dtype, (a.shape, b.shape, a.dtype)
    np.testing.assert_allclose(a, b, **TOL[dtype])


def tgrad(fn, g, *inputs):
    """PyTorch's gradients of ``fn`` w.r.t. the floating inputs."""
    ts = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in inputs]
    fn(*ts).backward(torch.tensor(g))
    return [t.grad.numpy() if t.grad is not None else None for t in ts]


# ---------------------------------------------------------------------- shape of the code
def test_kernels_are_optional_with_composites_and_mixed_in_by_class():
    assert set(NN_KERNELS) <= set(optional_kernels())
    for cls in (NumPyBackend, CuPyBackend):
        assert XpKernels in cls.__mro__
        for name in NN_KERNELS:  # defined in the mixin's class body, not installed
            assert name not in vars(cls), name
            owner = next(c for c in cls.__mro__ if name in vars(c))
            assert owner in (XpKernels, XpWindowKernels), (cls, name, owner)


def test_cpu_table_uses_the_shared_nn_kernels():
    """In a fresh interpreter, a plain ``import plugrad`` gives the cpu table these kernels."""
    code = ("import plugrad\nfrom plugrad.core.registry import get_registry\n"
            "t = get_registry().table('cpu')\n"
            f"print(all(t.sources[n] == 'numpy' for n in {NN_KERNELS!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "True"


# ---------------------------------------------------------------------- windows
@pytest.mark.parametrize("geom", GEOMS)
def test_conv_kernels_agree(fast_and_composite, geom):
    fast, comp = fast_and_composite
    kernel, stride, pads, dil, groups = geom
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 7, 6))
    w = rng.standard_normal((6, 4 // groups) + kernel)
    out = fast.conv2d(x, w, stride, pads, dil, groups)
    close(out, comp.conv2d(x, w, stride, pads, dil, groups))
    g = rng.standard_normal(out.shape)
    close(fast.conv2d_grad_input(g, w, (7, 6), stride, pads, dil, groups),
          comp.conv2d_grad_input(g, w, (7, 6), stride, pads, dil, groups))
    close(fast.conv2d_grad_weight(g, x, w.shape, stride, pads, dil, groups),
          comp.conv2d_grad_weight(g, x, w.shape, stride, pads, dil, groups))
    cols = fast.unfold2d(x, kernel, stride, pads, dil)
    np.testing.assert_array_equal(cols, comp.unfold2d(x, kernel, stride, pads, dil))
    close(fast.fold2d(cols, (7, 6), kernel, stride, pads, dil),
          comp.fold2d(cols, (7, 6), kernel, stride, pads, dil))


def test_fold_is_the_adjoint_of_unfold(fast_and_composite):
    for b in fast_and_composite:
        rng = np.random.default_rng(1)
        x = rng.standard_normal((1, 2, 5, 5))
        geom = ((2, 2), (2, 1), ((1, 0), (0, 1)), (1, 2))
        cols = b.unfold2d(x, *geom)
        y = rng.standard_normal(cols.shape)
        assert np.isclose((cols * y).sum(), (x * b.fold2d(y, (5, 5), *geom)).sum())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel,stride,pad", [(2, 2, 0), (3, 1, 1), (3, 2, 1)])
def test_max_pool2d_and_backward_agree_and_match_torch(fast_and_composite, dtype, kernel,
                                                       stride, pad):
    fast, comp = fast_and_composite
    x = np.random.default_rng(2).standard_normal((2, 3, 7, 6)).astype(dtype)
    args = ((kernel, kernel), (stride, stride), ((pad, pad), (pad, pad)), (1, 1))
    out, idx = fast.max_pool2d(x, *args)
    for a, b in zip((out, idx), comp.max_pool2d(x, *args)):
        np.testing.assert_array_equal(a, b)
    g = np.random.default_rng(3).standard_normal(out.shape).astype(dtype)
    gx = fast.max_pool2d_backward(g, idx, x.shape)
    close(gx, comp.max_pool2d_backward(g, idx, x.shape), dtype)
    want = tgrad(lambda t: torch.nn.functional.max_pool2d(t, kernel, stride, pad), g, x)[0]
    close(gx, want, dtype)


# ---------------------------------------------------------------------- activations, norms
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_and_backward_agree_and_match_torch(fast_and_composite, dtype):
    fast, comp = fast_and_composite
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((3, 5, 4)) * 3).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    for mode in ("none", "tanh"):
        close(fast.gelu(x, mode), comp.gelu(x, mode), dtype)
        gx = fast.gelu_backward(g, x, mode)
        close(gx, comp.gelu_backward(g, x, mode), dtype)
        close(gx, tgrad(lambda t: torch.nn.functional.gelu(t, approximate=mode), g, x)[0],
              dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_family_and_backward_agree_and_match_torch(fast_and_composite, dtype):
    fast, comp = fast_and_composite
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 6, 3)) * 4).astype(dtype)
    x[0, :, 0] = -np.inf  # an all -inf slice along axis 1
    g = rng.standard_normal(x.shape).astype(dtype)
    for axis in (1, 2):  # (NumPy's sub warns on -inf - -inf in the composite; the fast form not)
        finite = ~np.isneginf(x).all(axis=axis, keepdims=True)  # not an all -inf slice
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the fast forms never warn
            y, ls = fast.softmax(x, axis), fast.log_softmax(x, axis)
            lse = fast.logsumexp(x, (axis,), False)
        with np.errstate(all="ignore"):
            y_c, ls_c = comp.softmax(x, axis), comp.log_softmax(x, axis)
        close(np.where(finite, y, 0), np.where(finite, y_c, 0), dtype)
        close(np.where(finite, ls, 0), np.where(finite, ls_c, 0), dtype)
        assert np.isnan(y[~np.broadcast_to(finite, y.shape)]).all()  # as PyTorch: NaN there
        close(lse, comp.logsumexp(x, (axis,), False), dtype)
        xs = np.where(np.isfinite(x), x, 0).astype(dtype)  # the gradients on finite inputs
        y, ls = fast.softmax(xs, axis), fast.log_softmax(xs, axis)
        gs, gl = fast.softmax_backward(g, y, axis), fast.log_softmax_backward(g, ls, axis)
        close(gs, comp.softmax_backward(g, y, axis), dtype)
        close(gl, comp.log_softmax_backward(g, ls, axis), dtype)
        close(gs, tgrad(lambda t: torch.softmax(t, axis), g, xs)[0], dtype)
        close(gl, tgrad(lambda t: torch.log_softmax(t, axis), g, xs)[0], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_and_backward_agree_and_match_torch(fast_and_composite, dtype, affine):
    fast, comp = fast_and_composite
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((3, 4, 5)) * 2 + 1).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    w = rng.standard_normal((4, 5)).astype(dtype) if affine else None
    b = rng.standard_normal((4, 5)).astype(dtype) if affine else None
    got = fast.layer_norm(x, w, b, 2, 1e-5)
    for a, c in zip(got, comp.layer_norm(x, w, b, 2, 1e-5)):
        close(a, c, dtype)
    _, mean, rstd = got
    mask = (True, affine, affine)
    grads = fast.layer_norm_backward(g, x, w, mean, rstd, 2, mask)
    for a, c in zip(grads, comp.layer_norm_backward(g, x, w, mean, rstd, 2, mask)):
        assert (a is None) == (c is None)
        if a is not None:
            close(a, c, dtype)
    if affine:
        want = tgrad(lambda t, tw, tb: torch.nn.functional.layer_norm(t, (4, 5), tw, tb),
                     g, x, w, b)
    else:
        want = tgrad(lambda t: torch.nn.functional.layer_norm(t, (4, 5)), g, x) + [None, None]
    for a, c in zip(grads, want):
        assert (a is None) == (c is None)
        if a is not None:
            close(a, c.astype(dtype), dtype) if dtype is np.float64 else \
                np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-5)
    only_w = fast.layer_norm_backward(g, x, w, mean, rstd, 2, (False, True, False))
    assert only_w[0] is None and only_w[2] is None and (only_w[1] is None) != affine


# ---------------------------------------------------------------------- loss, attention
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_backward_agrees_and_matches_torch(fast_and_composite, dtype):
    fast, comp = fast_and_composite
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((5, 4, 3)) * 3).astype(dtype)
    target = rng.integers(0, 4, (5, 3))
    valid = rng.random((5, 3)) < 0.7
    g = np.array(1.5, dtype)
    for v, scale in [(valid, 1.0 / int(valid.sum())), (None, 1.0)]:  # scale: a Python float
        t = target if v is None else np.where(v, target, 0)
        got = fast.cross_entropy_backward(g, x, t, v, scale)
        np.testing.assert_array_equal(got, comp.cross_entropy_backward(g, x, t, v, scale))
        torch_t = target if v is None else np.where(v, target, -100)
        red = "mean" if v is not None else "sum"
        want = tgrad(lambda a, b: torch.nn.functional.cross_entropy(a, b, reduction=red), g, x,
                     torch_t)[0]
        close(got, want, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_and_backward_agree_and_match_torch(fast_and_composite, dtype):
    fast, comp = fast_and_composite
    rng = np.random.default_rng(8)
    q, k = rng.standard_normal((2, 3, 4, 8)).astype(dtype), rng.standard_normal((2, 3, 6, 8))
    v = rng.standard_normal((2, 1, 6, 5)).astype(dtype)  # broadcast over heads
    k = k.astype(dtype)
    keep = rng.random((4, 6)) < 0.5
    keep[:, 0] = True
    keep[2] = False  # the third query may attend to nothing: 0, as in PyTorch 2.13
    mask = np.where(keep, 0.0, -np.inf).astype(dtype)
    g = rng.standard_normal((2, 3, 4, 5)).astype(dtype)
    for m in (mask, None):
        out, attn = fast.scaled_dot_product_attention(q, k, v, m, 0.3)
        out_c, attn_c = comp.scaled_dot_product_attention(q, k, v, m, 0.3)
        close(out, out_c, dtype)
        close(attn, attn_c, dtype)
        grads = fast.scaled_dot_product_attention_backward(g, q, k, v, attn, 0.3)
        for a, c in zip(grads, comp.scaled_dot_product_attention_backward(g, q, k, v, attn,
                                                                          0.3)):
            close(a, c, dtype)
        tm = None if m is None else torch.tensor(keep)
        fwd = lambda a, b, c: torch.nn.functional.scaled_dot_product_attention(  # noqa: E731
            a, b, c, attn_mask=tm, scale=0.3)
        close(out, fwd(*map(torch.tensor, (q, k, v))).numpy(), dtype)
        for a, c in zip(grads, tgrad(fwd, g, q, k, v)):
            close(a, c, dtype)
    masked_out, masked_attn = fast.scaled_dot_product_attention(q, k, v, mask, 0.3)
    assert (masked_out[:, :, 2] == 0).all() and (masked_attn[:, :, 2] == 0).all()
    none_out, _ = fast.scaled_dot_product_attention(q, k[:, :, :0], v[:, :, :0], None, 0.3)
    assert none_out.shape == (2, 3, 4, 5) and not none_out.any()  # no keys: zeros
