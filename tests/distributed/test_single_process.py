"""What needs no second process: API errors, DistributedSampler arithmetic."""
import pytest

import plugrad
import plugrad.distributed as dist
from plugrad.data.distributed import DistributedSampler


def test_unknown_backend_names_the_supported_ones():
    with pytest.raises(ValueError, match=r"'nccl'.*supports: 'mpi'"):
        dist.init_process_group("nccl")


def test_uninitialized():
    assert dist.is_available()
    assert not dist.is_initialized()
    assert dist.get_rank() == -1 and dist.get_world_size() == -1
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.all_reduce(plugrad.ones(2))
    from plugrad.nn.parallel import DistributedDataParallel
    with pytest.raises(RuntimeError, match="init_process_group"):
        DistributedDataParallel(plugrad.nn.Linear(2, 2))


@pytest.mark.parametrize("n,replicas,drop_last", [(11, 2, False), (11, 2, True), (10, 3, False),
                                                  (2, 5, False), (12, 4, True)])
@pytest.mark.parametrize("shuffle", [True, False])
def test_distributed_sampler_partitions(n, replicas, drop_last, shuffle):
    samplers = [DistributedSampler(range(n), replicas, r, shuffle=shuffle, seed=3,
                                   drop_last=drop_last) for r in range(replicas)]
    parts = [list(s) for s in samplers]
    counts = {len(p) for p in parts}
    assert counts == {len(samplers[0])}  # every rank the same number of samples
    union = [i for p in parts for i in p]
    if drop_last:
        assert len(union) == (n // replicas) * replicas and len(set(union)) == len(union)
    else:
        assert set(union) == set(range(n))  # everything visited; padding repeats a few
        assert len(union) == -(-n // replicas) * replicas
    if not shuffle:  # rank r takes r, r + replicas, ... of 0..n-1 padded from its start
        padded = [i % n for i in range(len(union))]
        for r, p in enumerate(parts):
            assert p == padded[r::replicas]


def test_distributed_sampler_epochs_and_seed():
    s = DistributedSampler(range(100), 2, 0, seed=1)
    t = DistributedSampler(range(100), 2, 0, seed=1)
    first = list(s)
    assert first == list(t)  # the same on every rank, given the seed
    s.set_epoch(1)
    assert list(s) != first
    other = DistributedSampler(range(100), 2, 1, seed=1)
    other.set_epoch(1)
    assert sorted(list(s) + list(other)) == list(range(100))
    with pytest.raises(ValueError, match="Invalid rank"):
        DistributedSampler(range(4), 2, 2)
    with pytest.raises(RuntimeError, match="init_process_group"):
        DistributedSampler(range(4))
