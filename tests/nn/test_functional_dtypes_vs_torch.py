"""Which dtypes each ``nn.functional`` op accepts, against PyTorch: the op database's
``dtypes`` (what the conformance suite holds plugrad to: supported dtypes compute, the
others raise) must be the dtypes on which ``torch.nn.functional`` runs the same samples."""
import warnings

import pytest

import plugrad
from plugrad.testing import opdb
from plugrad.testing._kernel_checks import tree_map

torch = pytest.importorskip("torch")

#: Where plugrad and PyTorch knowingly differ: (op, dtype) -> why. Each must still differ
#: (the test fails once it is fixed, so that the entry goes).
KNOWN = {
    # not differences: plugrad computes and refuses the same samples as PyTorch, but these
    # mix both (an xfail of test_unsupported_dtype says which), so PyTorch is not counted
    # as accepting the dtype
    ("nn.functional.conv2d", "int32"): "the dilated sample raises in both (int64 only)",
    ("nn.functional.l1_loss", "int32"): "reduction 'mean' raises in both",
    ("nn.functional.l1_loss", "int64"): "reduction 'mean' raises in both",
}

ENTRIES = [o for o in opdb.ops("public") if o.name.startswith("nn.functional.")]


def _to_torch(v):
    if isinstance(v, plugrad.Tensor):
        return torch.from_numpy(v.numpy().copy())
    return v


def _torch_accepts(op, dtype) -> bool:
    fn = getattr(torch.nn.functional, op.name.rsplit(".", 1)[1])
    for s in op.samples("cpu", dtype):
        args, kwargs = tree_map(_to_torch, (s.args, s.kwargs))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(*args, **kwargs)
        except (RuntimeError, TypeError, ValueError, NotImplementedError):
            return False
    return True


@pytest.mark.parametrize("op", ENTRIES, ids=lambda o: o.name.rsplit(".", 1)[1])
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
def test_dtypes_accepted_as_in_pytorch(op, dtype):
    ours = dtype in op.dtypes or bool(op.xfail_reason("test_unsupported_dtype", "cpu", dtype))
    if (op.name, dtype) in KNOWN:
        assert ours != _torch_accepts(op, dtype), f"{op.name} {dtype}: no longer differs " \
                                                  f"from PyTorch ({KNOWN[op.name, dtype]})"
        return
    assert ours == _torch_accepts(op, dtype), (
        f"{op.name} in {dtype}: plugrad {'accepts' if ours else 'refuses'} it, PyTorch "
        f"{'refuses' if ours else 'accepts'} it")
