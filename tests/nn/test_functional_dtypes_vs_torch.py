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
    **{(f"nn.functional.{op}", dt): "PyTorch's CPU kernels take integers; plugrad's "
       "linear/conv/pooling refuse them"
       for op, dts in (("linear", ("int32", "int64")), ("conv1d", ("int32", "int64")),
                       ("conv2d", ("int64",)), ("max_pool2d", ("int32", "int64")),
                       ("avg_pool2d", ("int64",)), ("avg_pool1d", ("int64",)),
                       ("conv_transpose1d", ("int64",)), ("conv_transpose2d", ("int64",)),
                       # the 3-d ops and *_with_indices spellings are built on the 2-d ones
                       ("conv3d", ("int32", "int64")), ("conv_transpose3d", ("int64",)),
                       ("avg_pool3d", ("int64",)))
       for dt in dts},
    ("nn.functional.local_response_norm", "int64"):
        "PyTorch's composition runs int64 through avg_pool (not int32); plugrad refuses both",
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
