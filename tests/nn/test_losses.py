"""Losses: values and gradients against NumPy float64 closed forms, gradcheck, and PyTorch
(when installed) as a yardstick; errors as PyTorch raises them."""
import warnings

import numpy as np
import pytest

import plugrad
from plugrad.autograd import gradcheck, gradgradcheck
from plugrad.nn import functional_losses as F
from plugrad.nn import losses as L

RNG = np.random.default_rng(0)
REDUCTIONS = ("none", "mean", "sum")


def t(a, device, grad=False, dtype=plugrad.float64):
    return plugrad.tensor(np.asarray(a), dtype=dtype, device=device, requires_grad=grad)


def idx(a, device):
    return plugrad.tensor(np.asarray(a), dtype=plugrad.int64, device=device)


def host(x):
    return np.asarray(x.detach().cpu().numpy())


def reduce_np(v, reduction):
    return {"none": v, "mean": v.mean(), "sum": v.sum()}[reduction]


def value_and_grad(fn, x, reduction):
    out = fn(x)
    (out.sum() if reduction == "none" else out).backward()
    return host(out), host(x.grad)


def grad_scale(reduction, n):
    return 1.0 / n if reduction == "mean" else 1.0


# ====================================================================== regression losses
REGRESSION = {
    # name: (function, loss(d), d loss / d input (d = input - target))
    "mse": (F.mse_loss, lambda d: d ** 2, lambda d: 2 * d),
    "l1": (F.l1_loss, np.abs, np.sign),
    "smooth_l1": (lambda x, y, reduction: F.smooth_l1_loss(x, y, reduction=reduction, beta=0.5),
                  lambda d: np.where(np.abs(d) < 0.5, d ** 2, np.abs(d) - 0.25),
                  lambda d: np.where(np.abs(d) < 0.5, 2 * d, np.sign(d))),
    "huber": (lambda x, y, reduction: F.huber_loss(x, y, reduction=reduction, delta=0.5),
              lambda d: np.where(np.abs(d) < 0.5, 0.5 * d ** 2, 0.5 * (np.abs(d) - 0.25)),
              lambda d: np.where(np.abs(d) < 0.5, d, 0.5 * np.sign(d))),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(REGRESSION))
def test_regression_loss_value_and_grad(device, name, reduction):
    fn, loss_np, grad_np = REGRESSION[name]
    a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    x = t(a, device, grad=True)
    out, grad = value_and_grad(lambda v: fn(v, t(b, device), reduction=reduction), x, reduction)
    np.testing.assert_allclose(out, reduce_np(loss_np(a - b), reduction), rtol=1e-12)
    np.testing.assert_allclose(grad, grad_np(a - b) * grad_scale(reduction, a.size),
                               rtol=1e-12)


def test_smooth_l1_with_zero_beta_is_l1(device):
    a, b = RNG.normal(size=4), RNG.normal(size=4)
    out = F.smooth_l1_loss(t(a, device), t(b, device), beta=0.0)
    assert out.item() == pytest.approx(np.abs(a - b).mean(), rel=1e-12)
    with pytest.raises(ValueError, match="negative values for beta"):
        F.smooth_l1_loss(t(a, device), t(b, device), beta=-1.0)


def test_invalid_reduction_is_rejected(device):
    x = t([1.0, 2.0], device)
    with pytest.raises(ValueError, match="elementwise is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="elementwise")
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        L.CrossEntropyLoss(reduction="avg")(t([[1.0, 2.0]], device), idx([0], device))


def test_broadcast_target_warns_and_mismatch_names_both_shapes(device):
    x = t(np.zeros((3, 1)), device)
    with pytest.warns(UserWarning, match="different to the input size"):
        out = F.mse_loss(x, t(np.ones(3), device), reduction="none")
    assert tuple(out.shape) == (3, 3)
    with pytest.raises(ValueError, match=r"\[4\].*\[3, 2\]"):
        F.l1_loss(t(np.zeros((3, 2)), device), t(np.zeros(4), device))


def test_legacy_size_average_and_reduce_flags(device):
    a = t([1.0, 3.0], device)
    b = t([0.0, 0.0], device)
    with pytest.warns(UserWarning, match="deprecated"):
        assert F.mse_loss(a, b, size_average=False).item() == 10.0
    with pytest.warns(UserWarning):
        assert L.L1Loss(reduce=False)(a, b).tolist() == [1.0, 3.0]


# ====================================================================== cross-entropy
def log_softmax_np(x, axis=1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def cross_entropy_np(x, target, weight=None, ignore_index=-100, reduction="mean",
                     smoothing=0.0):
    """PyTorch's definition, in float64, for class indices and (N, C, d...) inputs."""
    c = x.shape[1]
    logp = log_softmax_np(x)
    w = np.ones(c) if weight is None else np.asarray(weight)
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    picked = np.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    w_elem = w[safe] * valid
    nll = -picked * w_elem
    wshape = (1, c) + (1,) * (x.ndim - 2)
    smooth = -(logp * w.reshape(wshape)).sum(1) * valid
    loss = (1 - smoothing) * nll + smoothing / c * smooth
    if reduction == "mean":
        return loss.sum() / w_elem.sum()
    return reduce_np(loss, reduction)


CE_CASES = [
    dict(),
    dict(weight=[0.2, 1.0, 3.0, 0.5]),
    dict(ignore_index=1),
    dict(label_smoothing=0.25),
    dict(weight=[0.2, 1.0, 3.0, 0.5], ignore_index=2, label_smoothing=0.1),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", range(len(CE_CASES)))
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3)], ids=["NC", "NCd"])
def test_cross_entropy_matches_closed_form(device, shape, case, reduction):
    kw = CE_CASES[case]
    x = RNG.normal(size=shape)
    target = RNG.integers(0, shape[1], size=(shape[0],) + shape[2:])
    target.flat[0] = kw.get("ignore_index", 0)  # make sure an ignored entry is present
    weight = kw.get("weight")
    out = F.cross_entropy(t(x, device), idx(target, device),
                          weight=None if weight is None else t(weight, device),
                          ignore_index=kw.get("ignore_index", -100), reduction=reduction,
                          label_smoothing=kw.get("label_smoothing", 0.0))
    expected = cross_entropy_np(x, target, weight, kw.get("ignore_index", -100), reduction,
                                kw.get("label_smoothing", 0.0))
    np.testing.assert_allclose(host(out), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", range(len(CE_CASES)))
def test_cross_entropy_gradient_is_right(case):
    kw = dict(CE_CASES[case])
    if "weight" in kw:
        kw["weight"] = t(kw["weight"], "cpu")
    x = plugrad.randn(2, 4, 3, dtype=plugrad.float64).requires_grad_()
    target = idx([[0, 1, 2], [3, 2, 1]], "cpu")
    for reduction in REDUCTIONS:
        assert gradcheck(lambda v: F.cross_entropy(v, target, reduction=reduction, **kw), (x,))
    assert gradgradcheck(lambda v: F.cross_entropy(v, target, **kw), (x,))


def test_cross_entropy_gradient_on_device(device):
    """The fused backward on each backend: grad = (softmax - onehot) / N."""
    x = RNG.normal(size=(2, 3))
    xt = t(x, device, grad=True)
    F.cross_entropy(xt, idx([2, 0], device)).backward()
    p = np.exp(log_softmax_np(x))
    p[[0, 1], [2, 0]] -= 1
    np.testing.assert_allclose(host(xt.grad), p / 2, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_with_class_probabilities(device, reduction):
    x = RNG.normal(size=(3, 4))
    probs = RNG.random(size=(3, 4))
    probs /= probs.sum(1, keepdims=True)
    w = np.array([1.0, 2.0, 0.5, 1.0])
    out = F.cross_entropy(t(x, device), t(probs, device), weight=t(w, device),
                          reduction=reduction, label_smoothing=0.2)
    smoothed = probs * 0.8 + 0.2 / 4
    expected = reduce_np(-(log_softmax_np(x) * smoothed * w).sum(1), reduction)
    np.testing.assert_allclose(host(out), expected, rtol=1e-10)


def test_cross_entropy_probabilities_gradient():
    x = plugrad.randn(3, 4, dtype=plugrad.float64).requires_grad_()
    probs = plugrad.softmax(plugrad.randn(3, 4, dtype=plugrad.float64), 1).requires_grad_()
    assert gradcheck(lambda a, b: F.cross_entropy(a, b, label_smoothing=0.1), (x, probs))


def test_cross_entropy_unbatched_input(device):
    x = np.array([0.5, -1.0, 2.0])
    out = F.cross_entropy(t(x, device), idx(2, device), reduction="none")
    assert tuple(out.shape) == ()
    assert out.item() == pytest.approx(-log_softmax_np(x[None])[0, 2], rel=1e-12)


def test_cross_entropy_all_ignored_mean_is_nan(device):
    out = F.cross_entropy(t(np.zeros((2, 3)), device), idx([-100, -100], device))
    assert np.isnan(out.item())


def test_cross_entropy_errors(device):
    x = t(np.zeros((2, 3)), device)
    with pytest.raises(IndexError, match=r"^Target 3 is out of bounds\.$"):
        F.cross_entropy(x, idx([0, 3], device))
    with pytest.raises(IndexError, match=r"Target -2 is out of bounds"):
        F.nll_loss(x, idx([-2, 0], device))
    with pytest.raises(TypeError, match="integer class indices.*float32"):
        F.cross_entropy(x, plugrad.tensor([0.0, 1.0], device=device))
    with pytest.raises(ValueError, match=r"batch_size \(2\) to match target batch_size \(3\)"):
        F.cross_entropy(x, idx([0, 1, 2], device))
    with pytest.raises(ValueError, match=r"Expected target size \[2, 5\], got \[2, 4\]"):
        F.cross_entropy(t(np.zeros((2, 3, 5)), device), idx(np.zeros((2, 4)), device))
    with pytest.raises(ValueError, match="label_smoothing must be between"):
        F.cross_entropy(x, idx([0, 1], device), label_smoothing=1.5)
    with pytest.raises(ValueError, match="weight tensor should be defined"):
        F.cross_entropy(x, idx([0, 1], device), weight=t([1.0, 2.0], device))
    with pytest.raises(ValueError, match="ignore_index is not supported"):
        F.cross_entropy(x, t(np.full((2, 3), 1 / 3), device), ignore_index=0)


def test_cross_entropy_is_stable_for_huge_logits(device):
    x = t([[1000.0, -1000.0, 0.0]], device, grad=True)
    out = F.cross_entropy(x, idx([1], device))
    assert out.item() == pytest.approx(2000.0)
    out.backward()
    np.testing.assert_allclose(host(x.grad), [[1.0, -1.0, 0.0]], atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_matches_closed_form(device, reduction):
    logp = log_softmax_np(RNG.normal(size=(4, 3)))
    target = np.array([0, 2, -100, 1])
    w = np.array([0.5, 2.0, 1.0])
    x = t(logp, device, grad=True)
    out = F.nll_loss(x, idx(target, device), weight=t(w, device), reduction=reduction)
    expected = cross_entropy_np(logp, target, w, -100, reduction)  # log_softmax is idempotent
    np.testing.assert_allclose(host(out), expected, rtol=1e-12)
    (out.sum() if reduction == "none" else out).backward()
    grad = np.zeros((4, 3))
    for i, c in enumerate(target):
        if c >= 0:
            grad[i, c] = -w[c]
    if reduction == "mean":
        grad /= w[[0, 2, 1]].sum()
    np.testing.assert_allclose(host(x.grad), grad, rtol=1e-12)


# ====================================================================== binary cross-entropy
def bce_np(p, y, w=1.0):
    return -w * (y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log1p(-p), -100))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_value_and_grad(device, reduction):
    p, y = RNG.uniform(0.05, 0.95, size=(2, 3)), RNG.uniform(size=(2, 3))
    w = RNG.uniform(0.5, 2.0, size=3)
    x = t(p, device, grad=True)
    out, grad = value_and_grad(
        lambda v: F.binary_cross_entropy(v, t(y, device), t(w, device), reduction=reduction),
        x, reduction)
    np.testing.assert_allclose(out, reduce_np(bce_np(p, y, w), reduction), rtol=1e-12)
    expected = w * (p - y) / (p * (1 - p)) * grad_scale(reduction, p.size)
    np.testing.assert_allclose(grad, expected, rtol=1e-10)


def test_bce_clamps_log_at_minus_100(device):
    x = t([0.0, 1.0, 0.0], device, grad=True)
    out = F.binary_cross_entropy(x, t([1.0, 0.0, 0.0], device), reduction="none")
    assert out.tolist() == [100.0, 100.0, 0.0]
    out.sum().backward()
    g = host(x.grad)
    assert np.all(np.isfinite(g)) and g[0] == -1e12 and g[1] == 1e12 and g[2] == 0.0


def test_bce_gradients_and_target_gradient():
    p = plugrad.rand(3, 2, dtype=plugrad.float64) * 0.8 + 0.1
    y = plugrad.rand(3, 2, dtype=plugrad.float64)
    assert gradcheck(F.binary_cross_entropy, (p.requires_grad_(), y.requires_grad_()))
    assert gradgradcheck(F.binary_cross_entropy, (p, y))


def test_bce_errors(device):
    with pytest.raises(ValueError, match=r"target size \(\[3\]\).*input size \(\[3, 1\]\)"):
        F.binary_cross_entropy(t(np.full((3, 1), 0.5), device), t(np.zeros(3), device))
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(t([1.5], device), t([1.0], device))


def bce_logits_np(x, y, pw=1.0, w=1.0):
    log_sig = -np.logaddexp(0, -x)
    log_one_minus = -np.logaddexp(0, x)
    return -w * (pw * y * log_sig + (1 - y) * log_one_minus)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits_value_and_grad(device, reduction):
    a, y = RNG.normal(size=(2, 3)) * 3, RNG.uniform(size=(2, 3))
    pw, w = RNG.uniform(0.5, 3, size=3), RNG.uniform(0.5, 2, size=(2, 1))
    x = t(a, device, grad=True)
    out, grad = value_and_grad(
        lambda v: F.binary_cross_entropy_with_logits(v, t(y, device), t(w, device),
                                                     reduction=reduction,
                                                     pos_weight=t(pw, device)), x, reduction)
    np.testing.assert_allclose(out, reduce_np(bce_logits_np(a, y, pw, w), reduction),
                               rtol=1e-12)
    s = 1 / (1 + np.exp(-a))
    expected = w * ((1 + (pw - 1) * y) * s - pw * y) * grad_scale(reduction, a.size)
    np.testing.assert_allclose(grad, expected, rtol=1e-10)


def test_bce_with_logits_is_stable_and_right_at_zero(device):
    x = t([-200.0, 1000.0, -1000.0, 0.0, 0.0], device, grad=True)
    y = t([1.0, 0.0, 0.0, 1.0, 0.0], device)
    out = F.binary_cross_entropy_with_logits(x, y, reduction="none")
    np.testing.assert_allclose(host(out), [200.0, 1000.0, 0.0, np.log(2), np.log(2)],
                               rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(host(x.grad), [-1.0, 1.0, 0.0, -0.5, 0.5], atol=1e-12)
    assert L.BCEWithLogitsLoss()(t([-200.0], device), t([1.0], device)).item() == 200.0


def test_bce_with_logits_gradients():
    x = plugrad.randn(3, 2, dtype=plugrad.float64).requires_grad_()
    y = plugrad.rand(3, 2, dtype=plugrad.float64).requires_grad_()
    pw = plugrad.tensor([0.5, 3.0], dtype=plugrad.float64)
    fn = lambda a, b: F.binary_cross_entropy_with_logits(a, b, pos_weight=pw)  # noqa: E731
    assert gradcheck(fn, (x, y))
    assert gradgradcheck(fn, (x, y))


@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(device, log_target):
    logq = log_softmax_np(RNG.normal(size=(2, 3)))
    p = np.array([[0.2, 0.8, 0.0], [0.5, 0.25, 0.25]])
    target = np.log(np.where(p > 0, p, 1e-300)) if log_target else p
    out = F.kl_div(t(logq, device), t(target, device), reduction="batchmean",
                   log_target=log_target)
    terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1)) - logq), 0)
    assert out.item() == pytest.approx(terms.sum() / 2, rel=1e-9)


# ====================================================================== Modules vs PyTorch
def module_cases():
    w3 = np.array([0.3, 1.0, 2.0])
    return [
        ("MSELoss", {}, "real"), ("L1Loss", {"reduction": "sum"}, "real"),
        ("SmoothL1Loss", {"beta": 0.3}, "real"), ("HuberLoss", {"delta": 0.7}, "real"),
        ("CrossEntropyLoss", {"weight": w3, "label_smoothing": 0.1, "ignore_index": 1},
         "index"),
        ("CrossEntropyLoss", {"reduction": "none"}, "index"),
        ("CrossEntropyLoss", {"label_smoothing": 0.3}, "probs"),
        ("NLLLoss", {"weight": w3}, "index"),
        ("BCELoss", {"weight": w3}, "unit"),
        ("BCEWithLogitsLoss", {"pos_weight": w3, "reduction": "sum"}, "real"),
        ("KLDivLoss", {"reduction": "batchmean"}, "probs"),
    ]


@pytest.mark.parametrize("case", range(len(module_cases())))
def test_loss_modules_match_pytorch(device, case):
    torch = pytest.importorskip("torch")
    name, kw, kind = module_cases()[case]
    x = RNG.normal(size=(4, 3))
    if name == "BCELoss":
        x = 1 / (1 + np.exp(-x))
    if kind == "index":
        y = RNG.integers(0, 3, size=4)
    elif kind == "probs":
        y = np.exp(log_softmax_np(RNG.normal(size=(4, 3))))
    elif kind == "unit":
        y = RNG.uniform(size=(4, 3))
    else:
        y = RNG.normal(size=(4, 3))

    def build(lib, cls, to_tensor):
        args = {k: to_tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        return getattr(lib.nn, name)(**args) if lib is torch else getattr(cls, name)(**args)

    ours = build(None, L, lambda v: t(v, device))
    theirs = build(torch, None, torch.tensor)
    yt = idx(y, device) if kind == "index" else t(y, device)
    xp = t(x, device, grad=True)
    xt = torch.tensor(x, requires_grad=True)
    a, b = ours(xp, yt), theirs(xt, torch.tensor(y))
    np.testing.assert_allclose(host(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    a.sum().backward()
    b.sum().backward()
    np.testing.assert_allclose(host(xp.grad), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_loss_module_weight_is_a_buffer():
    loss = L.CrossEntropyLoss(weight=plugrad.tensor([1.0, 2.0]))
    assert dict(loss.named_buffers())["weight"] is loss.weight
    assert repr(loss) == "CrossEntropyLoss()"
    assert L.BCEWithLogitsLoss().pos_weight is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert L.MSELoss()(plugrad.ones(2), plugrad.zeros(2)).item() == 1.0
