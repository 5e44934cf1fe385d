"""RNN, LSTM, GRU and their cells against PyTorch: state dicts both ways, outputs, final
states and the gradients of inputs, initial states and every parameter (float64)."""
import itertools
import warnings

import numpy as np
import pytest

import plugrad
import plugrad.nn as nn

from .helpers import host

torch = pytest.importorskip("torch")
tnn = torch.nn

RNG = np.random.default_rng(7)
MODES = {  # name: (our class, torch class, extra kwargs)
    "rnn_tanh": (nn.RNN, tnn.RNN, {}),
    "rnn_relu": (nn.RNN, tnn.RNN, {"nonlinearity": "relu"}),
    "lstm": (nn.LSTM, tnn.LSTM, {}),
    "lstm_proj": (nn.LSTM, tnn.LSTM, {"proj_size": 2}),
    "gru": (nn.GRU, tnn.GRU, {}),
}


def load_torch_into_ours(theirs, ours):
    ours.load_state_dict({k: plugrad.tensor(v.detach().numpy(), device=ours_device(ours))
                          for k, v in theirs.state_dict().items()})


def load_ours_into_torch(ours, theirs):
    theirs.load_state_dict({k: torch.from_numpy(host(v).astype(np.float64))
                            for k, v in ours.state_dict().items()})


def ours_device(module):
    return next(iter(module.parameters())).device


def pair(mode, device="cpu", **kw):
    """A torch module and ours with the same config and torch's weights (float64)."""
    ours_cls, torch_cls, extra = MODES[mode]
    kw = {**extra, **kw}
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropout with one layer
        theirs = torch_cls(**kw).double()
        ours = ours_cls(**kw).double().to(device)
    load_torch_into_ours(theirs, ours)
    return ours, theirs


def ours_t(a, device, grad=True):
    return plugrad.tensor(a, dtype=plugrad.float64, device=device, requires_grad=grad)


def theirs_t(a, grad=True):
    return torch.tensor(a, dtype=torch.float64, requires_grad=grad)


def flat(out):
    """(output, h_n) or (output, (h_n, c_n)) as a flat list."""
    o, h = out
    return [o, *h] if isinstance(h, tuple) else [o, h]


def compare(ours, theirs, ours_outs, theirs_outs, leaves, atol=1e-10):
    """Outputs equal; then the same random output gradients give the same leaf and
    parameter gradients."""
    assert len(ours_outs) == len(theirs_outs)
    for a, b in zip(ours_outs, theirs_outs):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(host(a), b.detach().numpy(), atol=atol, rtol=1e-8)
    # one scalar loss: sum(out_i * seed_i) (what a training step differentiates)
    seeds = [RNG.standard_normal(tuple(b.shape)) for b in theirs_outs]
    sum(((a * ours_t(s, a.device, False)).sum() for a, s in zip(ours_outs, seeds))).backward()
    sum(((b * theirs_t(s, False)).sum() for b, s in zip(theirs_outs, seeds))).backward()
    for a, b in leaves:
        np.testing.assert_allclose(host(a.grad), b.grad.numpy(), atol=atol, rtol=1e-8)
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(host(ours.get_parameter(name).grad), p.grad.numpy(),
                                   atol=atol, rtol=1e-8, err_msg=name)


def run_padded(mode, device="cpu", steps=4, batch=3, input_size=3, hidden_size=4,
               give_hx=True, **kw):
    ours, theirs = pair(mode, device, input_size=input_size, hidden_size=hidden_size, **kw)
    shape = (batch, steps, input_size) if kw.get("batch_first") else (steps, batch, input_size)
    x = RNG.standard_normal(shape)
    xo, xt = ours_t(x, device), theirs_t(x)
    args_o, args_t, leaves = [xo], [xt], [(xo, xt)]
    if give_hx:
        d = 2 if kw.get("bidirectional") else 1
        layers = kw.get("num_layers", 1)
        h_size = kw.get("proj_size") or MODES[mode][2].get("proj_size") or hidden_size
        h = RNG.standard_normal((layers * d, batch, h_size))
        ho, ht = ours_t(h, device), theirs_t(h)
        leaves.append((ho, ht))
        if MODES[mode][0] is nn.LSTM:
            c = RNG.standard_normal((layers * d, batch, hidden_size))
            co, ct = ours_t(c, device), theirs_t(c)
            leaves.append((co, ct))
            args_o.append((ho, co))
            args_t.append((ht, ct))
        else:
            args_o.append(ho)
            args_t.append(ht)
    compare(ours, theirs, flat(ours(*args_o)), flat(theirs(*args_t)), leaves)


CONFIGS = list(itertools.product(MODES, [1, 2], [False, True], [False, True], [True, False],
                                 [True, False]))


@pytest.mark.parametrize("mode,num_layers,bidirectional,batch_first,bias,give_hx", CONFIGS)
def test_padded_matches_torch(mode, num_layers, bidirectional, batch_first, bias, give_hx):
    run_padded(mode, num_layers=num_layers, bidirectional=bidirectional,
               batch_first=batch_first, bias=bias, give_hx=give_hx)


@pytest.mark.parametrize("mode", list(MODES))
def test_ref_backend_matches_torch(mode, device):
    run_padded(mode, device, steps=3, batch=2, input_size=2, hidden_size=3, num_layers=2,
               bidirectional=True, give_hx=True)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_input(mode, batch_first):
    ours, theirs = pair(mode, input_size=3, hidden_size=4, num_layers=2, bidirectional=True,
                        batch_first=batch_first)
    x = RNG.standard_normal((5, 3))
    xo, xt = ours_t(x, "cpu"), theirs_t(x)
    leaves = [(xo, xt)]
    h_size = MODES[mode][2].get("proj_size") or 4
    h = RNG.standard_normal((4, h_size))
    ho, ht = ours_t(h, "cpu"), theirs_t(h)
    leaves.append((ho, ht))
    if MODES[mode][0] is nn.LSTM:
        c = RNG.standard_normal((4, 4))
        co, ct = ours_t(c, "cpu"), theirs_t(c)
        leaves.append((co, ct))
        outs = flat(ours(xo, (ho, co))), flat(theirs(xt, (ht, ct)))
    else:
        outs = flat(ours(xo, ho)), flat(theirs(xt, ht))
    compare(ours, theirs, *outs, leaves)
    # and without an initial state
    ours.zero_grad()
    theirs.zero_grad()
    compare(ours, theirs, flat(ours(ours_t(x, "cpu", False))),
            flat(theirs(theirs_t(x, False))), [])


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_matches_torch(mode, enforce_sorted, bidirectional, device):
    rnn = nn.utils.rnn
    trnn = tnn.utils.rnn
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    if device == "ref":
        lengths = [3, 1, 2] if not enforce_sorted else [3, 2, 1]
    ours, theirs = pair(mode, device, input_size=2, hidden_size=3, num_layers=2,
                        bidirectional=bidirectional)
    x = RNG.standard_normal((max(lengths), len(lengths), 2))
    xo, xt = ours_t(x, device), theirs_t(x)
    po = rnn.pack_padded_sequence(xo, lengths, enforce_sorted=enforce_sorted)
    pt = trnn.pack_padded_sequence(xt, lengths, enforce_sorted=enforce_sorted)
    out_o, out_t = ours(po), theirs(pt)
    assert isinstance(out_o[0], rnn.PackedSequence)
    assert out_o[0].batch_sizes.tolist() == out_t[0].batch_sizes.tolist()
    if not enforce_sorted:
        assert out_o[0].sorted_indices.tolist() == out_t[0].sorted_indices.tolist()
        assert out_o[0].unsorted_indices.tolist() == out_t[0].unsorted_indices.tolist()
    padded_o, lens_o = rnn.pad_packed_sequence(out_o[0], total_length=max(lengths) + 1)
    padded_t, lens_t = trnn.pad_packed_sequence(out_t[0], total_length=max(lengths) + 1)
    assert lens_o.tolist() == lens_t.tolist() == lengths
    states_o = list(out_o[1]) if isinstance(out_o[1], tuple) else [out_o[1]]
    states_t = list(out_t[1]) if isinstance(out_t[1], tuple) else [out_t[1]]
    compare(ours, theirs, [padded_o, *states_o], [padded_t, *states_t], [(xo, xt)])


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_packed_with_initial_state_in_original_order(mode):
    rnn, trnn = nn.utils.rnn, tnn.utils.rnn
    ours, theirs = pair(mode, input_size=2, hidden_size=3)
    lengths = [2, 4, 3]
    x = RNG.standard_normal((4, 3, 2))
    h = RNG.standard_normal((1, 3, 3))
    xo, xt, ho, ht = ours_t(x, "cpu"), theirs_t(x), ours_t(h, "cpu"), theirs_t(h)
    po = rnn.pack_padded_sequence(xo, lengths, enforce_sorted=False)
    pt = trnn.pack_padded_sequence(xt, lengths, enforce_sorted=False)
    leaves = [(xo, xt), (ho, ht)]
    if mode == "lstm":
        c = RNG.standard_normal((1, 3, 3))
        co, ct = ours_t(c, "cpu"), theirs_t(c)
        leaves.append((co, ct))
        (oo, (hn_o, cn_o)), (ot, (hn_t, cn_t)) = ours(po, (ho, co)), theirs(pt, (ht, ct))
        extra_o, extra_t = [hn_o, cn_o], [hn_t, cn_t]
    else:
        (oo, hn_o), (ot, hn_t) = ours(po, ho), theirs(pt, ht)
        extra_o, extra_t = [hn_o], [hn_t]
    compare(ours, theirs, [oo.data, *extra_o], [ot.data, *extra_t], leaves)


@pytest.mark.parametrize("mode", list(MODES))
def test_our_state_dict_loads_into_torch(mode):
    """Our own initialisation, moved into torch, gives torch's outputs."""
    ours_cls, torch_cls, extra = MODES[mode]
    kw = dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True, **extra)
    ours, theirs = ours_cls(**kw).double(), torch_cls(**kw).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (n1, p1), (n2, p2) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n1 == n2 and tuple(p1.shape) == tuple(p2.shape)
    load_ours_into_torch(ours, theirs)
    x = RNG.standard_normal((4, 2, 3))
    compare(ours, theirs, flat(ours(ours_t(x, "cpu"))), flat(theirs(theirs_t(x))), [])


@pytest.mark.parametrize("mode", list(MODES))
def test_init_is_uniform_within_one_over_sqrt_hidden(mode):
    ours_cls, _, extra = MODES[mode]
    m = ours_cls(3, 16, num_layers=2, **extra)
    bound = 1 / 16 ** 0.5
    values = np.concatenate([host(p).ravel() for p in m.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.9 * bound and values.max() > 0.9 * bound  # spread over it
    assert abs(values.mean()) < 0.1 * bound


def test_dropout_between_layers():
    # p = 1: layer 2 sees zeros in training, so the result is deterministic and torch's
    ours, theirs = pair("lstm", input_size=3, hidden_size=4, num_layers=3, dropout=1.0)
    x = RNG.standard_normal((4, 2, 3))
    xo, xt = ours_t(x, "cpu"), theirs_t(x)
    compare(ours, theirs, flat(ours(xo)), flat(theirs(xt)), [(xo, xt)])
    # eval mode: no dropout at all
    ours, theirs = pair("gru", input_size=3, hidden_size=4, num_layers=2, dropout=0.5)
    ours.eval()
    theirs.eval()
    compare(ours, theirs, flat(ours(ours_t(x, "cpu", False))), flat(theirs(theirs_t(x, False))),
            [])
    # training with p = 0.5: random, reproducible under a seed, different from eval
    ours.train()
    xo = ours_t(x, "cpu", False)
    plugrad.manual_seed(3)
    a = ours(xo)[0]
    plugrad.manual_seed(3)
    b = ours(xo)[0]
    ours.eval()
    c = ours(xo)[0]
    assert np.array_equal(host(a), host(b))
    assert not np.allclose(host(a), host(c))


def test_dropout_warning_and_argument_errors():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.5)
    cases = [
        (lambda: nn.LSTM(3, 4, dropout=1.5), ValueError, "dropout should be a number in range"),
        (lambda: nn.LSTM(3, 0), ValueError, "hidden_size must be greater than zero"),
        (lambda: nn.LSTM(3, 2.0), TypeError, "hidden_size should be of type int"),
        (lambda: nn.GRU(3, 4, num_layers=0), ValueError, "num_layers must be greater than zero"),
        (lambda: nn.LSTM(3, 4, proj_size=4), ValueError, "proj_size has to be smaller"),
        (lambda: nn.LSTM(3, 4, proj_size=-1), ValueError, "proj_size should be a positive"),
        (lambda: nn.GRU(3, 4, proj_size=2), ValueError, "only supported for LSTM"),
        (lambda: nn.RNN(3, 4, proj_size=2), ValueError, "only supported for LSTM"),
        (lambda: nn.RNN(3, 4, nonlinearity="sigmoid"), ValueError, "Unknown nonlinearity"),
        (lambda: nn.RNNCell(3, 4, nonlinearity="x"), ValueError, "Unknown nonlinearity"),
    ]
    for make, exc, match in cases:
        with pytest.raises(exc, match=match):
            make()


def test_nonlinearity_positional_and_repr():
    m = nn.RNN(3, 4, 2, "relu")
    assert m.nonlinearity == "relu" and m.mode == "RNN_RELU" and m.num_layers == 2
    for kw in [dict(num_layers=2), dict(proj_size=2, bidirectional=True, batch_first=True,
                                        bias=False, num_layers=2, dropout=0.25)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert repr(nn.LSTM(3, 4, **kw)) == repr(tnn.LSTM(3, 4, **kw))
    assert repr(nn.RNN(3, 4, nonlinearity="relu")) == repr(tnn.RNN(3, 4, nonlinearity="relu"))
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == \
        repr(tnn.RNNCell(3, 4, nonlinearity="relu"))
    assert repr(nn.GRUCell(3, 4, bias=False)) == repr(tnn.GRUCell(3, 4, bias=False))
    m = nn.LSTM(3, 4, 2, bidirectional=True)
    m.flatten_parameters()  # a no-op
    assert [[tuple(w.shape) for w in ws] for ws in m.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in tnn.LSTM(3, 4, 2, bidirectional=True).all_weights]
    assert m._flat_weights_names == tnn.LSTM(3, 4, 2, bidirectional=True)._flat_weights_names


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we compare the kind and the message
        return type(e), str(e)
    return None


@pytest.mark.parametrize("call", [
    lambda m, lib: m["lstm"](lib.randn(3, 2, 4, 1)),
    lambda m, lib: m["lstm"](lib.randn(3, 2, 3)),
    lambda m, lib: m["lstm"](lib.randn(3, 2, 4), (lib.randn(2, 5), lib.randn(2, 5))),
    lambda m, lib: m["lstm"](lib.randn(3, 4), (lib.randn(2, 1, 5), lib.randn(2, 1, 5))),
    lambda m, lib: m["lstm"](lib.randn(3, 2, 4), (lib.randn(2, 3, 5), lib.randn(2, 3, 5))),
    lambda m, lib: m["lstm"](lib.randn(3, 2, 4), (lib.randn(2, 2, 5), lib.randn(2, 2, 4))),
    lambda m, lib: m["gru"](lib.randn(3, 2, 4), lib.randn(1, 3, 5)),
    lambda m, lib: m["gru"](lib.randn(3, 2, 4), lib.randn(2, 5)),
    lambda m, lib: m["gru"](lib.randn(3, 4), lib.randn(1, 2, 5)),
    lambda m, lib: m["gru"](lib.randn(3, 2, 4).double()),
    lambda m, lib: m["cell"](lib.randn(2, 3)),
    lambda m, lib: m["cell"](lib.randn(2, 2, 4)),
    lambda m, lib: m["cell"](lib.randn(2, 4), (lib.randn(3, 5), lib.randn(3, 5))),
    lambda m, lib: m["cell"](lib.randn(2, 4), (lib.randn(2, 4), lib.randn(2, 5))),
    lambda m, lib: m["gcell"](lib.randn(2, 4), lib.randn(3, 5)),
])
def test_bad_shapes_raise_like_torch(call):
    def modules(lib):
        return {"lstm": lib.nn.LSTM(4, 5, 2), "gru": lib.nn.GRU(4, 5),
                "cell": lib.nn.LSTMCell(4, 5), "gcell": lib.nn.GRUCell(4, 5)}
    ours, theirs = _error(lambda: call(modules(plugrad), plugrad)), \
        _error(lambda: call(modules(torch), torch))
    assert theirs is not None and ours is not None
    assert ours[0] is theirs[0], (ours, theirs)
    assert ours[1].replace("plugrad", "torch") == theirs[1], (ours, theirs)


def test_lstm_hx_must_be_a_pair():
    m = nn.LSTM(4, 5)
    with pytest.raises(TypeError, match=r"hx should be a tuple \(h_0, c_0\)"):
        m(plugrad.randn(3, 2, 4), plugrad.randn(1, 2, 5))


# ---------------------------------------------------------------------- cells
CELLS = {"rnn_tanh": (nn.RNNCell, tnn.RNNCell, {}),
         "rnn_relu": (nn.RNNCell, tnn.RNNCell, {"nonlinearity": "relu"}),
         "lstm": (nn.LSTMCell, tnn.LSTMCell, {}), "gru": (nn.GRUCell, tnn.GRUCell, {})}


@pytest.mark.parametrize("cell,bias,batched,give_hx",
                         list(itertools.product(CELLS, [True, False], [True, False],
                                                [True, False])))
def test_cells_match_torch(cell, bias, batched, give_hx):
    ours_cls, torch_cls, extra = CELLS[cell]
    theirs = torch_cls(3, 4, bias=bias, **extra).double()
    ours = ours_cls(3, 4, bias=bias, **extra).double()
    load_torch_into_ours(theirs, ours)
    lead = (2,) if batched else ()
    x = RNG.standard_normal(lead + (3,))
    xo, xt = ours_t(x, "cpu"), theirs_t(x)
    leaves = [(xo, xt)]
    args_o, args_t = [xo], [xt]
    lstm = cell == "lstm"
    if give_hx:
        states = [RNG.standard_normal(lead + (4,)) for _ in range(2 if lstm else 1)]
        so, st = [ours_t(s, "cpu") for s in states], [theirs_t(s) for s in states]
        leaves += list(zip(so, st))
        args_o.append(tuple(so) if lstm else so[0])
        args_t.append(tuple(st) if lstm else st[0])
    out_o, out_t = ours(*args_o), theirs(*args_t)
    out_o = list(out_o) if lstm else [out_o]
    out_t = list(out_t) if lstm else [out_t]
    compare(ours, theirs, out_o, out_t, leaves)


@pytest.mark.parametrize("cell", list(CELLS))
def test_cells_on_every_backend(cell, device):
    ours_cls, torch_cls, extra = CELLS[cell]
    theirs = torch_cls(2, 3, **extra).double()
    ours = ours_cls(2, 3, **extra).double().to(device)
    load_torch_into_ours(theirs, ours)
    x = RNG.standard_normal((2, 2))
    xo, xt = ours_t(x, device), theirs_t(x)
    out_o, out_t = ours(xo), theirs(xt)
    if cell == "lstm":
        out_o, out_t = ours(xo, out_o), theirs(xt, out_t)  # a second step from the first
        compare(ours, theirs, list(out_o), list(out_t), [(xo, xt)])
    else:
        compare(ours, theirs, [ours(xo, out_o)], [theirs(xt, out_t)], [(xo, xt)])


# ---------------------------------------------------------------------- higher order
@pytest.mark.parametrize("mode", list(MODES))
def test_double_backward_matches_torch(mode):
    """create_graph through the pointwise nodes: the gradient of a function of the input
    gradient is torch's."""
    ours, theirs = pair(mode, input_size=2, hidden_size=3, num_layers=2, bidirectional=True)
    x = RNG.standard_normal((3, 2, 2))
    xo, xt = ours_t(x, "cpu"), theirs_t(x)
    w = RNG.standard_normal((3, 2, ours(xo)[0].shape[-1]))
    go = plugrad.autograd.grad((ours(xo)[0] * ours_t(w, "cpu", False)).sum(), xo,
                               create_graph=True)[0]
    gt = torch.autograd.grad((theirs(xt)[0] * theirs_t(w, False)).sum(), xt,
                             create_graph=True)[0]
    np.testing.assert_allclose(host(go), gt.detach().numpy(), atol=1e-10)
    (go ** 2).sum().backward()
    (gt ** 2).sum().backward()

    def grad(t):  # a relu net's input gradient has no second-order dependence on x or the
        # biases: torch leaves zeros there, we leave None
        assert t.grad is not None or mode == "rnn_relu"
        return host(t.grad) if t.grad is not None else 0.0

    np.testing.assert_allclose(grad(xo), xt.grad.numpy(), atol=1e-9)
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(grad(ours.get_parameter(name)), p.grad.numpy(),
                                   atol=1e-9, err_msg=name)


def test_gradcheck_lstm_cell_pointwise():
    cell = nn.LSTMCell(2, 3).double()
    x = plugrad.randn(2, 2, dtype=plugrad.float64, requires_grad=True)
    h = plugrad.randn(2, 3, dtype=plugrad.float64, requires_grad=True)
    c = plugrad.randn(2, 3, dtype=plugrad.float64, requires_grad=True)
    fn = (lambda x, h, c: cell(x, (h, c)))
    assert plugrad.autograd.gradcheck(fn, (x, h, c))
    assert plugrad.autograd.gradgradcheck(fn, (x, h, c))


def test_float32_and_no_grad():
    m = nn.GRU(3, 4, 2, bidirectional=True)
    x = plugrad.randn(5, 2, 3)
    with plugrad.no_grad():
        out, h = m(x)
    assert out.dtype == plugrad.float32 and out.grad_fn is None
    assert tuple(out.shape) == (5, 2, 8) and tuple(h.shape) == (4, 2, 4)
    t = tnn.GRU(3, 4, 2, bidirectional=True)
    load_ours_into_torch(m, t)
    t.float()
    np.testing.assert_allclose(host(out), t(torch.from_numpy(host(x)).float())[0].detach(),
                               atol=1e-5)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
def test_gradcheck_packed_bidirectional(cls):
    """First and second derivatives through packing, both directions and two layers."""
    m = cls(2, 3, num_layers=2, bidirectional=True).double()
    x = plugrad.randn(3, 2, 2, dtype=plugrad.float64, requires_grad=True)

    def fn(x):
        packed = nn.utils.rnn.pack_padded_sequence(x, [1, 3], enforce_sorted=False)
        return nn.utils.rnn.pad_packed_sequence(m(packed)[0])[0]
    assert plugrad.autograd.gradcheck(fn, (x,))
    assert plugrad.autograd.gradgradcheck(fn, (x,))
