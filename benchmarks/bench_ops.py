"""Elementwise, reduction and matmul throughput from 1e2 to 1e6 elements.

Sizes are element counts; matmul multiplies two square n x n matrices with n*n = size.
``ref`` runs only the small sizes (elementwise/reduction up to 1e4, matmul 1e2).
"""
import math

import plugrad

from ._common import DEVICES, randn, require, sync

SIZES = [100, 10_000, 1_000_000]


class Elementwise:
    params = (DEVICES, ["add", "mul", "exp", "where"], SIZES)
    param_names = ["device", "op", "size"]

    def setup(self, device, op, size):
        require(device, size)
        self.x = randn((size,), device, requires_grad=True)
        self.y = randn((size,), device)
        self.fn = {
            "add": lambda x, y: x + y,
            "mul": lambda x, y: x * y,
            "exp": lambda x, y: x.exp(),
            "where": lambda x, y: plugrad.where(x > y, x, y),
        }[op]

    def time_forward(self, device, op, size):
        with plugrad.no_grad():
            self.fn(self.x, self.y)
        sync(device)

    def time_forward_backward(self, device, op, size):
        self.x.grad = None
        self.fn(self.x, self.y).sum().backward()
        sync(device)


class Reduction:
    params = (DEVICES, ["sum", "mean", "max", "sum_dim1", "softmax"], SIZES)
    param_names = ["device", "op", "size"]

    def setup(self, device, op, size):
        require(device, size)
        rows = int(math.isqrt(size))
        self.x = randn((rows, size // rows), device, requires_grad=True)
        self.fn = {
            "sum": lambda x: x.sum(),
            "mean": lambda x: x.mean(),
            "max": lambda x: x.max(),
            "sum_dim1": lambda x: x.sum(dim=1),
            "softmax": lambda x: x.softmax(dim=-1),
        }[op]

    def time_forward(self, device, op, size):
        with plugrad.no_grad():
            self.fn(self.x)
        sync(device)

    def time_forward_backward(self, device, op, size):
        self.x.grad = None
        self.fn(self.x).sum().backward()
        sync(device)


class Matmul:
    params = (DEVICES, SIZES)
    param_names = ["device", "size"]

    def setup(self, device, size):
        require(device, size, ref_max=100)
        n = int(math.isqrt(size))
        self.a = randn((n, n), device, requires_grad=True)
        self.b = randn((n, n), device, requires_grad=True)

    def time_forward(self, device, size):
        with plugrad.no_grad():
            self.a @ self.b
        sync(device)

    def time_forward_backward(self, device, size):
        self.a.grad = None
        self.b.grad = None
        (self.a @ self.b).sum().backward()
        sync(device)
