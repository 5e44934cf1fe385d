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
