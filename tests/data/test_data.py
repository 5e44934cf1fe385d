"""Datasets, samplers, collation and the DataLoader (also as ``plugrad.utils.data``)."""
import collections

import numpy as np
import pytest

import plugrad
from plugrad.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset,
                          RandomSampler, SequentialSampler, Subset, TensorDataset,
                          default_collate, random_split)


def dataset(device, n=10):
    x = plugrad.arange(n * 2, device=device).float().reshape(n, 2)
    return TensorDataset(x, plugrad.arange(n, device=device))


def test_utils_data_is_the_same_module():
    import plugrad.utils.data as ud
    assert ud.DataLoader is DataLoader and ud.TensorDataset is TensorDataset


def test_tensor_dataset(device):
    ds = dataset(device)
    assert len(ds) == 10
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3 and x.device.type == device
    with pytest.raises(ValueError, match=r"Size mismatch between tensors.*\[3, 4\]"):
        TensorDataset(plugrad.zeros(3), plugrad.zeros(4))


def test_loader_batches_in_order_with_a_short_last_batch(device):
    loader = DataLoader(dataset(device), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 == len(batches)
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert tuple(batches[0][0].shape) == (4, 2) and batches[0][0].device.type == device
    dropped = DataLoader(dataset(device), batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [b[1].shape[0] for b in dropped] == [4, 4]


def test_shuffle_is_seeded_by_the_generator_and_reshuffles_each_epoch(device):
    def epochs(seed):
        loader = DataLoader(dataset(device), batch_size=3, shuffle=True,
                            generator=plugrad.Generator().manual_seed(seed))
        return [[i for b in loader for i in b[1].tolist()] for _ in range(2)]

    first, second = epochs(7)
    assert sorted(first) == list(range(10)) == sorted(second)
    assert first != second and first != list(range(10))
    assert epochs(7) == [first, second]
    assert epochs(8) != [first, second]


def test_global_seed_drives_an_unseeded_shuffle():
    def order():
        plugrad.manual_seed(3)
        return [int(i) for _, y in DataLoader(dataset("cpu"), shuffle=True) for i in y]
    assert order() == order()


def test_default_collate_structures():
    Point = collections.namedtuple("Point", "x y")
    batch = [{"a": 1.0, "b": (1, np.float32(2)), "c": "s", "p": Point(True, [1, 2]),
              "t": plugrad.ones(2), "n": np.zeros(3)}] * 2
    out = default_collate(batch)
    assert out["a"].dtype == plugrad.float64 and out["a"].tolist() == [1.0, 1.0]
    assert isinstance(out["b"], list) and out["b"][0].dtype == plugrad.int64
    assert out["b"][1].tolist() == [2.0, 2.0]
    assert out["c"] == ["s", "s"]
    assert isinstance(out["p"], Point) and out["p"].x.dtype == plugrad.bool
    assert [v.tolist() for v in out["p"].y] == [[1, 1], [2, 2]]
    assert tuple(out["t"].shape) == (2, 2) and tuple(out["n"].shape) == (2, 3)
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])


def test_collate_fn_and_no_batching():
    seen = []
    loader = DataLoader(list(range(5)), batch_size=2, collate_fn=lambda b: seen.append(b) or b)
    assert list(loader) == [[0, 1], [2, 3], [4]] and seen == [[0, 1], [2, 3], [4]]
    unbatched = DataLoader([np.ones(2), np.zeros(2)], batch_size=None)
    assert [b.tolist() for b in unbatched] == [[1.0, 1.0], [0.0, 0.0]] and len(unbatched) == 2


def test_loader_option_errors():
    ds = list(range(4))
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 2, False), batch_size=2)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(ds, batch_size=0)


def test_samplers():
    ds = list(range(7))
    assert list(SequentialSampler(ds)) == list(range(7))
    rs = RandomSampler(ds, generator=plugrad.Generator().manual_seed(0))
    assert sorted(rs) == list(range(7)) and len(rs) == 7
    drawn = list(RandomSampler(ds, replacement=True, num_samples=20,
                               generator=plugrad.Generator().manual_seed(0)))
    assert len(drawn) == 20 and set(drawn) <= set(ds)
    assert len(list(RandomSampler(ds, num_samples=10))) == 10
    bs = BatchSampler(SequentialSampler(ds), 3, drop_last=False)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6]] and len(bs) == 3
    assert len(BatchSampler(SequentialSampler(ds), 3, drop_last=True)) == 2
    loader = DataLoader(ds, batch_sampler=bs)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]


def test_random_split_lengths_fractions_and_generator():
    ds = list(range(10))
    a, b = random_split(ds, [3, 7], generator=plugrad.Generator().manual_seed(1))
    assert isinstance(a, Subset) and (len(a), len(b)) == (3, 7)
    assert sorted(list(a) + list(b)) == ds
    c, d = random_split(ds, [3, 7], generator=plugrad.Generator().manual_seed(1))
    assert list(c) == list(a)
    parts = random_split(list(range(11)), [0.5, 0.3, 0.2])
    assert [len(p) for p in parts] == [6, 3, 2]  # remainder round-robin, as PyTorch
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])


def test_subset_concat_and_iterable_datasets(device):
    ds = dataset(device)
    sub = Subset(ds, [4, 1])
    assert len(sub) == 2 and sub[0][1].item() == 4
    both = ds + sub
    assert isinstance(both, ConcatDataset) and len(both) == 12 and both[11][1].item() == 1

    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(5))

    assert [b.tolist() for b in DataLoader(Stream(), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert len(list(DataLoader(Stream(), batch_size=2, drop_last=True))) == 2
    with pytest.raises(ValueError, match="shuffle"):
        DataLoader(Stream(), shuffle=True)

    class Bare(Dataset):
        pass

    with pytest.raises(NotImplementedError):
        Bare()[0]
