"""The volumetric layers (conv3d, conv_transpose3d, 3-D pools, unpooling, channel shuffle),
grid sampling (affine_grid, grid_sample), gumbel_softmax and ctc_loss against PyTorch, on
every backend: values, returned indices and the gradients of every floating input."""
import warnings

import numpy as np
import pytest

import plugrad
import plugrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(153)


def _host(t):
    return np.asarray(t.tolist()) if isinstance(t, plugrad.Tensor) else t.detach().numpy()


def _flat(x):
    """The tensors of nested tuples (named tuples keep their fields checked by the caller)."""
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in _flat(item)]
    return [x]


def check(ours_fn, torch_fn, arrays, device, rtol=1e-7, grad=True):
    po = [plugrad.tensor(a, device=device).requires_grad_(grad and a.dtype.kind == "f")
          for a in arrays]
    pt = [torch.tensor(a).requires_grad_(grad and a.dtype.kind == "f") for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o, t = ours_fn(*po), torch_fn(*pt)
    o, t = _flat(o), _flat(t)
    assert len(o) == len(t)
    loss_o = loss_t = 0
    for i, (a, b) in enumerate(zip(o, t)):
        assert tuple(a.shape) == tuple(b.shape), (i, tuple(a.shape), tuple(b.shape))
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (i, a.dtype, b.dtype)
        if b.dtype.is_floating_point:
            np.testing.assert_allclose(_host(a), _host(b), rtol=rtol, atol=1e-10,
                                       err_msg=f"output {i}")
            if grad and b.requires_grad:
                w = RNG.uniform(0.5, 1.5, tuple(b.shape))
                loss_o = loss_o + (a * plugrad.tensor(w, device=device)).sum()
                loss_t = loss_t + (b * torch.tensor(w)).sum()
        else:
            np.testing.assert_array_equal(_host(a), _host(b), err_msg=f"output {i}")
    if isinstance(loss_t, int):
        return
    loss_o.backward()
    loss_t.backward()
    for i, (a, b) in enumerate(zip(po, pt)):
        if b.requires_grad:
            got = _host(a.grad) if a.grad is not None else np.zeros(tuple(b.shape))
            np.testing.assert_allclose(got, _host(b.grad), rtol=1e-6, atol=1e-9,
                                       err_msg=f"grad of input {i}")


X = RNG.standard_normal((2, 4, 5, 6, 7))
XE = X[:, :, :4, :6, :6].copy()
W = RNG.standard_normal((6, 2, 3, 2, 3))
WT = RNG.standard_normal((4, 3, 3, 2, 3))
B = RNG.standard_normal(6)

CASES = {
    "conv3d strided padded dilated groups": (
        lambda M, x, w, b: M.conv3d(x, w, b, (2, 1, 2), (1, 0, 1), (1, 2, 1), 2), [X, W, B]),
    "conv3d same": (lambda M, x, w: M.conv3d(x, w, padding="same"),
                    [X[:, :2], RNG.standard_normal((3, 2, 2, 3, 2))]),
    "conv3d unbatched": (lambda M, x, w: M.conv3d(x, w),
                         [X[0, :2], RNG.standard_normal((3, 2, 2, 3, 2))]),
    "conv_transpose3d": (lambda M, x, w, b: M.conv_transpose3d(x, w, b, (2, 1, 2), (1, 0, 1),
                                                               (1, 0, 1), 2, (1, 2, 1)),
                         [X, WT, B]),
    "conv_transpose3d plain": (lambda M, x, w: M.conv_transpose3d(x, w), [X[:, :, :3], WT]),
    "max_pool3d": (lambda M, x: M.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0),
                                             return_indices=True), [X]),
    "max_pool3d ceil dilation": (lambda M, x: M.max_pool3d(x, 2, 2, 0, (2, 1, 1), True, True),
                                 [X]),
    "avg_pool3d": (lambda M, x: M.avg_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0)), [X]),
    "avg_pool3d ceil no pad count": (lambda M, x: M.avg_pool3d(x, 3, 2, 1, True, False), [X]),
    "avg_pool3d divisor": (lambda M, x: M.avg_pool3d(x, 2, divisor_override=3), [X]),
    "lp_pool3d": (lambda M, x: M.lp_pool3d(x.abs() + 0.1, 2.0, 2), [X]),
    "adaptive_avg_pool3d": (lambda M, x: M.adaptive_avg_pool3d(x, (3, 4, None)), [X]),
    "adaptive_max_pool3d": (lambda M, x: M.adaptive_max_pool3d(x, (3, 4, 5), True), [X]),
    "adaptive_max_pool3d even": (lambda M, x: M.adaptive_max_pool3d(x, 2, True), [XE]),
    "with_indices": (lambda M, x: (M.max_pool1d_with_indices(x[:, :, 0, 0], 2),
                                   M.max_pool2d_with_indices(x[:, :, 0], 2),
                                   M.max_pool3d_with_indices(x, 2),
                                   M.adaptive_max_pool1d_with_indices(x[:, :, 0, 0], 4),
                                   M.adaptive_max_pool2d_with_indices(x[:, :, 0], 3),
                                   M.adaptive_max_pool3d_with_indices(x, 2)), [XE]),
    "channel_shuffle": (lambda M, x: M.channel_shuffle(x, 2), [X]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_volumetric(name, device):
    fn, arrays = CASES[name]
    check(lambda *a: fn(F, *a), lambda *a: fn(TF, *a), arrays, device)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool(nd, device):
    xs = [XE[:, :, 0, 0], XE[:, :, 0], XE][nd - 1]
    pool = [TF.max_pool1d, TF.max_pool2d, TF.max_pool3d][nd - 1]
    v, i = pool(torch.tensor(xs), 2, return_indices=True)
    name = f"max_unpool{nd}d"
    check(lambda v: getattr(F, name)(v, plugrad.tensor(i.numpy(), device=device), 2),
          lambda v: getattr(TF, name)(v, i, 2), [v.numpy()], device)
    size = [s + 1 for s in xs.shape[2:]]
    check(lambda v: getattr(F, name)(v, plugrad.tensor(i.numpy(), device=device), 2,
                                     output_size=size),
          lambda v: getattr(TF, name)(v, i, 2, output_size=size), [v.numpy()], device)


def test_modules_match_torch(device):
    """The layers carry PyTorch's parameter names and shapes and give its outputs."""
    pairs = [(plugrad.nn.Conv3d(4, 6, (3, 2, 3), stride=2, padding=1, groups=2),
              torch.nn.Conv3d(4, 6, (3, 2, 3), stride=2, padding=1, groups=2)),
             (plugrad.nn.ConvTranspose3d(4, 2, 3, stride=2, output_padding=1),
              torch.nn.ConvTranspose3d(4, 2, 3, stride=2, output_padding=1)),
             (plugrad.nn.BatchNorm3d(4), torch.nn.BatchNorm3d(4))]
    x = RNG.standard_normal((2, 4, 5, 6, 7)).astype(np.float32)
    for ours, theirs in pairs:
        state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
        assert set(state) == set(ours.state_dict())
        ours.load_state_dict({k: plugrad.tensor(v) for k, v in state.items()})
        ours.to(device)
        got = ours(plugrad.tensor(x, device=device))
        want = theirs(torch.tensor(x))
        np.testing.assert_allclose(_host(got), _host(want), rtol=1e-4, atol=1e-5)
    for ours, theirs in [(plugrad.nn.MaxPool3d(2, return_indices=True),
                          torch.nn.MaxPool3d(2, return_indices=True)),
                         (plugrad.nn.AvgPool3d(2, 1), torch.nn.AvgPool3d(2, 1)),
                         (plugrad.nn.LPPool3d(2, 2), torch.nn.LPPool3d(2, 2)),
                         (plugrad.nn.AdaptiveAvgPool3d(2), torch.nn.AdaptiveAvgPool3d(2)),
                         (plugrad.nn.AdaptiveMaxPool3d(3), torch.nn.AdaptiveMaxPool3d(3)),
                         (plugrad.nn.ChannelShuffle(2), torch.nn.ChannelShuffle(2))]:
        xa = np.abs(x) + 0.1
        check(lambda t: ours(t), lambda t: theirs(t), [xa], device, rtol=1e-5)
        assert repr(ours) == repr(theirs)
    v, i = torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(x[:, :, 0, :6, :6]))
    got = plugrad.nn.MaxUnpool2d(2)(plugrad.tensor(v.numpy(), device=device),
                                    plugrad.tensor(i.numpy(), device=device))
    np.testing.assert_array_equal(_host(got), torch.nn.MaxUnpool2d(2)(v, i).numpy())


# ---------------------------------------------------------------------- sampling
TH2, TH3 = RNG.standard_normal((2, 2, 3)), RNG.standard_normal((2, 3, 4))
IMG, GRID = RNG.standard_normal((2, 3, 5, 6)), RNG.uniform(-1.3, 1.3, (2, 4, 3, 2))
VOL, GRID3 = RNG.standard_normal((2, 2, 4, 5, 3)), RNG.uniform(-1.2, 1.2, (2, 3, 2, 4, 3))


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(align, device):
    check(lambda t: F.affine_grid(t, (2, 3, 4, 5), align),
          lambda t: TF.affine_grid(t, (2, 3, 4, 5), align), [TH2], device)
    check(lambda t: F.affine_grid(t, (2, 3, 2, 4, 5), align),
          lambda t: TF.affine_grid(t, (2, 3, 2, 4, 5), align), [TH3], device)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample(mode, padding, align, device):
    check(lambda x, g: F.grid_sample(x, g, mode, padding, align),
          lambda x, g: TF.grid_sample(x, g, mode, padding, align), [IMG, GRID], device)
    check(lambda x, g: F.grid_sample(x, g, mode, padding, align),
          lambda x, g: TF.grid_sample(x, g, mode, padding, align), [VOL, GRID3], device)


def test_grid_sample_bicubic_refused():
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.grid_sample(plugrad.zeros(1, 1, 2, 2), plugrad.zeros(1, 1, 1, 2), "bicubic")


def test_gumbel_softmax():
    plugrad.manual_seed(0)
    logits = plugrad.tensor(RNG.standard_normal((500, 4)), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(_host(soft.sum(-1)), np.ones(500), rtol=1e-12)
    hard = F.gumbel_softmax(logits, hard=True)
    assert set(np.unique(_host(hard))) == {0.0, 1.0}
    np.testing.assert_array_equal(_host(hard.sum(-1)), np.ones(500))
    (hard * plugrad.arange(4.0, dtype=plugrad.float64)).sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0
    # the samples follow softmax(logits): the hard counts per class of one row's logits
    row = plugrad.tensor([[2.0, 0.0, -1.0]]).expand(4000, 3)
    freq = _host(F.gumbel_softmax(row, hard=True).mean(0))
    want = np.exp([2.0, 0.0, -1.0]) / np.exp([2.0, 0.0, -1.0]).sum()
    np.testing.assert_allclose(freq, want, atol=0.03)


# ---------------------------------------------------------------------- CTC
T_, N_, C_, S_ = 12, 3, 5, 4
LOGITS = RNG.standard_normal((T_, N_, C_))
TARGETS = RNG.integers(1, C_, (N_, S_))
TARGETS[0, 1] = TARGETS[0, 2]  # a repeated label needs a blank between
IN_LEN, TG_LEN = [12, 10, 7], [4, 2, 3]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss(reduction, device):
    """Through log_softmax, as CTC is used (PyTorch's gradient w.r.t. log_probs itself is
    not the plain derivative: see ctc_loss's docstring)."""
    check(lambda z: F.ctc_loss(z.log_softmax(2), plugrad.tensor(TARGETS, device=device),
                               IN_LEN, TG_LEN, 0, reduction),
          lambda z: TF.ctc_loss(z.log_softmax(2), torch.tensor(TARGETS), IN_LEN, TG_LEN, 0,
                                reduction), [LOGITS], device, rtol=1e-6)


def test_ctc_loss_forms(device):
    cat = np.concatenate([TARGETS[i, :TG_LEN[i]] for i in range(N_)])
    check(lambda z: F.ctc_loss(z.log_softmax(2), plugrad.tensor(cat, device=device),
                               plugrad.tensor(IN_LEN), plugrad.tensor(TG_LEN), 0, "sum"),
          lambda z: TF.ctc_loss(z.log_softmax(2), torch.tensor(cat), torch.tensor(IN_LEN),
                                torch.tensor(TG_LEN), 0, "sum"), [LOGITS], device, rtol=1e-6)
    ones = np.ones_like(TARGETS)  # 4 repeated labels cannot fit in 3 steps: infinite loss
    check(lambda z: F.ctc_loss(z.log_softmax(2), plugrad.tensor(ones, device=device), [3] * 3,
                               [4] * 3, 0, "none", True),
          lambda z: TF.ctc_loss(z.log_softmax(2), torch.tensor(ones), [3] * 3, [4] * 3, 0,
                                "none", True), [LOGITS[:3]], device, rtol=1e-6)
    check(lambda z: F.ctc_loss(z.log_softmax(2), plugrad.tensor(TARGETS - 1, device=device),
                               IN_LEN, TG_LEN, 4, "mean"),
          lambda z: TF.ctc_loss(z.log_softmax(2), torch.tensor(TARGETS - 1), IN_LEN, TG_LEN, 4,
                                "mean"), [LOGITS], device, rtol=1e-6)
    loss = plugrad.nn.CTCLoss(blank=0, reduction="sum")
    want = torch.nn.CTCLoss(blank=0, reduction="sum")
    check(lambda z: loss(z.log_softmax(2), plugrad.tensor(TARGETS, device=device), IN_LEN,
                         TG_LEN),
          lambda z: want(z.log_softmax(2), torch.tensor(TARGETS), IN_LEN, TG_LEN), [LOGITS],
          device, rtol=1e-6)
