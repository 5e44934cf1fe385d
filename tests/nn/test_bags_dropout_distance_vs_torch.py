"""Channel-wise and alpha dropout, embedding bags, bilinear layers and distances against
PyTorch (values, gradients, warnings, errors, module state dicts) on every backend."""
import warnings

import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F

from .helpers import host
from .torch_compare import compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(31)


# ---------------------------------------------------------------------- dropout
@pytest.mark.parametrize("name,shape", [("dropout1d", (4, 6, 5)), ("dropout1d", (6, 5)),
                                        ("dropout2d", (3, 6, 2, 2)),
                                        ("dropout3d", (2, 6, 2, 2, 1)),
                                        ("dropout3d", (6, 2, 2, 1))])
def test_channel_dropout_zeroes_whole_channels(device, name, shape):
    x = plugrad.ones(*shape, dtype=plugrad.float64, device=device, requires_grad=True)
    y = getattr(F, name)(x, 0.5)
    vals = host(y)
    batched = len(shape) == {"dropout1d": 3, "dropout2d": 4, "dropout3d": 5}[name]
    flat = vals.reshape(shape[0] * shape[1] if batched else shape[0], -1)
    per_channel = {tuple(np.unique(row)) for row in flat}
    assert per_channel <= {(0.0,), (2.0,)} and len(per_channel) == 2
    y.sum().backward()
    np.testing.assert_allclose(host(x.grad), vals)  # the gradient is the scaled mask
    same = getattr(F, name)(x, 0.5, training=False)
    assert same is x if batched else host(same).tolist() == host(x).tolist()


def test_dropout_rank_checks_as_torch():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(plugrad.ones(2, 3, 4, 5))
    for fn, shape in ((F.dropout2d, (2, 3)), (F.dropout3d, (2, 3, 4))):
        with pytest.warns(UserWarning, match="which is deprecated"):
            fn(plugrad.ones(*shape))
    with pytest.warns(UserWarning, match="channel-wise 1D dropout behavior"):
        F.dropout2d(plugrad.ones(2, 3, 4))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout2d(plugrad.ones(2, 3, 4, 4), 1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout2d(-0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.dropout2d(plugrad.ones(2, 3, 4, 4))


def test_dropout_p_one_and_inplace(device):
    x = plugrad.ones(2, 3, 4, device=device)
    assert host(F.dropout1d(x, 1.0)).sum() == 0
    y = plugrad.ones(2, 3, 4, device=device)
    assert F.dropout1d(y, 0.5, inplace=True) is y
    assert set(np.unique(host(y))) <= {0.0, 2.0}


def test_alpha_dropout_statistics(device):
    """Standard-normal inputs keep mean 0 and variance 1 (SELU's fixed point)."""
    x = plugrad.tensor(RNG.standard_normal(20000), device="cpu").to(device)
    y = host(F.alpha_dropout(x, 0.3, training=True))
    assert abs(y.mean()) < 0.05 and abs(y.var() - 1) < 0.08
    assert F.alpha_dropout(x, 0.3) is x  # training=False by default, as in PyTorch
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * 0.3 + 1) * 0.7)
    dropped = np.isclose(y, alpha * a * (0.3 - 1))  # dropped values sit at one point
    assert 0.27 < dropped.mean() < 0.33
    f = host(F.feature_alpha_dropout(plugrad.ones(50, 4, 3, device=device), 0.5, training=True))
    assert all(len(np.unique(f[i, j])) == 1 for i in range(50) for j in range(4))


@pytest.mark.parametrize("cls,shape", [("Dropout1d", (2, 3, 4)), ("Dropout2d", (2, 3, 2, 2)),
                                       ("Dropout3d", (1, 3, 2, 2, 2)), ("AlphaDropout", (5,)),
                                       ("FeatureAlphaDropout", (2, 3, 4))])
def test_dropout_modules(cls, shape):
    ours, theirs = getattr(nn, cls)(0.2), getattr(torch.nn, cls)(0.2)
    assert repr(ours) == repr(theirs)
    x = plugrad.randn(*shape)
    assert ours.eval()(x) is x
    assert ours.train()(x).shape == x.shape


# ---------------------------------------------------------------------- embedding_bag
W = RNG.standard_normal((6, 3))
BAGS = [
    dict(input=np.array([[0, 2, 1], [4, 4, 5]])),
    dict(input=np.array([1, 2, 4, 5, 4, 3, 2, 0]), offsets=np.array([0, 2, 2, 5])),
    dict(input=np.array([1, 2, 4, 5, 4, 3]), offsets=np.array([0, 1, 4, 6]),
         include_last_offset=True),
    dict(input=np.array([[0, 2, 1], [4, 2, 2]]), padding_idx=2),
]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("bag", range(len(BAGS)))
def test_embedding_bag(device, mode, bag):
    kw = dict(BAGS[bag])
    args = (kw.pop("input"), W.copy(), kw.pop("offsets", None))
    compare(F.embedding_bag, TF.embedding_bag, args, device, grads=[1],
            kwargs={"mode": mode, **kw})


def test_embedding_bag_per_sample_weights(device):
    x, off = np.array([1, 2, 4, 5, 4]), np.array([0, 2])
    compare(F.embedding_bag, TF.embedding_bag, (x, W.copy(), off), device,
            kwargs={"mode": "sum", "per_sample_weights": None})
    ours = plugrad.tensor(W, dtype=plugrad.float64, device=device, requires_grad=True)
    psw = plugrad.tensor(RNG.standard_normal(5), dtype=plugrad.float64, device=device,
                         requires_grad=True)
    y = F.embedding_bag(plugrad.tensor(x, device=device), ours, plugrad.tensor(off, device=device),
                        mode="sum", per_sample_weights=psw)
    tw = torch.from_numpy(W.copy()).requires_grad_()
    tp = torch.from_numpy(host(psw)).requires_grad_()
    t = TF.embedding_bag(torch.from_numpy(x), tw, torch.from_numpy(off), mode="sum",
                         per_sample_weights=tp)
    np.testing.assert_allclose(host(y), t.detach().numpy(), atol=1e-12)
    y.sum().backward()
    t.sum().backward()
    np.testing.assert_allclose(host(ours.grad), tw.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(host(psw.grad), tp.grad.numpy(), atol=1e-12)
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(plugrad.tensor(x), plugrad.tensor(W), plugrad.tensor(off),
                        mode="mean", per_sample_weights=plugrad.ones(5))


def test_embedding_bag_errors():
    w = plugrad.tensor(W)
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(plugrad.tensor([[0, 1]]), w, plugrad.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(plugrad.tensor([0, 1]), w)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(plugrad.tensor([[0, 1]]), w, mode="min")
    with pytest.raises(IndexError, match="out of range"):
        F.embedding_bag(plugrad.tensor([[0, 9]]), w)


def test_embedding_bag_module(device):
    ours = nn.EmbeddingBag(6, 3, mode="max", padding_idx=1)
    theirs = torch.nn.EmbeddingBag(6, 3, mode="max", padding_idx=1)
    assert repr(ours) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    assert not host(ours.weight)[1].any()
    pre = nn.EmbeddingBag.from_pretrained(plugrad.tensor(W), mode="sum")
    assert not pre.weight.requires_grad and pre.mode == "sum"
    tpre = torch.nn.EmbeddingBag.from_pretrained(torch.from_numpy(W), mode="sum")
    pre.to(device)
    x = np.array([[0, 1, 5], [2, 2, 3]])
    np.testing.assert_allclose(host(pre(plugrad.tensor(x, device=device))),
                               tpre(torch.from_numpy(x)).numpy(), atol=1e-12)


# ---------------------------------------------------------------------- bilinear, distances
def test_bilinear(device):
    ours, theirs = nn.Bilinear(3, 2, 4), torch.nn.Bilinear(3, 2, 4)
    assert repr(ours) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    compare(F.bilinear, TF.bilinear, (RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2)),
                                      RNG.standard_normal((4, 3, 2)), RNG.standard_normal(4)),
            device)


@pytest.mark.parametrize("shapes,dim", [(((3, 4), (3, 4)), 1), (((2, 3, 4), (1, 3, 4)), -1),
                                        (((4,), (2, 4)), 1)])
def test_cosine_similarity(device, shapes, dim):
    a, b = (RNG.standard_normal(s) for s in shapes)
    a.flat[:a.shape[-1]] = 0.0  # a zero row: the norm is clamped to eps, outside autograd
    compare(F.cosine_similarity, TF.cosine_similarity, (a, b), device, kwargs={"dim": dim})
    compare(plugrad.cosine_similarity, torch.cosine_similarity, (a, b), device,
            kwargs={"dim": dim, "eps": 0.5})
    ours, theirs = nn.CosineSimilarity(dim), torch.nn.CosineSimilarity(dim)
    compare(ours, theirs, (a, b), device)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
def test_pairwise_distance(device, p):
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    compare(F.pairwise_distance, TF.pairwise_distance, (a, b), device, kwargs={"p": p})
    compare(F.pairwise_distance, TF.pairwise_distance, (a, b[0]), device,
            kwargs={"p": p, "keepdim": True, "eps": 0.0})
    compare(nn.PairwiseDistance(p), torch.nn.PairwiseDistance(p), (a, b), device)


@pytest.mark.parametrize("p", [2.0, 1.0, 0.5, 3.0, 0.0, float("inf")])
@pytest.mark.parametrize("shapes", [((4, 3), (5, 3)), ((2, 3, 2), (1, 4, 2))])
def test_cdist(device, p, shapes):
    a, b = (RNG.standard_normal(s) for s in shapes)
    b[(0,) * (b.ndim - 1)] = a[(0,) * (a.ndim - 1)]  # a zero distance: gradient 0 there, as PyTorch's
    compare(plugrad.cdist, torch.cdist, (a, b), device, kwargs={"p": p})


def test_cdist_matrix_product_mode(device):
    a, b = RNG.standard_normal((30, 3)), RNG.standard_normal((4, 3))
    compare(plugrad.cdist, torch.cdist, (a, b), device, atol=1e-9)
    compare(plugrad.cdist, torch.cdist, (a[:5], b), device, atol=1e-9,
            kwargs={"compute_mode": "use_mm_for_euclid_dist"})
    compare(plugrad.cdist, torch.cdist, (a, b), device,
            kwargs={"compute_mode": "donot_use_mm_for_euclid_dist"})
    with pytest.raises(ValueError, match="not a valid value for compute_mode"):
        plugrad.cdist(plugrad.ones(2, 2), plugrad.ones(2, 2), compute_mode="fast")
    with pytest.raises(plugrad.ShapeError, match="same number of columns"):
        plugrad.cdist(plugrad.ones(2, 2), plugrad.ones(2, 3))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0])
def test_pdist(device, p):
    x = RNG.standard_normal((4, 3))
    x[3] = x[1]  # a zero distance
    compare(F.pdist, TF.pdist, (x,), device, kwargs={"p": p})
    compare(plugrad.pdist, torch.pdist, (x,), device, kwargs={"p": p})


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_max_norm_renormalises_the_rows_used(device, norm_type):
    """``max_norm``: the rows looked up are rescaled in place first (PyTorch's
    ``embedding_renorm_``), for ``embedding`` and ``embedding_bag`` alike."""
    w = RNG.standard_normal((6, 3)) * 2
    x = np.array([[0, 2, 2], [5, 1, 0]])
    for ours_fn, torch_fn, kw in ((F.embedding, TF.embedding, {}),
                                  (F.embedding_bag, TF.embedding_bag, {"mode": "sum"})):
        ours = plugrad.tensor(w, dtype=plugrad.float64, device=device, requires_grad=True)
        theirs = torch.from_numpy(w.copy()).requires_grad_()
        y = ours_fn(plugrad.tensor(x, device=device), ours, max_norm=1.5, norm_type=norm_type,
                    **kw)
        t = torch_fn(torch.from_numpy(x), theirs, max_norm=1.5, norm_type=norm_type, **kw)
        np.testing.assert_allclose(host(y), t.detach().numpy(), atol=1e-12)
        np.testing.assert_allclose(host(ours), theirs.detach().numpy(), atol=1e-12)
        y.sum().backward()
        t.sum().backward()
        np.testing.assert_allclose(host(ours.grad), theirs.grad.numpy(), atol=1e-12)
    m, tm = nn.Embedding(6, 3, max_norm=1.0), torch.nn.Embedding(6, 3, max_norm=1.0)
    assert repr(m) == repr(tm)
