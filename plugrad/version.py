"""``torch.version`` under the torch alias: the PyTorch API level plugrad follows.

``cuda`` and ``hip`` are None as in a CPU build of PyTorch (plugrad's CUDA backend is CuPy,
found at run time: ask ``plugrad.cuda.is_available()``).
"""
from plugrad.torch_alias import torch_version

__version__ = torch_version()
cuda = None
hip = None
git_version = "plugrad"
debug = False
