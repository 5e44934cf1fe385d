"""Regression cases for divergences of the core tensor ops that the differential suite found
and that were fixed (issue 16): each compares plugrad with torch directly, on every built-in
device. (``test_fixed.py`` holds the earlier ones.)"""
from __future__ import annotations

import numpy as np
import pytest

import plugrad
import plugrad.nn.functional as F

torch = pytest.importorskip("torch", reason="these cases compare with PyTorch, which is "
                            "not installed")


def host(t):
    return np.asarray(t.detach().cpu().numpy())


_SOFTMAXES = {
    "softmax": lambda lib, x, d, **kw: lib.softmax(x, d, **kw),
    "log_softmax": lambda lib, x, d, **kw: lib.log_softmax(x, d, **kw),
    "Tensor.softmax": lambda lib, x, d, **kw: x.softmax(d, **kw),
    "F.softmax": lambda lib, x, d, **kw: (F if lib is plugrad else
                                          torch.nn.functional).softmax(x, d, **kw),
    "F.log_softmax": lambda lib, x, d, **kw: (F if lib is plugrad else
                                              torch.nn.functional).log_softmax(x, d, **kw),
}


@pytest.mark.parametrize("name", sorted(_SOFTMAXES))
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64"])
def test_softmax_of_integers_is_not_implemented(device, name, dtype):
    """PyTorch has no integer softmax kernel (NotImplementedError naming the dtype);
    plugrad promoted to float. An empty input runs no kernel and keeps its dtype, and
    ``dtype=`` converts first, so both still work."""
    fn = _SOFTMAXES[name]
    values = [[1, 0, 1], [0, 1, 1]]
    for d in (0, 1):
        with pytest.raises(NotImplementedError):
            fn(torch, torch.tensor(values, dtype=getattr(torch, dtype)), d)
        with pytest.raises(NotImplementedError, match=r"softmax.*not implemented for"):
            fn(plugrad, plugrad.tensor(values, dtype=getattr(plugrad, dtype), device=device), d)
    empty = fn(plugrad, plugrad.zeros(0, 3, dtype=getattr(plugrad, dtype), device=device), 1)
    want = fn(torch, torch.zeros(0, 3, dtype=getattr(torch, dtype)), 1)
    assert empty.dtype.name == str(want.dtype).split(".")[1] and tuple(empty.shape) == (0, 3)
    got = fn(plugrad, plugrad.tensor(values, dtype=getattr(plugrad, dtype), device=device), 1,
             dtype=plugrad.float64)
    want = fn(torch, torch.tensor(values, dtype=getattr(torch, dtype)), 1, dtype=torch.float64)
    np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-12)


_FLIPS = {
    "fn int": lambda lib, x: lib.flip(x, 0), "fn float": lambda lib, x: lib.flip(x, (0.0,)),
    "fn dims=int": lambda lib, x: lib.flip(x, dims=1), "fn none": lambda lib, x: lib.flip(x),
    "fn twice": lambda lib, x: lib.flip(x, (0, -2)), "method none": lambda lib, x: x.flip(),
    "fn tuple": lambda lib, x: lib.flip(x, (0, 1)), "fn list": lambda lib, x: lib.flip(x, [1]),
    "fn empty": lambda lib, x: lib.flip(x, ()), "method ints": lambda lib, x: x.flip(1, 0),
    "method int": lambda lib, x: x.flip(-1), "method tuple": lambda lib, x: x.flip((0,)),
    "method dims=": lambda lib, x: x.flip(dims=[1]),
}


@pytest.mark.parametrize("name", sorted(_FLIPS))
def test_flip_dims_as_in_pytorch(device, name):
    """``torch.flip(x, 0)`` is a TypeError (``dims`` is a tuple of ints; only the method
    takes ints as varargs) and a repeated dim a RuntimeError; plugrad accepted both."""
    values = [[1, 2, 3], [4, 5, 6]]
    try:
        want = _FLIPS[name](torch, torch.tensor(values)).tolist()
    except (TypeError, RuntimeError) as exc:
        with pytest.raises(type(exc), match="dims"):
            _FLIPS[name](plugrad, plugrad.tensor(values, device=device))
    else:
        assert _FLIPS[name](plugrad, plugrad.tensor(values, device=device)).tolist() == want
