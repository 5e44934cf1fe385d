"""Samplers: which indices a :class:`DataLoader` visits, and how they are grouped."""
from __future__ import annotations

import plugrad


class Sampler:
    """Iterates over dataset indices."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation (or draws with replacement), new on each iteration.

    Drawn from ``generator`` if given, else from the global seed (``plugrad.manual_seed``).
    """

    def __init__(self, data_source, replacement: bool = False, num_samples=None,
                 generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    _CHUNK = 32  # draws with replacement come in chunks, so num_samples may be huge

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:  # a private stream seeded from the global one, as PyTorch
            seed = int(plugrad.randint(0, 2 ** 62, (1,), device="cpu").item())
            generator = plugrad.Generator().manual_seed(seed)
        if self.replacement:
            return self._with_replacement(n, generator)
        return self._permutations(n, generator)

    def _with_replacement(self, n, generator):
        full, rest = divmod(self.num_samples, self._CHUNK)
        for _ in range(full):
            yield from plugrad.randint(0, n, (self._CHUNK,), generator=generator,
                                       device="cpu").tolist()
        if rest:
            yield from plugrad.randint(0, n, (rest,), generator=generator,
                                       device="cpu").tolist()

    def _permutations(self, n, generator):
        full, rest = divmod(self.num_samples, n)
        for _ in range(full):
            yield from plugrad.randperm(n, generator=generator, device="cpu").tolist()
        if rest:
            yield from plugrad.randperm(n, generator=generator, device="cpu").tolist()[:rest]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        perm = plugrad.randperm(len(self.indices), generator=self.generator).tolist()
        return (self.indices[i] for i in perm)

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (with or
    without replacement): the usual remedy for an imbalanced dataset."""

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None):
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = plugrad.as_tensor(weights, dtype=plugrad.float64, device="cpu")
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights, self.num_samples = w, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self):
        draws = plugrad.multinomial(self.weights, self.num_samples, self.replacement,
                                    generator=self.generator)
        return iter(draws.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of ``batch_size``."""

    def __init__(self, sampler, batch_size: int, drop_last: bool):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
