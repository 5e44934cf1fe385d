"""Random numbers: one generator per backend, all seeded by ``manual_seed``.

Sampling happens on the tensor's backend (same seed, same stream on that backend). An
explicit :class:`Generator` samples on the host instead, for reproducible data shuffling
independent of the device.
"""
from __future__ import annotations

import json
import os

import numpy as np

from plugrad.core import dtypes as _dt
from plugrad.core import registry, tracing
from plugrad.core.errors import ArgumentError, check_dtype_supported
from plugrad.core.factories import _sizes, out_defaults, resolve_device, tensor
from plugrad.core.outputs import write_out
from plugrad.core.registry import get_registry
from plugrad.core.tensor import Tensor, _wrap, table_for

def _fresh_seed() -> int:
    return int.from_bytes(os.urandom(8), "little") % (2 ** 63)


# Seeded freshly in each process, as PyTorch's default generator is (``initial_seed()``
# differs from run to run); ``manual_seed`` makes a run repeat.
_seed = _fresh_seed()
_host = None  # made from _seed on first use: numpy.random is a sixth of `import plugrad`


def _host_rng():
    global _host
    if _host is None:
        _host = np.random.default_rng(_seed)
    return _host


def initial_seed() -> int:
    return _seed


def seed_backend(backend) -> None:
    """Called by the registry when a backend is first used: it starts from the global seed."""
    backend.seed(_seed)


registry.first_use_hooks.append(seed_backend)


def manual_seed(seed: int):
    """Seed every backend's generator and the host generator."""
    global _seed, _host
    seed = int(seed)
    _seed = seed
    _host = None
    for backend in list(get_registry().seeded.values()):  # the rest start from _seed on first use
        backend.seed(seed)
    return default_generator


def seed() -> int:
    s = _fresh_seed()
    manual_seed(s)
    return s


def get_rng_state() -> Tensor:
    """Every generator's state as a uint8 tensor (``torch.get_rng_state``): the host
    generator's and each backend's that has drawn, beside the seed the others start from.
    Opaque, like PyTorch's; :func:`set_rng_state` takes it back and ``torch.save`` stores it."""
    backends = {}
    for dev, backend in get_registry().seeded.items():
        state = backend.rng_state()
        backends[dev] = None if state is None else state.decode("latin-1")
    return _bytes_tensor(json.dumps({"seed": _seed, "host": _host_rng().bit_generator.state,
                                     "backends": backends}))


def set_rng_state(new_state: Tensor) -> None:
    """Restore what :func:`get_rng_state` returned: later draws repeat those made after it.
    A backend first used since restarts from the saved seed (as its first use would have);
    one that cannot read out its state (CuPy's) keeps its stream."""
    global _seed
    saved = _read_state("set_rng_state", new_state)
    try:
        _seed, _host_rng().bit_generator.state = int(saved["seed"]), saved["host"]
    except (ValueError, KeyError, TypeError) as exc:
        raise RuntimeError("set_rng_state: the tensor is not a state from get_rng_state") \
            from exc
    for dev, backend in list(get_registry().seeded.items()):
        if dev not in saved["backends"]:
            backend.seed(_seed)
        elif saved["backends"][dev] is not None:
            backend.set_rng_state(saved["backends"][dev].encode("latin-1"))


def _bytes_tensor(text: str) -> Tensor:
    return tensor(np.frombuffer(text.encode(), dtype=np.uint8).copy(), dtype=_dt.uint8)


def _read_state(op: str, state):
    """The JSON a state tensor holds; PyTorch's TypeError for anything but a ByteTensor."""
    if not isinstance(state, Tensor) or state.dtype is not _dt.uint8:
        got = f"a tensor of dtype {state.dtype}" if isinstance(state, Tensor) else \
            type(state).__name__
        raise TypeError(f"{op}: expected a torch.ByteTensor (uint8) state, got {got}")
    try:
        return json.loads(bytes(np.asarray(state.cpu().numpy(), dtype=np.uint8)))
    except ValueError as exc:
        raise RuntimeError(f"{op}: the tensor is not a generator state") from exc


class Generator:
    """A host-side generator (``torch.Generator``): ``manual_seed``, ``initial_seed``."""

    def __init__(self, device="cpu"):
        self.device = device
        self._seed = 0
        self.rng = np.random.default_rng(0)

    def manual_seed(self, seed: int) -> "Generator":
        self._seed = int(seed)
        self.rng = np.random.default_rng(self._seed)
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        return self.manual_seed(_fresh_seed()).initial_seed()

    def get_state(self) -> Tensor:
        """The generator's state as a uint8 tensor, as PyTorch's ``Generator.get_state``."""
        return _bytes_tensor(json.dumps(self.rng.bit_generator.state))

    def set_state(self, new_state: Tensor) -> "Generator":
        self.rng.bit_generator.state = _read_state("Generator.set_state", new_state)
        return self


class _DefaultGenerator(Generator):
    """``plugrad.default_generator``: seeding it seeds everything, like manual_seed."""

    def __init__(self, device="cpu"):
        self.device = device  # its stream is the module's host generator, made on first use

    def manual_seed(self, seed: int) -> "Generator":
        manual_seed(seed)
        return self

    def initial_seed(self) -> int:
        return _seed

    def get_state(self) -> Tensor:
        return get_rng_state()

    def set_state(self, new_state: Tensor) -> "Generator":
        set_rng_state(new_state)
        return self

    @property
    def rng(self):
        return _host_rng()

    @rng.setter
    def rng(self, value):
        pass


default_generator = _DefaultGenerator()


def host_rng(generator: Generator | None):
    return generator.rng if generator is not None else _host_rng()


def _sample(kind, size, dtype, device, requires_grad, generator):
    shape = _sizes(size)
    dt = _dt.get_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    if not dt.is_floating_point:
        raise TypeError(f"{'rand' if kind == 'uniform' else 'randn'}: expected a floating "
                        f"dtype, got {dt}")
    dev = resolve_device(device)
    k = table_for(dev)
    check_dtype_supported("rand" if kind == "uniform" else "randn", k, dt)
    if generator is not None:
        rng = generator.rng
        values = rng.random(shape) if kind == "uniform" else rng.standard_normal(shape)
        data = k.from_numpy(values, dt.name, dev.index)
    else:
        data = getattr(k, kind)(shape, dt.name, dev.index)
    t = _wrap(data, dt, dev, k)
    if requires_grad:
        t.requires_grad_(True)
    return t


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None,
         out=None) -> Tensor:
    if out is None:
        return _sample("uniform", size, dtype, device, requires_grad, generator)
    dtype, device = out_defaults(out, dtype, device)
    return write_out("rand", out, _sample("uniform", size, dtype, device, requires_grad,
                                          generator))


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None,
          out=None) -> Tensor:
    if out is None:
        return _sample("normal", size, dtype, device, requires_grad, generator)
    dtype, device = out_defaults(out, dtype, device)
    return write_out("randn", out, _sample("normal", size, dtype, device, requires_grad,
                                           generator))


def rand_like(t, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return rand(tuple(t.shape), dtype=dtype or t.dtype, device=device or t.device,
                requires_grad=requires_grad)


def randn_like(t, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return randn(tuple(t.shape), dtype=dtype or t.dtype, device=device or t.device,
                 requires_grad=requires_grad)


def randint(low, high=None, size=None, *, dtype=None, device=None, requires_grad=False,
            generator=None) -> Tensor:
    """Integers uniform in ``[low, high)``; ``randint(high, size)`` also works."""
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ArgumentError(f"randint: expected low < high, got low={low}, high={high}")
    u = rand(size, dtype=_dt.float64, device=device, generator=generator)
    values = (u * (high - low)).floor() + low
    dt = _dt.get_dtype(dtype) if dtype is not None else _dt.int64
    return values.clamp(max=high - 1).to(dt)


def randint_like(t, low, high=None, *, dtype=None) -> Tensor:
    return randint(low, high, tuple(t.shape), dtype=dtype or t.dtype, device=t.device)


def randperm(n: int, *, dtype=None, device=None, generator=None) -> Tensor:
    """A random permutation of ``0..n-1``, drawn on the host generator."""
    if int(n) < 0:
        raise ArgumentError(f"randperm: Trying to create tensor with negative dimension {n}: "
                            f"[{n}]")
    perm = host_rng(generator).permutation(int(n))
    return tensor(perm, dtype=dtype or _dt.int64, device=device)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False) -> Tensor:
    """PyTorch's overloads: ``normal(mean_tensor, std=1.0)``, ``normal(mean, std_tensor)``,
    ``normal(mean_tensor, std_tensor)`` (broadcast) and ``normal(mean, std, size)``."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None:
            raise TypeError("normal(): size may only be given when mean and std are numbers")
        tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
        for t in tensors:
            if not t.dtype.is_floating_point:
                raise TypeError(f"normal(): expected a floating point mean and std, got a "
                                f"tensor of dtype {t.dtype}")
        if not isinstance(std, Tensor) and std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
        ref = tensors[0]
        sample = randn(shape, dtype=ref.dtype, device=ref.device, generator=generator)
        return sample * std + mean
    if size is None:
        raise TypeError("normal(): with a number for mean and for std, size is required")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    out = randn(size, dtype=dtype, device=device, generator=generator) * std + mean
    if requires_grad:
        out.requires_grad_(True)
    return out


def _check_probabilities(op, p, rows: bool) -> None:
    """PyTorch's errors for probabilities that are not: NaN, infinite or negative entries,
    above 1 for ``bernoulli``, a row of ``multinomial`` summing to zero (one host read)."""
    def decide(host):
        if not np.isfinite(host).all() or (host < 0).any():
            if rows:
                raise RuntimeError(f"{op}: probability tensor contains either `inf`, `nan` or "
                                   f"element < 0")
            raise RuntimeError(f"{op}: Expected p_in >= 0 && p_in <= 1 to be true, but got "
                               f"false (a probability is NaN, infinite or negative)")
        if not rows and (host > 1).any():
            raise RuntimeError(f"{op}: Expected p_in >= 0 && p_in <= 1 to be true, but got "
                               f"false (a probability is above 1)")
        if rows and host.size and (host.reshape(-1, host.shape[-1]).sum(-1) <= 0).any():
            raise RuntimeError(f"{op}: invalid multinomial distribution (sum of probabilities "
                               f"<= 0)")
        return True
    if p.numel():
        tracing.host_read(decide, p._k, p._data)


def bernoulli(p, *, generator=None) -> Tensor:
    _check_probabilities("bernoulli", p, rows=False)
    return (rand(tuple(p.shape), dtype=p.dtype, device=p.device, generator=generator) < p
            ).to(p.dtype)


def multinomial(probs, num_samples: int, replacement: bool = False, *, generator=None):
    """Indices drawn from the rows of ``probs`` (non-negative, need not sum to 1)."""
    _check_probabilities("multinomial", probs, rows=True)
    squeeze = probs.ndim == 1
    p = probs.reshape(1, -1) if squeeze else probs
    p = p.detach().to(_dt.float64)
    if num_samples > p.shape[-1] and not replacement:
        raise RuntimeError("multinomial: cannot sample n_sample > prob_dist.size(-1) samples "
                           "without replacement")
    if replacement or num_samples == 1:
        cdf = p.cumsum(-1)
        cdf = cdf / cdf[:, -1:]
        u = rand((p.shape[0], num_samples, 1), dtype=_dt.float64, device=p.device,
                 generator=generator)
        idx = (cdf.unsqueeze(1) < u).sum(-1).clamp(max=p.shape[-1] - 1)
    else:  # Gumbel top-k: sampling without replacement, proportional to p
        g = -(-rand(tuple(p.shape), dtype=_dt.float64, device=p.device,
                    generator=generator).clamp(min=1e-300).log()).log()
        keys = p.log() + g
        order = np.argsort(-np.asarray(keys), axis=-1, kind="stable")[:, :num_samples]
        idx = tensor(order, device=p.device)
    return idx.reshape(-1) if squeeze else idx
