"""``plugrad.autograd.gradcheck`` as a module too (``from ...gradcheck import GradcheckError``)."""
from plugrad.core.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]
