"""Per-op overhead on tiny tensors (16 elements): dispatch + graph recording + kernel.

``time_forward`` runs one op with grad mode on (the graph is recorded), ``time_forward_nograd``
the same op under ``no_grad`` (dispatch + kernel only), ``time_forward_backward`` the op, a sum
and ``backward()``. ``TinyLoop`` is the seeds' Celsius step, the extreme of the tiny regime.
"""
import plugrad

from ._common import DEVICES, randn, require, sync

OPS = {
    "add": lambda x, y: x + y,
    "mul": lambda x, y: x * y,
    "exp": lambda x, y: x.exp(),
    "relu": lambda x, y: x.relu(),
    "sum": lambda x, y: x.sum(),
    "matmul": lambda x, y: x @ y,
    "getitem": lambda x, y: x[1:3],
}


class TinyOp:
    params = (DEVICES, list(OPS))
    param_names = ["device", "op"]

    def setup(self, device, op):
        require(device)
        shape = (4, 4)
        self.x = randn(shape, device, requires_grad=True)
        self.y = randn(shape, device)
        self.fn = OPS[op]
        self.device = device

    def time_forward(self, device, op):
        self.fn(self.x, self.y)
        sync(device)

    def time_forward_nograd(self, device, op):
        with plugrad.no_grad():
            self.fn(self.x, self.y)
        sync(device)

    def time_forward_backward(self, device, op):
        self.x.grad = None
        self.fn(self.x, self.y).sum().backward()
        sync(device)


class TinyExpression:
    """``(x * y + x).sum().backward()`` on 16 elements, as in compare.py."""
    params = DEVICES
    param_names = ["device"]

    def setup(self, device):
        require(device)
        self.x = randn((16,), device, requires_grad=True)
        self.y = randn((16,), device)

    def time_forward_backward(self, device):
        self.x.grad = None
        (self.x * self.y + self.x).sum().backward()
        sync(device)


class CelsiusStep:
    """One step of the seeds' Celsius -> Fahrenheit loop."""
    params = DEVICES
    param_names = ["device"]

    def setup(self, device):
        require(device)
        self.celsius = plugrad.tensor([0.0, 100.0], device=device)
        self.fahrenheit = plugrad.tensor([32.0, 212.0], device=device)
        self.weight = plugrad.tensor(0.0, requires_grad=True, device=device)
        self.bias = plugrad.tensor(0.0, requires_grad=True, device=device)

    def time_step(self, device):
        weight, bias = self.weight, self.bias
        error = ((weight * self.celsius + bias - self.fahrenheit) ** 2).mean()
        error.backward()
        with plugrad.no_grad():
            weight -= 0.0001 * weight.grad
            bias -= 0.0001 * bias.grad
            weight.grad.zero_()
            bias.grad.zero_()
        sync(device)
