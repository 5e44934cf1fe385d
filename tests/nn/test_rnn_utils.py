"""``nn.utils.rnn``: packing and padding against PyTorch, round trips, gradients, errors."""
import numpy as np
import pytest

import plugrad
from plugrad.nn.utils import rnn

from .helpers import host

torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn

RNG = np.random.default_rng(3)


def both(a, device="cpu"):
    return (plugrad.tensor(a, dtype=plugrad.float64, device=device, requires_grad=True),
            torch.tensor(a, dtype=torch.float64, requires_grad=True))


def same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(host(ours), theirs.detach().double().numpy())


def same_packed(po, pt):
    same(po.data, pt.data)
    assert po.batch_sizes.tolist() == pt.batch_sizes.tolist()
    assert po.batch_sizes.device.type == "cpu" and po.batch_sizes.dtype == plugrad.int64
    for a, b in ((po.sorted_indices, pt.sorted_indices),
                 (po.unsorted_indices, pt.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist()


def backward_same(ours_out, theirs_out, leaves):
    g = RNG.standard_normal(tuple(theirs_out.shape))
    (ours_out * plugrad.tensor(g, dtype=plugrad.float64, device=ours_out.device)).sum().backward()
    (theirs_out * torch.tensor(g)).sum().backward()
    for a, b in leaves:
        np.testing.assert_allclose(host(a.grad), b.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce_sorted", [([4, 3, 3, 1], True), ([2, 4, 1, 3], False),
                                                   ([3, 3, 3, 3], True), ([1, 3, 1, 3], False)])
def test_pack_pad_round_trip_matches_torch(batch_first, lengths, enforce_sorted, device):
    if device == "ref":
        lengths = lengths[:3]
    batch, steps = len(lengths), max(lengths) + 1  # one step of padding beyond the longest
    shape = (batch, steps, 2) if batch_first else (steps, batch, 2)
    xo, xt = both(RNG.standard_normal(shape), device)
    po = rnn.pack_padded_sequence(xo, lengths, batch_first=batch_first,
                                  enforce_sorted=enforce_sorted)
    pt = trnn.pack_padded_sequence(xt, lengths, batch_first=batch_first,
                                   enforce_sorted=enforce_sorted)
    assert isinstance(po, rnn.PackedSequence) and isinstance(po, tuple)
    same_packed(po, pt)
    if po.sorted_indices is not None:
        assert po.sorted_indices.device == xo.device
    for total in (None, steps + 2):
        oo, lo = rnn.pad_packed_sequence(po, batch_first=batch_first, padding_value=-1.5,
                                         total_length=total)
        ot, lt = trnn.pad_packed_sequence(pt, batch_first=batch_first, padding_value=-1.5,
                                          total_length=total)
        same(oo, ot)
        assert lo.tolist() == lt.tolist() == lengths and lo.device.type == "cpu"
    backward_same(oo, ot, [(xo, xt)])


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side, device):
    seqs = [RNG.standard_normal((n, 2, 3)) for n in (2, 5, 1)]
    pairs = [both(s, device) for s in seqs]
    oo = rnn.pad_sequence([p[0] for p in pairs], batch_first, 7.0, padding_side)
    ot = trnn.pad_sequence([p[1] for p in pairs], batch_first, 7.0, padding_side)
    same(oo, ot)
    backward_same(oo, ot, pairs)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_and_unpack(enforce_sorted, device):
    lengths = [4, 2, 1] if enforce_sorted else [2, 4, 1]
    pairs = [both(RNG.standard_normal((n, 3)), device) for n in lengths]
    po = rnn.pack_sequence([p[0] for p in pairs], enforce_sorted=enforce_sorted)
    pt = trnn.pack_sequence([p[1] for p in pairs], enforce_sorted=enforce_sorted)
    same_packed(po, pt)
    back = rnn.unpack_sequence(po)
    assert len(back) == len(pairs)
    for b, (o, _) in zip(back, pairs):
        np.testing.assert_array_equal(host(b), host(o))
    padded = rnn.pad_sequence([p[0] for p in pairs], batch_first=True)
    for b, (o, _) in zip(rnn.unpad_sequence(padded, lengths, batch_first=True), pairs):
        np.testing.assert_array_equal(host(b), host(o))
    backward_same(po.data, pt.data, pairs)


def test_packed_sequence_methods():
    x = plugrad.randn(3, 2, 4)
    p = rnn.pack_padded_sequence(x, [3, 1], enforce_sorted=False)
    # unsorted_indices is filled in from sorted_indices, as PyTorch does
    q = rnn.PackedSequence(p.data, p.batch_sizes, p.sorted_indices)
    assert q.unsorted_indices.tolist() == p.unsorted_indices.tolist()
    d = p.double()
    assert d.data.dtype == plugrad.float64 and d.batch_sizes.dtype == plugrad.int64
    assert p.to(plugrad.float32) is p
    r = p.to("ref")
    assert r.data.device.type == "ref" and r.sorted_indices.device.type == "ref"
    assert r.batch_sizes.device.type == "cpu"
    assert not p.is_cuda
    data, batch_sizes, sorted_indices, unsorted_indices = p  # a named tuple
    assert p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    with pytest.raises(ValueError, match="batch_sizes should always be on CPU"):
        rnn.PackedSequence(p.data, p.batch_sizes.to("ref"))


def test_lengths_as_tensor_and_integer_data():
    ids = plugrad.tensor([[1, 2, 3], [4, 5, 0]]).T  # (T, B) token ids
    p = rnn.pack_padded_sequence(ids, plugrad.tensor([3, 2]))
    assert p.data.tolist() == [1, 4, 2, 5, 3]
    padded, lengths = rnn.pad_packed_sequence(p, padding_value=-1)
    assert padded.T.tolist() == [[1, 2, 3], [4, 5, -1]] and lengths.tolist() == [3, 2]


@pytest.mark.parametrize("call", [
    lambda r, lib: r.pack_padded_sequence(lib.zeros(5, 3, 2), [3, 5, 2]),
    lambda r, lib: r.pack_padded_sequence(lib.zeros(5, 3, 2), [5, 3, 0]),
    lambda r, lib: r.pack_padded_sequence(lib.zeros(5, 3, 2), [5, 3]),
    lambda r, lib: r.pad_packed_sequence(r.pack_padded_sequence(lib.zeros(5, 2), [5, 2]),
                                         total_length=3),
    lambda r, lib: r.pad_sequence([lib.zeros(2, 3)], padding_side="middle"),
    lambda r, lib: r.pad_sequence([]),
    lambda r, lib: r.pack_sequence([lib.zeros(2, 3), lib.zeros(3, 3)]),
])
def test_errors_like_torch(call):
    def error(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            return type(e), str(e)
        return None
    ours, theirs = error(lambda: call(rnn, plugrad)), error(lambda: call(trnn, torch))
    assert ours is not None and theirs is not None
    assert ours == theirs


def test_clearer_errors_than_torch():
    with pytest.raises(RuntimeError, match=r"a length \(6\) exceeds the padded input's time "
                                           r"dimension 0 \(size 5"):
        rnn.pack_padded_sequence(plugrad.zeros(5, 3, 2), [6, 3, 1])
    with pytest.raises(RuntimeError, match="same trailing dimensions, but sequence 1 has "
                                           r"shape \[3, 4\]"):
        rnn.pad_sequence([plugrad.zeros(2, 3), plugrad.zeros(3, 4)])
    with pytest.raises(RuntimeError, match="0-d tensor"):
        rnn.pad_sequence([plugrad.tensor(1.0), plugrad.tensor(2.0)])
    with pytest.raises(RuntimeError, match="should be a 1D int64 tensor"):
        rnn.pack_padded_sequence(plugrad.zeros(5, 3, 2), plugrad.tensor([5.0, 3.0, 2.0]))
