"""Chains of in-place ops (``x.reciprocal_().mul_(2)``): PyTorch refuses backward exactly
where an op saved the value a later in-place op changed (reciprocal, exp, sqrt, tanh and
sigmoid keep their result; erfinv and sin their input), on a tensor or on a view of one.
plugrad must refuse and accept the same chains, with the same gradients."""
from __future__ import annotations

import numpy as np
import pytest

import plugrad

torch = pytest.importorskip("torch", reason="these cases compare with PyTorch, which is "
                            "not installed")

OPS = ["reciprocal_", "exp_", "sqrt_", "rsqrt_", "tan_", "log2_", "log10_", "tanh_", "sigmoid_", "erfinv_", "erf_",
       "sin_", "cos_", "log_", "abs_", "neg_", "relu_", "square_", "expm1_", "log1p_",
       "atan_", "floor_", "sign_", "trunc_", "frac_", "exp2_", "sinc_"]
FOLLOW = {"mul_": lambda t: t.mul_(2), "add_": lambda t: t.add_(1),
          "div_ self": lambda t: t.div_(t.detach().clone() + 1), "none": lambda t: t}


def _chain(L, name, follow, on_view, device):
    kw = {} if L is torch else {"device": device}
    a = L.tensor([0.3, 0.5, 0.7, 0.2], dtype=L.float64, requires_grad=True, **kw)
    x = a * 1
    t = x[1:] if on_view else x
    getattr(t, name)()
    FOLLOW[follow](t)
    (x * L.tensor([1.0, -2.0, 3.0, 0.5], dtype=L.float64, **kw)).sum().backward()
    return a.grad


@pytest.mark.parametrize("on_view", [False, True], ids=["tensor", "view"])
@pytest.mark.parametrize("follow", sorted(FOLLOW))
@pytest.mark.parametrize("name", OPS)
def test_inplace_chain_as_torch(name, follow, on_view, device):
    try:
        want = _chain(torch, name, follow, on_view, device)
    except RuntimeError as exc:
        assert "modified by an inplace operation" in str(exc)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            _chain(plugrad, name, follow, on_view, device)
        return
    got = _chain(plugrad, name, follow, on_view, device)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-12, atol=1e-15)
