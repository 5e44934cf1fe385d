"""``DataLoader(num_workers > 0)``: worker processes, their seeds, errors and shutdown; the
lazy ``RandomSampler``; the default generator seeded freshly per process."""
import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

import plugrad
from plugrad.utils.data import (DataLoader, Dataset, IterableDataset, RandomSampler,
                                TensorDataset, get_worker_info)

pytestmark = pytest.mark.timeout(120)


def _dataset(device, n=10):
    x = plugrad.arange(2 * n, dtype=plugrad.float32, device=device).reshape(n, 2)
    return TensorDataset(x, plugrad.arange(n, device=device))


def _batches(loader):
    return [(x.tolist(), y.tolist(), x.device.type, x.dtype) for x, y in loader]


def test_workers_give_the_batches_of_the_main_process(device):
    ds = _dataset(device)
    for shuffle in (False, True):
        kwargs = dict(batch_size=3, shuffle=shuffle)
        here = _batches(DataLoader(ds, generator=plugrad.Generator().manual_seed(1), **kwargs))
        there = _batches(DataLoader(ds, num_workers=2, prefetch_factor=1,
                                    generator=plugrad.Generator().manual_seed(1), **kwargs))
        assert here == there and there[0][2] == device


class Shards(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


@pytest.mark.filterwarnings("ignore:This DataLoader will create 3 worker processes")
def test_iterable_dataset_sharded_by_worker_info_in_pytorchs_order():
    import torch.utils.data as tud

    class TorchShards(tud.IterableDataset):
        def __iter__(self):
            info = tud.get_worker_info()
            return iter(range(info.id, 10, info.num_workers))

    ours = [b.tolist() for b in DataLoader(Shards(10), batch_size=2, num_workers=3)]
    theirs = [b.tolist() for b in tud.DataLoader(TorchShards(), batch_size=2, num_workers=3)]
    assert ours == theirs == [[0, 3], [1, 4], [2, 5], [6, 9], [7], [8]]
    assert list(DataLoader(Shards(5), batch_size=None, num_workers=2)) == [0, 1, 2, 3, 4]
    assert get_worker_info() is None


class WhoAmI(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return {"worker": info.id, "seed": info.seed, "pid": os.getpid(),
                "draw": plugrad.rand(1).item(), "np": float(np.random.rand()),
                "init": os.environ.get("INIT_SAW", "")}


def _init(worker_id):
    os.environ["INIT_SAW"] = f"{worker_id}/{get_worker_info().num_workers}"


def test_worker_seeds_init_fn_and_repeatability():
    def run(seed):
        loader = DataLoader(WhoAmI(), batch_size=None, num_workers=2, worker_init_fn=_init,
                            generator=plugrad.Generator().manual_seed(seed))
        return list(loader)
    first = run(5)
    workers = {r["worker"] for r in first}
    assert workers == {0, 1}
    assert {r["init"] for r in first} == {"0/2", "1/2"}
    seeds = {r["worker"]: r["seed"] for r in first}
    assert seeds[1] == seeds[0] + 1
    by_worker = {w: [r["draw"] for r in first if r["worker"] == w] for w in (0, 1)}
    assert by_worker[0] != by_worker[1]  # each worker has its own stream
    assert {r["np"] for r in first if r["worker"] == 0} != {r["np"] for r in first
                                                           if r["worker"] == 1}
    again = run(5)
    assert [r["draw"] for r in again] == [r["draw"] for r in first]
    assert [r["draw"] for r in run(6)] != [r["draw"] for r in first]


class Failing(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise KeyError(f"no item {i}")
        return i


def test_worker_error_is_reraised_with_its_traceback():
    loader = DataLoader(Failing(), num_workers=2)
    it = iter(loader)
    with pytest.raises(KeyError) as info:
        list(it)
    text = str(info.value)
    assert "Caught KeyError in DataLoader worker process 1." in text
    assert "Original Traceback" in text and "raise KeyError(f\"no item {i}\")" in text
    assert all(not w.is_alive() for w in it._workers)


def _bad_init(worker_id):
    raise ValueError(f"init failed in {worker_id}")


def test_worker_init_error_and_validation():
    with pytest.raises(ValueError, match=r"(?s)Caught ValueError in DataLoader worker process "
                                         r"\d.*init failed"):
        list(DataLoader(list(range(4)), num_workers=2, worker_init_fn=_bad_init))
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        DataLoader([1], prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader([1], persistent_workers=True)
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        DataLoader([1], timeout=-1)


def test_persistent_workers_live_across_epochs(device):
    ds = _dataset(device, 12)
    loader = DataLoader(ds, batch_size=4, shuffle=True, num_workers=2, persistent_workers=True)
    first = iter(loader)
    epochs = [sorted(i for _, y in loader for i in y.tolist()) for _ in range(3)]
    assert epochs == [list(range(12))] * 3
    assert iter(loader) is first and all(w.is_alive() for w in first._workers)
    next(iter(loader))  # an epoch abandoned half-way: the next one still starts clean
    assert sorted(i for _, y in loader for i in y.tolist()) == list(range(12))
    workers = first._workers
    del loader, first
    import gc
    gc.collect()
    for w in workers:
        w.join(timeout=10)
    assert not any(w.is_alive() for w in workers)


def test_shutdown_after_an_abandoned_epoch_and_after_the_last_batch():
    it = iter(DataLoader(list(range(100)), batch_size=2, num_workers=2))
    assert next(it).tolist() == [0, 1]
    workers = list(it._workers)
    it._shutdown()
    assert not any(w.is_alive() for w in workers)
    it = iter(DataLoader(list(range(4)), num_workers=2))
    assert [b.item() for b in it] == [0, 1, 2, 3]
    assert not any(w.is_alive() for w in it._workers)


class Dies(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        os._exit(3)


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        import time
        time.sleep(30)


class Unsendable(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return lambda: i


def test_dead_slow_and_unsendable_workers_are_errors():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) .*\) exited "
                                           r"unexpectedly"):
        list(DataLoader(Dies(), num_workers=1))
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        list(DataLoader(Slow(), num_workers=1, timeout=0.5))
    with pytest.raises(AttributeError, match="(?s)while sending a batch to the main "
                                             "process.*Can't pickle local object"):
        list(DataLoader(Unsendable(), num_workers=1, batch_size=None))


def test_spawn_needs_a_picklable_dataset():
    with pytest.raises(TypeError, match="'spawn' start method pickles the dataset.*not "
                                        "picklable"):
        iter(DataLoader(_dataset("cpu"), num_workers=1, multiprocessing_context="spawn"))


def test_random_sampler_draws_lazily():
    sampler = RandomSampler(range(7), replacement=True, num_samples=10 ** 10,
                            generator=plugrad.Generator().manual_seed(0))
    assert len(sampler) == 10 ** 10
    head = list(itertools.islice(iter(sampler), 100))
    assert len(head) == 100 and set(head) <= set(range(7)) and len(set(head)) > 1
    again = list(itertools.islice(iter(RandomSampler(range(7), replacement=True,
                                                      num_samples=10 ** 10,
                                                      generator=plugrad.Generator().manual_seed(0))),
                                  100))
    assert head == again
    loader = DataLoader(range(7), batch_size=4,
                        sampler=RandomSampler(range(7), replacement=True, num_samples=10 ** 12))
    assert len(next(iter(loader))) == 4
    long = list(RandomSampler(range(5), num_samples=12))  # no replacement: whole permutations
    assert sorted(long[:5]) == sorted(long[5:10]) == list(range(5)) and len(long) == 12


def test_default_generator_is_fresh_per_process_and_manual_seed_repeats():
    code = ("import plugrad, sys; s = plugrad.initial_seed(); a = plugrad.rand(3).tolist(); "
            "plugrad.manual_seed(int(sys.argv[1])); print(s, a, plugrad.rand(3).tolist(), "
            "plugrad.initial_seed())")

    def run(seed):
        out = subprocess.run([sys.executable, "-c", code, str(seed)], capture_output=True,
                             text=True, check=True, timeout=60).stdout
        s, rest = out.split(" ", 1)
        return int(s), rest
    (s1, r1), (s2, r2) = run(4), run(4)
    assert s1 != s2
    fresh1, seeded1 = r1.split("] [")
    fresh2, seeded2 = r2.split("] [")
    assert fresh1 != fresh2 and seeded1 == seeded2 and seeded1.strip().endswith(" 4")


def test_infinite_sampler_with_workers_as_mingpt_uses_it():
    ds = _dataset("cpu", 10)
    loader = DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True,
                        sampler=RandomSampler(ds, replacement=True, num_samples=int(1e10)))
    it = iter(loader)
    batches = [next(it) for _ in range(5)]
    assert all(b[0].shape == (4, 2) for b in batches)
    it._shutdown()
