"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their cells, as ``torch.nn``.

Parameter names, shapes, order and initialisation are PyTorch's, so state dicts move both
ways; inputs may be padded ``(T, N, *)`` / ``(N, T, *)``, unbatched ``(T, *)`` or a
:class:`~plugrad.nn.utils.rnn.PackedSequence`. The time loop lives in
:mod:`plugrad.nn.modules._recurrence`.
"""
from __future__ import annotations

import math
import numbers
import warnings

import plugrad
from plugrad import Tensor
from plugrad.nn import functional as F
from plugrad.nn import init
from plugrad.nn.modules._recurrence import input_bias, rnn_step, run_fused_padded, \
    run_layers
from plugrad.nn.modules.module import Module
from plugrad.nn.parameter import Parameter
from plugrad.nn.utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _check_size(name: str, value, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be greater than zero")


def _check_dtype(x, weight) -> None:
    if x.dtype != weight.dtype:
        raise ValueError(f"RNN input dtype ({x.dtype}) does not match weight dtype "
                         f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                         f"convert model: model.to({x.dtype})")


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters of every layer and direction, argument
    checks, and the handling of padded, unbatched and packed input."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__()
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if (isinstance(dropout, bool) or not isinstance(dropout, numbers.Number)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        _check_size("hidden_size", hidden_size)
        _check_size("num_layers", num_layers)
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so "
                          f"non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        if not isinstance(proj_size, int) or proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, \
            proj_size
        factory = {"device": device, "dtype": dtype}
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            for d in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                suffix = "_reverse" if d == 1 else ""
                names = []
                for kind, shape in shapes:
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(plugrad.empty(*shape, **factory)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op: the weights are never packed into one cuDNN buffer here."""

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def _weight_groups(self) -> list:
        """``(w_ih, w_hh, b_ih, b_hh, w_hr)`` per layer and direction (absent ones None)."""
        groups = []
        for names in self._all_weights:
            ws = [getattr(self, n) for n in names]
            w_ih, w_hh = ws[0], ws[1]
            b_ih, b_hh = (ws[2], ws[3]) if self.bias else (None, None)
            groups.append((w_ih, w_hh, b_ih, b_hh, ws[-1] if self.proj_size > 0 else None))
        return groups

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ------------------------------------------------------------------ forward
    def _state_shape(self, batch: int, cell: bool = False) -> tuple:
        directions = 2 if self.bidirectional else 1
        size = self.hidden_size if cell or self.proj_size == 0 else self.proj_size
        return (self.num_layers * directions, batch, size)

    def _prepare_input(self, input):
        """``(rows, batch_sizes, batch, unbatched, sorted_indices)``: the input as packed rows
        (time step by time step) for a PackedSequence, else as a ``(T, N, *)`` view."""
        name = type(self).__name__
        if isinstance(input, PackedSequence):
            data = input.data
            if data.dim() != 2:
                raise RuntimeError(f"{name}: input must have 2 dimensions, got {data.dim()} "
                                   f"(the data of a PackedSequence is (sum of lengths, "
                                   f"input_size))")
            batch_sizes = [int(b) for b in input.batch_sizes.tolist()]
            rows, batch, unbatched = data, (batch_sizes[0] if batch_sizes else 0), False
            sorted_indices = input.sorted_indices
        else:
            if not isinstance(input, Tensor):
                raise TypeError(f"{name}: expected a Tensor or a PackedSequence as input, got "
                                f"{type(input).__name__}")
            if input.dim() not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                                 f"instead")
            unbatched = input.dim() == 2
            rows = input.unsqueeze(1) if unbatched else \
                (input.transpose(0, 1) if self.batch_first else input)  # (T, N, *): a view
            batch_sizes, sorted_indices = [rows.shape[1]] * rows.shape[0], None
            batch = rows.shape[1]
        if rows.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {rows.shape[-1]}")
        _check_dtype(rows, self.weight_ih_l0)
        if not batch_sizes:
            raise ValueError(f"{name}: expected a sequence of at least one time step, got "
                             f"input of shape {list(rows.shape)} with no time steps")
        return rows, batch_sizes, batch, unbatched, sorted_indices

    def _initial_state(self, hx, which: str, rows, batch: int, unbatched: bool,
                       sorted_indices, cell: bool = False):
        """The initial state ``hx`` checked, batched and put in packed order (zeros if None)."""
        shape = self._state_shape(batch, cell)
        if hx is None:
            return plugrad.zeros(shape, dtype=rows.dtype, device=rows.device)
        if not isinstance(hx, Tensor):
            raise TypeError(f"{type(self).__name__}: expected {which} to be a Tensor, got "
                            f"{type(hx).__name__}")
        if unbatched:
            hx = hx.unsqueeze(1)
        elif sorted_indices is not None:
            hx = hx.index_select(1, sorted_indices)
        if tuple(hx.shape) != shape:
            raise RuntimeError(f"Expected {which} size {shape}, got {list(hx.shape)}")
        if hx.dtype != rows.dtype:
            raise ValueError(f"{type(self).__name__}: {which} dtype ({hx.dtype}) does not "
                             f"match input dtype ({rows.dtype})")
        return hx

    def _check_hx_dims(self, unbatched: bool, *states) -> None:
        dims = [s.dim() for s in states if isinstance(s, Tensor)]
        want = 2 if unbatched else 3
        if any(d != want for d in dims):
            kind = "unbatched 2-D" if unbatched else "batched 3-D"
            if len(states) == 2:
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                   f"got ({dims[0]}-D, {dims[-1]}-D) tensors")
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                               f"{dims[0]}-D tensor")

    def _run(self, input, hx, cx):
        """The shared forward; ``cx`` is ``False`` for RNN and GRU (no cell state)."""
        rows, batch_sizes, batch, unbatched, sorted_indices = self._prepare_input(input)
        lstm = cx is not False
        if lstm:
            self._check_hx_dims(unbatched, hx, cx)
        else:
            self._check_hx_dims(unbatched, hx)
        h0 = self._initial_state(hx, "hidden[0]" if lstm else "hidden", rows, batch, unbatched,
                                 sorted_indices)
        c0 = self._initial_state(cx, "hidden[1]", rows, batch, unbatched, sorted_indices,
                                 cell=True) if lstm else None
        directions = 2 if self.bidirectional else 1
        fused = None
        if rows.dim() == 3:
            if self.mode == "GRU" or (lstm and self.proj_size == 0):  # whole layers on the
                # lstm/gru kernels, where they apply
                fused = run_fused_padded(self.mode, rows, h0, c0, self._weight_groups(),
                                         self.num_layers, directions, self.dropout,
                                         self.training)
            if fused is None:
                rows = rows.reshape(rows.shape[0] * rows.shape[1], rows.shape[2])
        if fused is not None:
            out, h_n, c_n = fused
        else:
            out, h_n, c_n = run_layers(self.mode, rows, batch_sizes, h0, c0,
                                       self._weight_groups(), self.num_layers, directions,
                                       self.dropout, self.training)
        if isinstance(input, PackedSequence):
            output = PackedSequence(out, input.batch_sizes, input.sorted_indices,
                                    input.unsorted_indices)
            if input.unsorted_indices is not None:
                h_n = h_n.index_select(1, input.unsorted_indices)
                c_n = c_n.index_select(1, input.unsorted_indices) if lstm else None
            return output, h_n, c_n
        output = out if out.dim() == 3 else out.reshape(len(batch_sizes), batch, out.shape[-1])
        if unbatched:
            return output.squeeze(1), h_n.squeeze(1), (c_n.squeeze(1) if lstm else None)
        if self.batch_first:
            output = output.transpose(0, 1)
        return output, h_n, c_n

    def forward(self, input, hx=None):
        output, h_n, _ = self._run(input, hx, False)
        return output, h_n


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ``relu``).

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False)``; as in PyTorch,
    ``nonlinearity`` may be the fourth positional argument."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n in PyTorch's order and formulas)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o), optionally with a projection of the
    hidden state to ``proj_size`` (``weight_hr_l*``); returns ``output, (h_n, c_n)``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        if hx is None:
            h, c = None, None
        elif isinstance(hx, (tuple, list)) and len(hx) == 2:
            h, c = hx
        else:
            raise TypeError(f"LSTM: hx should be a tuple (h_0, c_0) of two Tensors, got "
                            f"{type(hx).__name__}"
                            f"{f' of length {len(hx)}' if isinstance(hx, (tuple, list)) else ''}")
        output, h_n, c_n = self._run(input, h, c)
        return output, (h_n, c_n)


# ====================================================================== cells
class RNNCellBase(Module):
    """One step of a recurrent layer: the parameters ``weight_ih``, ``weight_hh``,
    ``bias_ih``, ``bias_hh`` and the input checks shared by the cells."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(plugrad.empty(num_chunks * hidden_size, input_size,
                                                 **factory))
        self.weight_hh = Parameter(plugrad.empty(num_chunks * hidden_size, hidden_size,
                                                 **factory))
        if bias:
            self.bias_ih = Parameter(plugrad.empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(plugrad.empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _batched(self, input, states):
        """``(input, states, batched)`` with a batch dim added to unbatched (1-D) input and
        states (zeros for None), after PyTorch's checks."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             f"instead")
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        if x.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {x.shape[1]} expected "
                               f"{self.input_size}")
        _check_dtype(x, self.weight_ih)
        out = []
        for k, s in enumerate(states):
            label = f"hx[{k}]" if len(states) > 1 else "hidden"
            if s is None:
                out.append(plugrad.zeros(x.shape[0], self.hidden_size, dtype=x.dtype,
                                         device=x.device))
                continue
            if s.dim() != input.dim():
                raise ValueError(f"{name}: Expected {label} to be {input.dim()}D like the "
                                 f"input, got {s.dim()}D instead")
            s = s if batched else s.unsqueeze(0)
            if s.shape[0] != x.shape[0]:
                raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{k} "
                                   f"batch size {s.shape[0]}")
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {s.shape[1]}, "
                                   f"expected {self.hidden_size}")
            out.append(s)
        return x, out, batched

    def _step(self, mode, x, h, c):
        xw = F.linear(x, self.weight_ih, input_bias(mode, self.bias_ih, self.bias_hh))
        return rnn_step(mode, xw, h, c, self.weight_hh, self.bias_hh, None)


class RNNCell(RNNCellBase):
    """``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ``relu``)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), batched = self._batched(input, [hx])
        h, _ = self._step("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", x, h, None)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; ``hx`` is ``(h, c)``; returns ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        if hx is None:
            hx = (None, None)
        elif not (isinstance(hx, (tuple, list)) and len(hx) == 2):
            raise TypeError(f"LSTMCell: hx should be a tuple (h, c) of two Tensors, got "
                            f"{type(hx).__name__}")
        x, (h, c), batched = self._batched(input, list(hx))
        h, c = self._step("LSTM", x, h, c)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step; returns ``h'``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._batched(input, [hx])
        h, _ = self._step("GRU", x, h, None)
        return h if batched else h.squeeze(0)
