"""Regression cases for divergences the differential suite found and that were fixed: each
compares plugrad with torch directly, on every built-in device."""
from __future__ import annotations

import math

import numpy as np
import pytest

import plugrad
import plugrad.nn.functional as F

torch = pytest.importorskip("torch", reason="these cases compare with PyTorch, which is "
                            "not installed")


def host(t):
    return np.asarray(t.detach().cpu().numpy())


@pytest.mark.parametrize("name, args", [("hardtanh", (-1.7, 2.9)), ("hardtanh", ()),
                                        ("relu6", ())])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_hardtanh_stays_integer(device, name, args, dtype):
    """F.hardtanh/relu6 of an integer tensor: integer values (bounds truncated), and the
    backend array holds the tensor's own dtype (it held float64 under an int32 tensor)."""
    values = [7, 3, -2, 0, 1, -5]
    got = getattr(F, name)(plugrad.tensor(values, dtype=getattr(plugrad, dtype),
                                          device=device), *args)
    want = getattr(torch.nn.functional, name)(torch.tensor(values, dtype=getattr(torch, dtype)),
                                              *args)
    assert got.dtype.name == dtype and host(got).dtype == np.dtype(dtype)
    np.testing.assert_array_equal(host(got), want.numpy())


def test_kl_div_negative_and_nan_targets_give_nan(device):
    """Only an exact zero target contributes 0 (xlogy); a negative or NaN target is NaN."""
    x, t = [0.3, 0.2, 0.1, 0.4], [0.0, -1.0, 0.5, math.nan]
    got = F.kl_div(plugrad.tensor(x, dtype=plugrad.float64, device=device),
                   plugrad.tensor(t, dtype=plugrad.float64, device=device), reduction="none")
    want = torch.nn.functional.kl_div(torch.tensor(x, dtype=torch.float64),
                                      torch.tensor(t, dtype=torch.float64), reduction="none")
    np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", ["fmod", "remainder", "floor_divide"])
def test_integer_division_of_empty_broadcasts(device, name):
    """An empty integer divisor of any shape (not only (0,)) needs no zero check: it
    crashed in NumPy's max of an empty array."""
    a = plugrad.zeros(0, dtype=plugrad.int32, device=device)
    b = plugrad.zeros(1, 0, 1, dtype=plugrad.int32, device=device)
    want = getattr(torch, name)(torch.zeros(0, dtype=torch.int32),
                                torch.zeros(1, 0, 1, dtype=torch.int32))
    got = getattr(plugrad, name)(a, b)
    assert tuple(got.shape) == tuple(want.shape) and got.dtype.name == "int32"


_BOOL_REJECTED = {
    "abs": lambda lib, b: lib.abs(b), "floor": lambda lib, b: lib.floor(b),
    "ceil": lambda lib, b: lib.ceil(b), "round": lambda lib, b: lib.round(b),
    "trunc": lambda lib, b: lib.trunc(b), "abs_": lambda lib, b: b.clone().abs_(),
    "argmax": lambda lib, b: lib.argmax(b), "argmin": lambda lib, b: lib.argmin(b, 1),
    "topk": lambda lib, b: lib.topk(b, 1), "matmul": lambda lib, b: lib.matmul(b, b),
    "mm": lambda lib, b: lib.mm(b, b), "mv": lambda lib, b: lib.mv(b, b[0]),
    "dot": lambda lib, b: lib.dot(b[0], b[1]), "bmm": lambda lib, b: lib.bmm(b[None], b[None]),
    "addmm": lambda lib, b: lib.addmm(b, b, b), "addcmul": lambda lib, b: lib.addcmul(b, b, b),
    "addcdiv": lambda lib, b: lib.addcdiv(b, b, b),
    "addcdiv of ints": lambda lib, b: lib.addcdiv(b.float(), b.long(), b.long()),
}


@pytest.mark.parametrize("name", sorted(_BOOL_REJECTED))
def test_bool_inputs_torch_rejects_are_rejected(device, name):
    """PyTorch has no kernel of these for bool (or, addcdiv, integer) operands; plugrad
    computed a result. Both must raise now (the message names the op)."""
    values = [[True, False], [False, True]]
    with pytest.raises((RuntimeError, NotImplementedError)):
        _BOOL_REJECTED[name](torch, torch.tensor(values))
    with pytest.raises(TypeError, match=name.split()[0].rstrip("_")):
        _BOOL_REJECTED[name](plugrad, plugrad.tensor(values, device=device))


def test_bool_products_that_torch_allows_still_work(device):
    """Only products of bool raise: outer (a broadcast multiply) and sign keep working."""
    b = plugrad.tensor([True, False], device=device)
    np.testing.assert_array_equal(host(plugrad.outer(b, b)),
                                  torch.outer(torch.tensor([True, False]),
                                              torch.tensor([True, False])).numpy())
    np.testing.assert_array_equal(host(plugrad.sign(b)), [True, False])
