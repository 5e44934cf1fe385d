"""``torch.backends.cpu``."""


def get_cpu_capability() -> str:
    """The vector instruction set PyTorch would report; NumPy picks its own at run time."""
    return "DEFAULT"
