"""The package name plugrad's objects print under.

``plugrad`` normally; ``torch`` while the torch alias is installed (``python -m plugrad run``,
:func:`plugrad.install_torch_alias`), so that a PyTorch program printing a shape, a dtype or
``x.type()`` shows what it shows under PyTorch (``torch.Size([2, 3])``, ``torch.float32``,
``'torch.FloatTensor'``).
"""
prefix = "plugrad"


def set_prefix(name: str) -> str:
    """Print under ``name`` from now on; returns the previous prefix."""
    global prefix
    previous, prefix = prefix, name
    return previous
