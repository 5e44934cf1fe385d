"""What the third round of public programs needed (docs/programs.md: MorvanZhou's
tutorial, minGPT, char-rnn, the PyTorch NLP tutorials), compared with PyTorch."""
import numpy as np
import pytest
import torch

import plugrad

DEVICES = ["cpu", "ref"]


def _raises_like_torch(pg_call, torch_call):
    """Both raise; plugrad's error is of PyTorch's type with PyTorch's words in it."""
    with pytest.raises(Exception) as want:
        torch_call()
    with pytest.raises(type(want.value)) as got:
        pg_call()
    return str(want.value), str(got.value)


@pytest.mark.parametrize("device", DEVICES)
def test_cat_of_zero_dim_tensors_is_refused_like_pytorch(device):
    """The BiLSTM-CRF tutorial's old ``torch.cat`` of 0-d scores: PyTorch refuses it with a
    RuntimeError naming the position (plugrad's backend used to fail in NumPy)."""
    v = [plugrad.tensor(1.0, device=device), plugrad.tensor([2.0], device=device)]
    w = [torch.tensor(1.0), torch.tensor([2.0])]
    for order in ([0, 1], [1, 0]):
        want, got = _raises_like_torch(lambda: plugrad.cat([v[i] for i in order]),
                                       lambda: torch.cat([w[i] for i in order]))
        assert want in got, (want, got)
    # after .view(1) (the tutorial's fix) both join
    out = plugrad.cat([t.view(1) for t in v])
    np.testing.assert_array_equal(out.cpu().numpy(), torch.cat([t.view(1) for t in w]).numpy())


TARGET_SHAPES = [((1, 5), ()), ((3, 5), ()), ((3, 5), (3, 1)), ((3, 5), (2,)),
                 ((3, 5, 2), (3,)), ((3, 5, 2), ()), ((3, 5, 2), (3, 2, 1)),
                 ((3, 5, 2), (2, 3))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("xs,ts", TARGET_SHAPES)
def test_class_target_of_the_wrong_shape_fails_like_pytorch(device, name, xs, ts):
    """practical-pytorch's classifiers pass a 0-d target with a (1, C) input: PyTorch says
    ``ValueError: Expected input batch_size (1) to match target batch_size (0).``; the
    batch sizes are compared before the rank, as there."""
    x = np.zeros(xs, np.float32)
    tgt = np.zeros(ts, np.int64)
    pg_f, torch_f = getattr(plugrad.nn.functional, name), getattr(torch.nn.functional, name)
    want, got = _raises_like_torch(
        lambda: pg_f(plugrad.tensor(x, device=device), plugrad.tensor(tgt, device=device)),
        lambda: torch_f(torch.tensor(x), torch.tensor(tgt)))
    assert want in got, (want, got)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_unbatched_input_takes_a_one_element_target(device, name, reduction):
    """``criterion(output.squeeze(), target)`` with batch 1: a (C,) input and a (1,) target
    is one sample in PyTorch (a 0-d loss), as a 0-d target is."""
    x = np.array([0.5, -1.0, 2.0, 0.1], np.float32)
    pg_f, torch_f = getattr(plugrad.nn.functional, name), getattr(torch.nn.functional, name)
    px = plugrad.tensor(x, device=device, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    got = pg_f(px, plugrad.tensor([2], device=device), reduction=reduction)
    want = torch_f(tx, torch.tensor([2]), reduction=reduction)
    assert tuple(got.shape) == tuple(want.shape) == ()
    assert got.grad_fn.name() == want.grad_fn.name()
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6)
    # PyTorch 2.13's own backward of this case fails (a size mismatch of input and target);
    # plugrad's gradient is that of the 0-d target
    got.backward()
    torch_f(tx, torch.tensor(2), reduction=reduction).backward()
    np.testing.assert_allclose(px.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("target", [[1, 2], [[1]]])
def test_unbatched_input_refuses_other_targets_like_pytorch(device, target):
    x = np.zeros(4, np.float32)
    for name in ("cross_entropy", "nll_loss"):
        pg_f, torch_f = getattr(plugrad.nn.functional, name), getattr(torch.nn.functional, name)
        want, got = _raises_like_torch(
            lambda: pg_f(plugrad.tensor(x, device=device), plugrad.tensor(target, device=device)),
            lambda: torch_f(torch.tensor(x), torch.tensor(target)))
        assert want in got, (want, got)


def test_linear_node_walk_matches_pytorch():
    """The blitz tutorial walks ``loss.grad_fn.next_functions``: a 2-D linear's node shows
    PyTorch's inputs in addmm's order (bias, input, ``TBackward0`` of the weight)."""
    torch = pytest.importorskip("torch")

    def walk(T):
        lin, head = T.nn.Linear(3, 2), T.nn.Linear(2, 1, bias=False)
        out = head(T.relu(lin(T.ones(4, 3))))
        loss = T.nn.MSELoss()(out, T.zeros(4, 1))

        def names(node):
            return [None if n is None else n.name() for n, _ in node.next_functions]

        mm = loss.grad_fn.next_functions[0][0]
        addmm = mm.next_functions[0][0].next_functions[0][0]
        return [loss.grad_fn.name(), names(loss.grad_fn), mm.name(), names(mm), addmm.name(),
                names(addmm), names(addmm.next_functions[2][0])]

    assert walk(plugrad) == walk(torch)
