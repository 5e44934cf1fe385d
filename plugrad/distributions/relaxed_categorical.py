"""PyTorch's module path ``torch.distributions.relaxed_categorical``; the code is in ``relaxed``."""
from plugrad.distributions.relaxed import ExpRelaxedCategorical, RelaxedOneHotCategorical

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]
