"""``torch.backends.mps``: Apple's Metal backend; plugrad has none (a plugin could add one)."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
