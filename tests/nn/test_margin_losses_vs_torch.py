"""Likelihood, margin and embedding losses against PyTorch: every reduction, values and
gradients (hinges at their kinks too), modules and errors, on every built-in backend."""
import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F

from .torch_compare import compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(21)
REDUCTIONS = ["mean", "sum", "none"]


def _signs(*shape):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_poisson_nll(device, reduction):
    x, t = RNG.uniform(0.1, 2, (3, 4)), RNG.integers(0, 5, (3, 4)).astype(np.float64)
    for kw in ({}, {"log_input": False}, {"full": True}, {"log_input": False, "full": True}):
        compare(F.poisson_nll_loss, TF.poisson_nll_loss, (x, t), device, grads=[0],
                kwargs={"reduction": reduction, **kw})


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("var_shape", [(3, 4), (3,), (3, 1)])
def test_gaussian_nll(device, reduction, var_shape):
    x, t = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    var = RNG.uniform(0, 2, var_shape)
    var.flat[0] = 1e-9  # below eps: clamped outside autograd, as PyTorch's
    compare(F.gaussian_nll_loss, TF.gaussian_nll_loss, (x, t, var), device,
            kwargs={"reduction": reduction, "full": True})


def test_gaussian_nll_errors():
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(plugrad.ones(2), plugrad.ones(2), plugrad.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="incorrect size"):
        F.gaussian_nll_loss(plugrad.ones(2, 3), plugrad.ones(2, 3), plugrad.ones(4))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_ranking(device, reduction):
    a = np.array([0.0, 1.0, 2.0, -1.0, 0.5])
    b = np.array([0.5, 1.0, 0.0, 1.0, 0.0])  # margin 0.5: the hinge's kink at a - b = 0.5
    compare(F.margin_ranking_loss, TF.margin_ranking_loss,
            (a, b, np.array([1.0, -1.0, 1.0, -1.0, 1.0])), device, grads=[0, 1],
            kwargs={"margin": 0.5, "reduction": reduction})
    with pytest.raises(RuntimeError, match="same dimension"):
        F.margin_ranking_loss(plugrad.ones(2), plugrad.ones(2), plugrad.ones(1, 2))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_hinge_embedding(device, reduction):
    x = np.array([[0.0, 1.0, 2.0], [-1.0, 0.5, 1.5]])
    compare(F.hinge_embedding_loss, TF.hinge_embedding_loss, (x, _signs(2, 3)), device,
            grads=[0], kwargs={"margin": 1.0, "reduction": reduction})


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin(device, reduction):
    compare(F.soft_margin_loss, TF.soft_margin_loss,
            (RNG.standard_normal((3, 4)), _signs(3, 4)), device, grads=[0],
            kwargs={"reduction": reduction})


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cosine_embedding(device, reduction):
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    compare(F.cosine_embedding_loss, TF.cosine_embedding_loss, (a, b, _signs(4)), device,
            grads=[0, 1], kwargs={"margin": 0.1, "reduction": reduction})
    compare(F.cosine_embedding_loss, TF.cosine_embedding_loss, (a[0], b[0], np.array(-1.0)),
            device, grads=[0, 1], kwargs={"reduction": reduction})
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input"):
        F.cosine_embedding_loss(plugrad.ones(3), plugrad.ones(3), plugrad.ones(3))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kw", [{}, {"p": 1.0, "swap": True, "margin": 0.5}])
def test_triplet_margin(device, reduction, kw):
    a, p, n = (RNG.standard_normal((4, 3)) for _ in range(3))
    compare(F.triplet_margin_loss, TF.triplet_margin_loss, (a, p, n), device,
            kwargs={"reduction": reduction, **kw})
    compare(lambda *t, **k: F.triplet_margin_with_distance_loss(
                *t, distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y), **k),
            lambda *t, **k: TF.triplet_margin_with_distance_loss(
                *t, distance_function=lambda x, y: 1.0 - TF.cosine_similarity(x, y), **k),
            (a, p, n), device, kwargs={"reduction": reduction, "swap": True})
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_loss(plugrad.ones(2), plugrad.ones(2), plugrad.ones(2), margin=0)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin(device, reduction, p):
    x = np.array([[0.1, 0.2, 0.4, 0.8], [1.0, 0.0, 0.5, 1.0], [0.3, -0.2, 0.1, 0.0]])
    t = np.array([3, 0, 1])  # row 1: x[t] - x[3] = 0 < margin, x[t] - x[2] = margin (kink)
    compare(F.multi_margin_loss, TF.multi_margin_loss, (x, t), device,
            kwargs={"reduction": reduction, "p": p, "margin": 0.5})
    compare(F.multi_margin_loss, TF.multi_margin_loss, (x, t, 1, 1.0, RNG.uniform(0.5, 2, 4)),
            device, grads=[0], kwargs={"reduction": reduction})
    compare(F.multi_margin_loss, TF.multi_margin_loss, (x[0], np.array([2])), device,
            kwargs={"reduction": reduction})
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(plugrad.ones(2, 3), plugrad.tensor([0, 3]))
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        F.multi_margin_loss(plugrad.ones(2, 3), plugrad.tensor([0, 1]), p=3)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin(device, reduction):
    x = np.array([[0.1, 0.2, 0.4, 0.8], [1.0, 0.0, 0.5, 1.0], [0.3, -0.2, 0.1, 0.0]])
    t = np.array([[3, 0, -1, 1], [0, 0, 2, -1], [-1, 1, 2, 3]])  # repeats, empty, -1 stops
    compare(F.multilabel_margin_loss, TF.multilabel_margin_loss, (x, t), device,
            kwargs={"reduction": reduction})
    compare(F.multilabel_margin_loss, TF.multilabel_margin_loss, (x[0], t[0]), device,
            kwargs={"reduction": reduction})


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_soft_margin(device, reduction):
    x, t = RNG.standard_normal((3, 4)), (RNG.random((3, 4)) < 0.5).astype(np.float64)
    compare(F.multilabel_soft_margin_loss, TF.multilabel_soft_margin_loss, (x, t), device,
            grads=[0], kwargs={"reduction": reduction})
    compare(F.multilabel_soft_margin_loss, TF.multilabel_soft_margin_loss,
            (x, t, RNG.uniform(0.5, 2, 4)), device, grads=[0], kwargs={"reduction": reduction})


MODULES = [
    ("PoissonNLLLoss", {"full": True}, lambda: (RNG.uniform(0.1, 2, (3, 4)),
                                                RNG.integers(0, 4, (3, 4)) * 1.0)),
    ("GaussianNLLLoss", {}, lambda: (RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2)),
                                     RNG.uniform(0.5, 1, (3, 2)))),
    ("MarginRankingLoss", {"margin": 0.2}, lambda: (RNG.standard_normal(4),
                                                    RNG.standard_normal(4), _signs(4))),
    ("HingeEmbeddingLoss", {}, lambda: (RNG.standard_normal(4), _signs(4))),
    ("SoftMarginLoss", {"reduction": "sum"}, lambda: (RNG.standard_normal(4), _signs(4))),
    ("CosineEmbeddingLoss", {}, lambda: (RNG.standard_normal((2, 3)),
                                         RNG.standard_normal((2, 3)), _signs(2))),
    ("TripletMarginLoss", {"swap": True}, lambda: tuple(RNG.standard_normal((2, 3))
                                                        for _ in range(3))),
    ("TripletMarginWithDistanceLoss", {}, lambda: tuple(RNG.standard_normal((2, 3))
                                                        for _ in range(3))),
    ("MultiMarginLoss", {"p": 2}, lambda: (RNG.standard_normal((3, 4)), np.array([0, 3, 1]))),
    ("MultiLabelMarginLoss", {}, lambda: (RNG.standard_normal((2, 4)),
                                          np.array([[1, 2, -1, 0], [3, -1, 0, 0]]))),
    ("MultiLabelSoftMarginLoss", {}, lambda: (RNG.standard_normal((2, 4)),
                                              (RNG.random((2, 4)) < 0.5) * 1.0)),
]


@pytest.mark.parametrize("name,kw,inputs", MODULES, ids=[m[0] for m in MODULES])
def test_loss_modules(device, name, kw, inputs):
    ours, theirs = getattr(nn, name)(**kw), getattr(torch.nn, name)(**kw)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    args = inputs()
    floats = [i for i, a in enumerate(args) if a.dtype.kind == "f"]
    grads = floats[:1] if name in ("PoissonNLLLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
                                   "MultiLabelSoftMarginLoss") else None
    if name in ("MarginRankingLoss", "CosineEmbeddingLoss"):
        grads = [0, 1]
    compare(ours, theirs, args, device, grads=grads)
