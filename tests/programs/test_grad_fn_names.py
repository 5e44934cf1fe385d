"""``grad_fn`` as PyTorch names it: programs print ``loss.grad_fn``, walk
``next_functions`` and test ``type(t.grad_fn).__name__``.

Each case is built in both libraries from the same code; the names must agree. Where
plugrad's node is PyTorch's node (losses with their reduction, linear's inputs) the edges
must agree too. The fused loss nodes must also give PyTorch's gradients, first and second
order, on every backend.
"""
import numpy as np
import pytest

import plugrad

torch = pytest.importorskip("torch")


def _cases(lib, device=None):
    """name -> a function building the case's output with ``lib`` (plugrad or torch)."""
    F = lib.nn.functional
    kw = {"device": device} if device else {}
    rng = np.random.default_rng(0)

    def r(*shape):
        return lib.tensor(rng.standard_normal(shape), dtype=lib.float32, requires_grad=True,
                          **kw)

    def c(array, dtype=None):
        return lib.tensor(np.asarray(array), dtype=dtype, **kw)

    x2, x3, w, b = r(4, 3), r(2, 4, 3), r(5, 3), r(5)
    t = c(rng.standard_normal((4, 3)), lib.float32)
    p = lib.tensor(rng.uniform(0.1, 0.9, (4, 3)), dtype=lib.float32, requires_grad=True, **kw)
    lbl = c([0, 2, 1, 0])
    img, cw, cb = r(2, 3, 6, 6), r(4, 3, 3, 3), r(4)
    return {
        "mse": lambda: F.mse_loss(x2, t),
        "mse_sum": lambda: F.mse_loss(x2, t, reduction="sum"),
        "mse_none": lambda: F.mse_loss(x2, t, reduction="none"),
        "smooth_l1": lambda: F.smooth_l1_loss(x2, t),
        "huber": lambda: F.huber_loss(x2, t),
        "linear_2d": lambda: F.linear(x2, w, b),
        "linear_2d_no_bias": lambda: F.linear(x2, w),
        "linear_3d": lambda: F.linear(x3, w, b),
        "linear_3d_no_bias": lambda: F.linear(x3, w),
        "linear_1d": lambda: F.linear(r(3), w, b),
        "linear_1d_no_bias": lambda: F.linear(r(3), w),
        "nn_linear": lambda: lib.nn.Linear(3, 5)(x2.detach()),
        "cross_entropy": lambda: F.cross_entropy(x2, lbl),
        "cross_entropy_sum": lambda: F.cross_entropy(x2, lbl, reduction="sum"),
        "cross_entropy_none": lambda: F.cross_entropy(x2, lbl, reduction="none"),
        "cross_entropy_weight": lambda: F.cross_entropy(x2, lbl, weight=c([1., 2., 3.],
                                                                           lib.float32)),
        "cross_entropy_smoothing": lambda: F.cross_entropy(x2, lbl, label_smoothing=0.1),
        "cross_entropy_probs": lambda: F.cross_entropy(x2, p.softmax(1)),
        "cross_entropy_probs_sum": lambda: F.cross_entropy(x2, p.softmax(1), reduction="sum"),
        "cross_entropy_unbatched": lambda: F.cross_entropy(r(3), lbl[0]),
        "cross_entropy_2d": lambda: F.cross_entropy(r(2, 3, 4), c([[0, 1, 2, 0], [1, 1, 2, 0]])),
        "nll": lambda: F.nll_loss(x2, lbl),
        "nll_none": lambda: F.nll_loss(x2, lbl, reduction="none"),
        "bce": lambda: F.binary_cross_entropy(p, t.sigmoid()),
        "bce_none": lambda: F.binary_cross_entropy(p, t.sigmoid(), reduction="none"),
        "bce_logits": lambda: F.binary_cross_entropy_with_logits(x2, p),
        "bce_logits_sum": lambda: F.binary_cross_entropy_with_logits(x2, p, reduction="sum"),
        "conv2d": lambda: F.conv2d(img, cw, cb),
        "conv2d_unbatched": lambda: F.conv2d(r(3, 6, 6), cw),
        "conv1d": lambda: F.conv1d(r(2, 3, 8), r(4, 3, 3), r(4)),
        "conv1d_unbatched": lambda: F.conv1d(r(3, 8), r(4, 3, 3)),
        "max_pool2d": lambda: F.max_pool2d(img, 2),
        "max_pool2d_unbatched": lambda: F.max_pool2d(r(3, 6, 6), 2),
        "avg_pool2d": lambda: F.avg_pool2d(img, 2),
        "adaptive_avg_pool2d": lambda: F.adaptive_avg_pool2d(img, 2),
        "adaptive_avg_pool2d_global": lambda: F.adaptive_avg_pool2d(img, 1),
        "layer_norm": lambda: F.layer_norm(x2, (3,)),
        "batch_norm": lambda: F.batch_norm(img, c([0., 0., 0.], lib.float32),
                                           c([1., 1., 1.], lib.float32), training=True),
        "softmax": lambda: F.softmax(x2, 1),
        "log_softmax": lambda: F.log_softmax(x2, 1),
        "gelu": lambda: F.gelu(x2),
        "relu": lambda: F.relu(x2),
        "leaky_relu": lambda: F.leaky_relu(x2),
        "elu": lambda: F.elu(x2),
        "silu": lambda: F.silu(x2),
        "mish": lambda: F.mish(x2),
        "hardtanh": lambda: F.hardtanh(x2),
        "relu6": lambda: F.relu6(x2),
        "softplus": lambda: F.softplus(x2),
        "logsigmoid": lambda: F.logsigmoid(x2),
        "glu": lambda: F.glu(r(4, 4)),
        "embedding": lambda: F.embedding(lbl, w),
        "embedding_padding": lambda: F.embedding(lbl, w, padding_idx=0),
        "sdpa_3d": lambda: F.scaled_dot_product_attention(r(2, 4, 3), r(2, 4, 3), r(2, 4, 3)),
        "sdpa_4d": lambda: F.scaled_dot_product_attention(r(2, 2, 4, 3), r(2, 2, 4, 3),
                                                          r(2, 2, 4, 3), is_causal=True),
        # views and their in-place forms
        "t": lambda: x2.t(), "T": lambda: x2.T, "mT": lambda: x3.mT,
        "transpose": lambda: x3.transpose(0, 1), "swapaxes": lambda: x3.swapaxes(0, 2),
        "permute": lambda: x3.permute(2, 0, 1), "movedim": lambda: x3.movedim(0, 2),
        "unsqueeze": lambda: x3.unsqueeze(1), "squeeze_dim": lambda: x3[:1].squeeze(0),
        "squeeze_all": lambda: x3[:1].squeeze(), "flatten": lambda: x3.flatten(),
        "view": lambda: x3.view(8, 3), "reshape": lambda: x3.reshape(8, 3),
        "reshape_copy": lambda: x3.transpose(0, 1).reshape(-1),
        "expand": lambda: x2.expand(2, 4, 3),
        "select": lambda: x3[0], "select_last": lambda: x3[:, -1], "ellipsis": lambda: x3[..., 0],
        "slice": lambda: x3[1:], "newaxis": lambda: x3[:, None],
        "narrow": lambda: x3.narrow(1, 0, 2),
        "chunk": lambda: x3.chunk(2)[0], "split": lambda: x3.split(1)[1],
        "unbind": lambda: x3.unbind(1)[0], "repeat": lambda: x2.repeat(2, 1),
        "copy_slices": lambda: _write_through(x2 * 1),
        "view_after_write": lambda: _write_through(x2 * 1)[1:],
    }


def _write_through(y):
    """The base after an in-place op on a view (PyTorch's CopySlices)."""
    y[0:2].mul_(3)
    return y


#: cases where plugrad's node is PyTorch's node: the edges to the inputs agree as well
SAME_EDGES = {"mse", "mse_sum", "mse_none", "nll", "nll_none", "bce", "bce_none",
              "bce_logits", "bce_logits_sum", "conv2d", "max_pool2d", "layer_norm",
              "softmax", "log_softmax", "gelu", "relu"}


def _edges(node):
    return [type(n).__name__ if n is not None else None for n, _ in node.next_functions]


@pytest.mark.parametrize("case", sorted(_cases(plugrad)))
def test_grad_fn_name_as_torch(case):
    ours = _cases(plugrad)[case]()
    theirs = _cases(torch)[case]()
    assert theirs.grad_fn is not None and ours.grad_fn is not None
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    name = type(theirs.grad_fn).__name__
    assert repr(ours.grad_fn).startswith(f"<{name} object at 0x")
    if case in SAME_EDGES:
        assert _edges(ours.grad_fn) == _edges(theirs.grad_fn)


def _loss_cases(lib, device):
    F = lib.nn.functional
    rng = np.random.default_rng(1)

    def r(*shape, low=None):
        a = rng.uniform(0.05, 0.95, shape) if low else rng.standard_normal(shape)
        return lib.tensor(a, dtype=lib.float64, requires_grad=True, device=device)

    x, t, pr, tp = r(3, 4), r(3, 4), r(3, 4, low=True), r(3, 4, low=True)
    x4 = r(2, 3, 2, 2)
    lbl = lib.tensor([1, 3, 0], device=device)
    lbl4 = lib.tensor([[[0, 2], [1, -100]], [[2, 2], [0, 1]]], device=device)
    wt = lib.tensor([0.5, 1.0, 2.0, 1.5], dtype=lib.float64, device=device)
    out = {}
    for red in ("mean", "sum", "none"):
        out[f"mse_{red}"] = (lambda red=red: F.mse_loss(x, t, reduction=red), (x, t))
        out[f"nll_{red}"] = (lambda red=red: F.nll_loss(x.log_softmax(1), lbl, weight=wt,
                                                        reduction=red), (x,))
        out[f"ce_w_{red}"] = (lambda red=red: F.cross_entropy(x, lbl, weight=wt, reduction=red,
                                                              label_smoothing=0.2), (x,))
        out[f"ce_2d_{red}"] = (lambda red=red: F.cross_entropy(x4, lbl4, reduction=red), (x4,))
        out[f"bce_{red}"] = (lambda red=red: F.binary_cross_entropy(pr, tp, reduction=red),
                             (pr, tp))
        out[f"bcel_{red}"] = (lambda red=red: F.binary_cross_entropy_with_logits(
            x, tp, pos_weight=wt, reduction=red), (x, tp))
    return out


@pytest.mark.parametrize("case", sorted(_loss_cases(plugrad, "cpu")))
def test_fused_loss_gradients_as_torch(device, case):
    """First and second derivatives (``create_graph``) of the fused loss nodes."""
    ours, xs = _loss_cases(plugrad, device)[case]
    theirs, ts = _loss_cases(torch, None)[case]
    lo, lt = ours(), theirs()
    np.testing.assert_allclose(lo.detach().cpu().numpy(), lt.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    go = plugrad.autograd.grad(lo.sum(), xs, create_graph=True)
    gt = torch.autograd.grad(lt.sum(), ts, create_graph=True)
    for a, b in zip(go, gt):
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    # second order: d/dxs of sum(grad * grad)
    ggo = plugrad.autograd.grad(sum((g * g).sum() for g in go), xs, allow_unused=True)
    ggt = torch.autograd.grad(sum((g * g).sum() for g in gt), ts, allow_unused=True)
    for a, b in zip(ggo, ggt):
        if b is None:
            assert a is None or not np.any(a.detach().cpu().numpy())
        else:
            np.testing.assert_allclose(a.detach().cpu().numpy(), b.numpy(), rtol=1e-9,
                                       atol=1e-12)
    # and the plain backward pass (array rules)
    lo2 = ours()
    (lo2.sum() if lo2.ndim else lo2).backward()
    for x, g in zip(xs, gt):
        np.testing.assert_allclose(x.grad.cpu().numpy(), g.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)


def test_renamed_node_keeps_its_behaviour():
    """A renamed node is its class under another name: same rule, one level of renaming."""
    from plugrad.core.autograd.node import present_as
    x = plugrad.tensor([1.0, 2.0], requires_grad=True)
    y = present_as(present_as(x * 3.0, "FirstBackward0"), "SecondBackward0")
    assert type(y.grad_fn).__name__ == "SecondBackward0"
    assert type(y.grad_fn).__mro__[1].__name__ == "MulBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    leaf = present_as(x, "Nope")
    assert leaf.grad_fn is None
