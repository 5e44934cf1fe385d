"""PyTorch's ``torch.backends`` knobs, which the torch alias maps here.

A PyTorch program sets ``torch.backends.cudnn.benchmark``, ``cudnn.deterministic`` or
``torch.backends.cuda.matmul.allow_tf32`` and asks ``torch.backends.mps.is_available()``.
plugrad has no cuDNN, TF32 or MPS paths, so the knobs are kept and answered (as PyTorch on
a machine without them does) and change no result. It is a package of its own because
``plugrad.backends`` holds plugrad's backend plugins: under ``python -m plugrad run``,
``torch.backends`` is this package and ``plugrad.backends`` stays what it is.
"""
from plugrad.torch_backends import cpu, cuda, cudnn, mkldnn, mps, openmp, opt_einsum  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkldnn", "mps", "openmp", "opt_einsum"]
