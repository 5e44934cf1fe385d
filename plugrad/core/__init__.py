"""The core: Tensor, dtypes, devices, autograd, differentiable ops, the backend registry."""
