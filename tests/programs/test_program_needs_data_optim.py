"""More names real programs use, compared with PyTorch: ``WeightedRandomSampler``,
``ChainDataset``, ``StackDataset``, ``nn.DataParallel``, ``optim.Adadelta``, ``torch.jit``
(script/trace run eagerly), ``torch.utils.checkpoint``."""
import numpy as np
import pytest
import torch

import plugrad
import plugrad.nn as nn
from plugrad.utils import data


def test_weighted_random_sampler_draws_by_weight():
    w = [0.1, 0.0, 0.6, 0.3]
    s = data.WeightedRandomSampler(w, 6000, generator=plugrad.Generator().manual_seed(0))
    draws = list(s)
    assert len(s) == len(draws) == 6000 and set(draws) <= {0, 2, 3}
    freq = np.bincount(draws, minlength=4) / 6000
    np.testing.assert_allclose(freq, w, atol=0.03)
    again = data.WeightedRandomSampler(w, 6000, generator=plugrad.Generator().manual_seed(0))
    assert list(again) == draws
    once = list(data.WeightedRandomSampler([1.0, 2.0, 3.0], 3, replacement=False))
    assert sorted(once) == [0, 1, 2] == sorted(torch.utils.data.WeightedRandomSampler(
        [1.0, 2.0, 3.0], 3, replacement=False))
    for bad in (0, -1, True):
        with pytest.raises(ValueError, match="num_samples should be a positive integer"):
            data.WeightedRandomSampler(w, bad)
        with pytest.raises(ValueError, match="num_samples should be a positive integer"):
            torch.utils.data.WeightedRandomSampler(w, bad)
    loader = data.DataLoader(data.TensorDataset(plugrad.arange(4)), batch_size=5,
                             sampler=data.WeightedRandomSampler([0, 0, 1, 0], 5))
    assert [b[0].tolist() for b in loader] == [[2] * 5]


class _Count(data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_chain_and_stack_datasets_like_pytorch():
    chain = data.ChainDataset([_Count(2), _Count(3)])
    assert list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    a, b = data.TensorDataset(plugrad.arange(3)), [10, 11, 12]
    st = data.StackDataset(a, b)
    assert len(st) == 3 and st[1][1] == 11 and st[1][0][0].item() == 1
    kw = data.StackDataset(x=b, y=b)
    assert kw[2] == {"x": 12, "y": 12}
    ta = torch.utils.data.StackDataset(x=b, y=b)
    assert ta[2] == kw[2]
    with pytest.raises(ValueError, match="Size mismatch"):
        data.StackDataset(b, [1])
    with pytest.raises(ValueError, match="Size mismatch"):
        torch.utils.data.StackDataset(b, [1])


def test_data_parallel_wraps_like_pytorch(device):
    inner = nn.Sequential(nn.Linear(3, 2), nn.Tanh()).to(device)
    dp = nn.DataParallel(inner)
    x = plugrad.randn(4, 3, device=device)
    assert dp.module is inner and plugrad.equal(dp(x), inner(x))
    tdp = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh()))
    assert list(dp.state_dict()) == list(tdp.state_dict())  # 'module.0.weight', ...
    dp(x).sum().backward()
    assert inner[0].weight.grad is not None
    assert plugrad.equal(nn.parallel.data_parallel(inner, x), inner(x))


@pytest.mark.parametrize("kw", [{}, {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1},
                                {"maximize": True, "eps": 1e-4}])
def test_adadelta_matches_pytorch(device, kw):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 4)).astype(np.float32)
    grads = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(5)]
    p = plugrad.tensor(w0, device=device).requires_grad_()
    tp = torch.tensor(w0, requires_grad=True)
    opt, topt = plugrad.optim.Adadelta([p], **kw), torch.optim.Adadelta([tp], **kw)
    for g in grads:
        p.grad, tp.grad = plugrad.tensor(g, device=device), torch.tensor(g)
        opt.step()
        topt.step()
    np.testing.assert_allclose(p.detach().numpy(force=True), tp.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    st, tst = opt.state_dict()["state"][0], topt.state_dict()["state"][0]
    np.testing.assert_allclose(st["acc_delta"].numpy(force=True), tst["acc_delta"].numpy(),
                               rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="Invalid rho value"):
        plugrad.optim.Adadelta([p], rho=1.5)


def test_jit_script_and_trace_run_eagerly():
    import plugrad.jit as jit
    m = nn.Linear(2, 2)
    x = plugrad.randn(3, 2)
    assert plugrad.equal(jit.script(m)(x), m(x)) and jit.trace(m, x) is m

    @jit.script
    def f(t):
        return t * 2

    @jit.ignore(drop=True)
    def g(t):
        return t + 1

    assert f(x).tolist() == (x * 2).tolist() and g(x).tolist() == (x + 1).tolist()
    assert not jit.is_scripting() and not jit.is_tracing() and isinstance(m, jit.ScriptModule)
    with pytest.raises(NotImplementedError, match="state_dict"):
        jit.save(m, "m.pt")


def test_checkpoint_gives_the_plain_gradients(device):
    from plugrad.utils.checkpoint import checkpoint, checkpoint_sequential
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1)).to(device)
    x = plugrad.randn(5, 3, device=device)
    checkpoint(seq, x, use_reentrant=False).sum().backward()
    want = seq[0].weight.grad.clone()
    seq.zero_grad()
    checkpoint_sequential(seq, 2, x, use_reentrant=False).sum().backward()
    assert plugrad.allclose(seq[0].weight.grad, want)
    seq.zero_grad()
    seq(x).sum().backward()
    assert plugrad.allclose(seq[0].weight.grad, want)
