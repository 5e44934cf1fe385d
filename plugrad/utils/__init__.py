"""``plugrad.utils``: PyTorch's ``torch.utils`` namespace (``plugrad.utils.data``)."""
from plugrad.utils import data  # noqa: F401
