"""``torch.random`` at PyTorch's path: the default generator, its seeding and state."""
from plugrad.core.random import (Generator, default_generator, get_rng_state, initial_seed,
                                 manual_seed, seed, set_rng_state)

__all__ = ["Generator", "default_generator", "get_rng_state", "initial_seed", "manual_seed",
           "seed", "set_rng_state"]
