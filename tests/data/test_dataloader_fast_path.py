"""A TensorDataset under default collation is batched by one gather per tensor: the batches
must be exactly those of collating its rows one by one (values, dtypes, shapes, container),
shuffled or not, and an index out of range is the same IndexError."""
import numpy as np
import pytest

import plugrad
from plugrad.data import DataLoader, TensorDataset
from plugrad.data._utils.collate import default_collate


class _Rows(TensorDataset):
    """The same dataset through the generic row-by-row path (a subclass is not gathered)."""


@pytest.mark.parametrize("shuffle", [False, True])
def test_gathered_batches_equal_collated_rows(device, shuffle):
    rng = np.random.default_rng(0)
    x = plugrad.tensor(rng.normal(size=(11, 2, 3)), dtype=plugrad.float32, device=device)
    y = plugrad.tensor(rng.integers(0, 5, size=11), device=device)
    m = plugrad.tensor(rng.random(11) < 0.5, device=device)
    fast, slow = TensorDataset(x, y, m), _Rows(x, y, m)
    runs = []
    for ds in (fast, slow):
        g = plugrad.Generator().manual_seed(3)
        runs.append(list(DataLoader(ds, batch_size=4, shuffle=shuffle, generator=g)))
    for a, b in zip(*runs):
        assert type(a) is type(b) is list and len(a) == len(b) == 3
        for u, v in zip(a, b):
            assert u.dtype is v.dtype and u.shape == v.shape and u.device == v.device
            np.testing.assert_array_equal(u.cpu().numpy(), v.cpu().numpy())
    assert [len(b[0]) for b in runs[0]] == [4, 4, 3]


def test_out_of_range_indices_raise_as_row_by_row():
    ds = TensorDataset(plugrad.ones(3, 2))
    loader = DataLoader(ds, batch_sampler=[[0, 5]])
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        next(iter(loader))
    assert default_collate([ds[i] for i in (0, -1)])[0].shape == (2, 2)
    assert next(iter(DataLoader(ds, batch_sampler=[[0, -1]])))[0].shape == (2, 2)
