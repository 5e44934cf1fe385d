"""``CTCLoss`` (over ``nn.functional.ctc_loss``) and ``NLLLoss2d``, PyTorch's old name of
``NLLLoss`` for image-shaped inputs."""
from __future__ import annotations

from plugrad.nn import functional as F
from plugrad.nn.losses import NLLLoss, _Loss

__all__ = ["CTCLoss", "NLLLoss2d"]


class CTCLoss(_Loss):
    """The Connectionist Temporal Classification loss (``blank``, ``reduction``,
    ``zero_infinity`` as in PyTorch)."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


class NLLLoss2d(NLLLoss):
    """``NLLLoss`` (PyTorch keeps this name for ``(N, C, H, W)`` inputs)."""
