"""``torch.autocast``: PyTorch's op lists and state, compared with PyTorch's CPU autocast."""
import threading
import warnings

import numpy as np
import pytest
import torch

import plugrad
import plugrad.nn.functional as F
from plugrad.core import autocast as _ac


def _dtypes(lib, F_, dtype, device=None):
    kw = {"device": device} if lib is plugrad else {}
    rng = np.random.default_rng(0)

    def randn(*shape, requires_grad=False):
        return lib.tensor(rng.standard_normal(shape).astype(np.float32), **kw,
                          requires_grad=requires_grad)
    x, w, b, y = randn(4, 3), randn(2, 3, requires_grad=True), randn(2), randn(4, 2)
    img, k = randn(1, 2, 5, 5), randn(3, 2, 3, 3)
    out = {}
    with lib.autocast("cpu", dtype=dtype):
        h = F_.linear(x, w, b)
        out.update(linear=h, matmul=x @ w.T, mm=lib.mm(x, w.T),
                   bmm=lib.bmm(x.unsqueeze(0), w.T.unsqueeze(0)),
                   addmm=lib.addmm(b, x, w.T), conv2d=F_.conv2d(img, k),
                   conv1d=F_.conv1d(img[:, :, 0], k[:, :, 0]),
                   mse=F_.mse_loss(h, y), l1=F_.l1_loss(h, y),
                   ce=F_.cross_entropy(h, lib.tensor([0, 1, 0, 1], **kw)),
                   nll=F_.nll_loss(h.log_softmax(-1), lib.tensor([0, 1, 0, 1], **kw)),
                   bce_logits=F_.binary_cross_entropy_with_logits(h, y.sigmoid()),
                   softmax=h.softmax(-1), add=h + y, relu=F_.relu(h),
                   x64=x.double() @ w.double().T, ints=lib.arange(3, **kw) * 2)
        with lib.autocast("cpu", enabled=False):
            out["inner_off"] = F_.linear(x, w)
        loss = F_.mse_loss(h, y)
    out["outside"] = x @ w.T
    loss.backward()
    out["grad"] = w.grad
    return out


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_op_lists_give_pytorchs_dtypes_and_values(device, dtype):
    if device == "ref" and dtype == "bfloat16":
        pytest.skip("the ref backend has no bfloat16 (see test_unsupported_dtype_is_clear)")
    ours = _dtypes(plugrad, F, getattr(plugrad, dtype), device)
    theirs = _dtypes(torch, torch.nn.functional, getattr(torch, dtype))
    for name, t in theirs.items():
        assert str(ours[name].dtype).split(".")[1] == str(t.dtype).split(".")[1], name
        assert ours[name].device.type == device
        if name not in ("ints",):  # same inputs (seeded alike), same rounding steps
            assert np.allclose(ours[name].float().detach().numpy(force=True),
                               t.float().detach().numpy(), rtol=0, atol=0.1), name


def test_unsupported_dtype_is_clear():
    x = plugrad.randn(2, 3, device="ref")
    with plugrad.autocast("cpu"):  # CPU autocast's default dtype is bfloat16
        assert plugrad.get_autocast_dtype("cpu") is plugrad.bfloat16
        with pytest.raises(plugrad.DTypeError, match=r"linear under autocast: the ref backend "
                                                     r"'reference' cannot hold "
                                                     r"plugrad.bfloat16.*dtype=torch.float16"):
            F.linear(x, x)


def test_state_nesting_enabled_false_and_decorator():
    assert not plugrad.is_autocast_enabled("cpu") and _ac.active == 0
    with plugrad.autocast("cpu", dtype=plugrad.float16):
        assert plugrad.is_autocast_enabled("cpu") and plugrad.is_autocast_cpu_enabled()
        assert plugrad.get_autocast_dtype("cpu") is plugrad.float16
        with plugrad.amp.autocast("cpu"):
            assert plugrad.get_autocast_dtype("cpu") is plugrad.float16  # inherits the dtype
            with plugrad.autocast("cpu", dtype=plugrad.bfloat16, enabled=False):
                assert not plugrad.is_autocast_enabled("cpu")
                x = plugrad.randn(2, 2)
                assert (x @ x).dtype is plugrad.float32
            assert plugrad.is_autocast_enabled("cpu")
        assert plugrad.get_autocast_dtype("cpu") is plugrad.float16
    assert not plugrad.is_autocast_enabled("cpu") and _ac.active == 0
    assert plugrad.get_autocast_dtype("cpu") is plugrad.bfloat16

    @plugrad.autocast("cpu")
    def product(a, b):
        return a @ b
    assert product(plugrad.ones(2, 2), plugrad.ones(2, 2)).dtype is plugrad.bfloat16
    assert not plugrad.is_autocast_enabled("cpu")
    assert plugrad.is_autocast_enabled() is False  # no argument: cuda, as PyTorch


def test_state_is_per_thread():
    seen = []
    with plugrad.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append(
            (plugrad.is_autocast_enabled("cpu"), (plugrad.ones(2, 2) @ plugrad.ones(2, 2)).dtype)))
        t.start()
        t.join()
        assert plugrad.is_autocast_enabled("cpu")
    assert seen == [(False, plugrad.float32)]


def test_warnings_and_errors_as_pytorch():
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not "
                                         "supported. Disabling autocast."):
        ctx = plugrad.autocast("cpu", dtype=plugrad.float64)
    with ctx:
        assert not plugrad.is_autocast_enabled("cpu")
    if not plugrad.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available. Disabling"):
            with plugrad.autocast("cuda"):
                assert not plugrad.is_autocast_enabled("cuda")
        with pytest.warns(FutureWarning, match=r"torch.cuda.amp.autocast\(args...\)` is "
                                               r"deprecated"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                plugrad.cuda.amp.autocast()
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'nosuch'"):
        plugrad.autocast("nosuch")
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        plugrad.autocast(plugrad.device("cpu"))


def test_lists_are_pytorchs():
    assert {"matmul", "mm", "bmm", "linear", "conv1d", "conv2d", "addmm", "baddbmm"} <= \
        _ac.LOWER_PRECISION["cpu"] & _ac.LOWER_PRECISION["cuda"]
    assert {"mse_loss", "nll_loss", "cross_entropy", "l1_loss", "kl_div"} <= \
        _ac.FLOAT32["cpu"] & _ac.FLOAT32["cuda"]
    assert {"layer_norm", "softplus", "norm"} <= _ac.FLOAT32["cuda"]
    assert {"softmax", "log_softmax", "sum"} <= _ac.FLOAT32_UNLESS_DTYPE["cuda"]
    assert "softmax" not in _ac.FLOAT32["cpu"]  # CPU autocast leaves softmax alone
    assert _ac.DEFAULT_DTYPE == {"cuda": plugrad.float16, "cpu": plugrad.bfloat16}


def test_custom_fwd_casts_inputs():
    class Square(plugrad.autograd.Function):
        @staticmethod
        @plugrad.amp.custom_fwd(device_type="cpu", cast_inputs=plugrad.float32)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x, plugrad.is_autocast_enabled("cpu")

        @staticmethod
        @plugrad.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g, _):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = plugrad.ones(2, dtype=plugrad.float16, requires_grad=True)
    with plugrad.autocast("cpu"):
        y, inside = Square.apply(x)
    assert y.dtype is plugrad.float32 and inside is False


def test_bfloat16_on_cpu_matches_pytorch():
    a = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    ours = plugrad.tensor(a).to(plugrad.bfloat16)
    theirs = torch.tensor(a).to(torch.bfloat16)
    assert ours.float().tolist() == theirs.float().tolist()
    assert repr(ours).replace("plugrad", "torch") == repr(theirs)
    assert (ours @ ours.T).dtype is plugrad.bfloat16
    assert np.allclose((ours @ ours.T).float().numpy(), (theirs @ theirs.T).float().numpy(),
                       rtol=1e-2)
