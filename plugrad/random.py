"""``torch.random`` at PyTorch's path: the default generator and its seeding."""
from plugrad.core.random import (Generator, default_generator, initial_seed, manual_seed,
                                 seed)

__all__ = ["Generator", "default_generator", "initial_seed", "manual_seed", "seed"]
