"""Loader internals at PyTorch's paths (``torch.utils.data._utils.collate``, ``.worker``)."""
from plugrad.data._utils import collate, worker  # noqa: F401
