"""Random numbers: a generator per backend seeded by ``manual_seed``; host ``Generator``s."""
import numpy as np
import pytest

import plugrad
from plugrad.backends.hooks import hookimpl
from plugrad.core.registry import get_registry


def test_same_seed_same_stream(device):
    plugrad.manual_seed(7)
    a = plugrad.rand(5, device=device).tolist() + plugrad.randn(3, device=device).tolist()
    plugrad.manual_seed(7)
    b = plugrad.rand(5, device=device).tolist() + plugrad.randn(3, device=device).tolist()
    assert a == b
    plugrad.manual_seed(8)
    assert plugrad.rand(5, device=device).tolist() != a[:5]
    assert plugrad.initial_seed() == 8


def test_stream_continues_between_calls(device):
    plugrad.manual_seed(1)
    a, b = plugrad.rand(4, device=device).tolist(), plugrad.rand(4, device=device).tolist()
    assert a != b


def test_backends_have_their_own_generators():
    plugrad.manual_seed(3)
    cpu1 = plugrad.rand(3).tolist()
    plugrad.manual_seed(3)
    plugrad.rand(5, device="ref")  # drawing on ref does not advance cpu's stream
    assert plugrad.rand(3).tolist() == cpu1


class _KernelsPlugin:
    """Any plugin registration rebuilds every kernel table."""

    @hookimpl
    def plugrad_kernels(self, backend):
        return None


def test_registering_a_plugin_does_not_reseed():
    plugrad.manual_seed(5)
    expected = plugrad.rand(6).tolist()
    plugrad.manual_seed(5)
    first = plugrad.rand(3).tolist()
    plugin = _KernelsPlugin()
    get_registry().register_plugin(plugin)  # rebuilds every kernel table
    try:
        assert first + plugrad.rand(3).tolist() == expected
        plugrad.manual_seed(5)
        assert plugrad.rand(6).tolist() == expected  # manual_seed still reaches cpu
    finally:
        get_registry().unregister_plugin(plugin)


def test_rand_randn_shapes_and_ranges(device):
    u = plugrad.rand(2, 50, device=device)
    assert u.shape == (2, 50) and u.dtype is plugrad.float32
    assert 0 <= u.min().item() and u.max().item() < 1
    n = plugrad.randn((200,), dtype=plugrad.float64, device=device)
    assert n.dtype is plugrad.float64 and abs(n.mean().item()) < 0.3
    assert plugrad.rand((), device=device).shape == ()
    with pytest.raises(TypeError, match="randn: expected a floating dtype, got plugrad.int64"):
        plugrad.randn(2, dtype=plugrad.int64, device=device)


def test_randint_bounds(device):
    t = plugrad.randint(3, 7, (400,), device=device)
    assert t.dtype is plugrad.int64 and t.shape == (400,)
    assert set(t.tolist()) == {3, 4, 5, 6}
    assert set(plugrad.randint(2, (100,), device=device).tolist()) == {0, 1}
    neg = plugrad.randint(-5, -3, [50], dtype=plugrad.int32, device=device)
    assert neg.dtype is plugrad.int32 and set(neg.tolist()) <= {-5, -4}
    big = plugrad.randint(0, 2 ** 40, (20,), device=device)
    assert 0 <= big.min().item() and big.max().item() < 2 ** 40


@pytest.mark.parametrize("args, error, message", [
    ((5, 3, (2,)), ValueError, "randint: expected low < high, got low=5, high=3"),
    ((3, 3, (2,)), ValueError, "randint: expected low < high"),
    ((3, 5), TypeError, "randint\\(\\) missing required argument 'size'"),
])
def test_randint_refuses_bad_bounds(args, error, message):
    with pytest.raises(error, match=message):
        plugrad.randint(*args)


def test_randperm(device):
    p = plugrad.randperm(10, device=device)
    assert p.dtype is plugrad.int64 and sorted(p.tolist()) == list(range(10))
    assert plugrad.randperm(0, device=device).tolist() == []
    plugrad.manual_seed(2)
    a = plugrad.randperm(8).tolist()
    plugrad.manual_seed(2)
    assert plugrad.randperm(8, device=device).tolist() == a


def test_generator_objects(device):
    g = plugrad.Generator().manual_seed(42)
    assert isinstance(g, plugrad.Generator) and g.initial_seed() == 42
    a = plugrad.rand(4, generator=g, device=device).tolist()
    state = g.get_state()
    b = plugrad.rand(4, generator=g, device=device).tolist()
    g.set_state(state)
    assert plugrad.rand(4, generator=g, device=device).tolist() == b
    g.manual_seed(42)
    plugrad.manual_seed(0)
    assert plugrad.rand(4, generator=g, device=device).tolist() == a  # independent of global
    h = plugrad.Generator().manual_seed(42)
    assert plugrad.randperm(6, generator=h).tolist() == \
        plugrad.randperm(6, generator=plugrad.Generator().manual_seed(42)).tolist()
    ints = plugrad.randint(0, 4, (50,), generator=h, device=device)
    assert set(ints.tolist()) <= {0, 1, 2, 3}


def test_generator_gives_the_same_values_on_every_device():
    g = plugrad.Generator()
    on_cpu = plugrad.rand(4, generator=g.manual_seed(9), dtype=plugrad.float64).tolist()
    on_ref = plugrad.rand(4, generator=g.manual_seed(9), dtype=plugrad.float64,
                          device="ref").tolist()
    assert on_cpu == on_ref


def test_default_generator_seeds_everything():
    assert plugrad.manual_seed(11) is plugrad.default_generator
    a = plugrad.rand(3).tolist()
    plugrad.default_generator.manual_seed(11)
    assert plugrad.rand(3).tolist() == a and plugrad.default_generator.initial_seed() == 11
    s = plugrad.seed()
    assert plugrad.initial_seed() == s
    # Generator.seed() returns the fresh seed it set (torch.default_generator.seed())
    s = plugrad.default_generator.seed()
    assert plugrad.initial_seed() == s == plugrad.default_generator.initial_seed()
    g = plugrad.Generator()
    assert g.seed() == g.initial_seed()


def test_in_place_samplers(device):
    t = plugrad.zeros(100, device=device)
    t.uniform_(2., 3.)
    assert 2 <= t.min().item() and t.max().item() < 3
    t.normal_(5., 0.01)
    assert abs(t.mean().item() - 5.) < 0.01
    b = plugrad.zeros(50, device=device).bernoulli_(0.5)
    assert set(b.tolist()) <= {0., 1.}
    w = plugrad.zeros(2, requires_grad=True, device=device)
    with plugrad.no_grad():
        w.uniform_()
    assert w.is_leaf and w.requires_grad


def test_multinomial_and_bernoulli(device):
    probs = plugrad.tensor([0., 1., 3.], device=device)
    draws = plugrad.multinomial(probs, 200, replacement=True)
    assert draws.dtype is plugrad.int64 and draws.shape == (200,)
    assert set(draws.tolist()) == {1, 2}
    assert sorted(plugrad.multinomial(probs, 2).tolist()) == [1, 2]
    rows = plugrad.multinomial(plugrad.tensor([[1., 0.], [0., 1.]], device=device), 1)
    assert rows.tolist() == [[0], [1]]
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size\\(-1\\)"):
        plugrad.multinomial(probs, 4)
    p = plugrad.tensor([0., 1.], device=device)
    assert plugrad.bernoulli(p).tolist() == [0., 1.]


def test_normal_function(device):
    t = plugrad.normal(3., 0.001, (10,), device=device)
    assert t.shape == (10,) and np.allclose(t.tolist(), 3., atol=0.01)


def test_rng_state_round_trip_repeats_every_generator(device):
    plugrad.manual_seed(7)
    plugrad.rand(3, device=device)
    state = plugrad.get_rng_state()
    assert state.dtype == plugrad.uint8 and state.ndim == 1 and state.device.type == "cpu"
    after = (plugrad.rand(5, device=device).tolist(), plugrad.randn(2, device=device).tolist(),
             plugrad.randperm(9).tolist())
    plugrad.rand(4, device=device)  # move on, then rewind
    plugrad.set_rng_state(state)
    assert (plugrad.rand(5, device=device).tolist(), plugrad.randn(2, device=device).tolist(),
            plugrad.randperm(9).tolist()) == after
    assert plugrad.random.get_rng_state().tolist() != state.tolist()  # it moved on again
    plugrad.default_generator.set_state(state)
    assert plugrad.rand(5, device=device).tolist() == after[0]


def test_rng_state_survives_save_and_load(tmp_path):
    plugrad.manual_seed(3)
    path = tmp_path / "rng.pt"
    plugrad.save({"rng": plugrad.get_rng_state()}, path)
    expected = plugrad.rand(4).tolist()
    plugrad.set_rng_state(plugrad.load(path)["rng"])
    assert plugrad.rand(4).tolist() == expected


def test_set_rng_state_refuses_what_is_not_a_state():
    with pytest.raises(TypeError, match="expected a torch.ByteTensor"):
        plugrad.set_rng_state(plugrad.zeros(4))
    with pytest.raises(RuntimeError, match="not a generator state"):
        plugrad.set_rng_state(plugrad.zeros(4, dtype=plugrad.uint8))
    with pytest.raises(TypeError, match="expected a torch.ByteTensor"):
        plugrad.Generator().set_state([1, 2])


def test_rng_state_restarts_a_backend_first_used_after_it():
    """A device first used after get_rng_state restarts from the seed, as its first use did."""
    registry = get_registry()
    plugrad.manual_seed(11)
    registry.seeded.pop("ref", None)  # as if ref had not been used yet
    registry._tables.pop("ref", None)
    state = plugrad.get_rng_state()
    first = plugrad.rand(3, device="ref").tolist()
    plugrad.set_rng_state(state)
    assert plugrad.rand(3, device="ref").tolist() == first
