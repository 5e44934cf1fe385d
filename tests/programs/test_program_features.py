"""Smaller things real programs needed: ``Tensor.storage()``, ``torch.onnx`` imported at the
top, ``torch.multiprocessing``, the torch.backends knobs' context managers."""
import pytest
import torch

import plugrad


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_storage_tolist_like_pytorch(device):
    x = plugrad.arange(6, dtype=plugrad.float32, device=device).reshape(2, 3) * 0.5
    ours, theirs = x.storage(), (torch.arange(6, dtype=torch.float32).reshape(2, 3) * 0.5).storage()
    assert ours.tolist() == theirs.tolist() and len(ours) == len(theirs) == 6
    assert ours[4] == theirs[4] and ours.size() == theirs.size()
    assert ours.element_size() == 4 and ours.nbytes() == theirs.nbytes()


def test_onnx_imports_and_is_not_exporting_outside_export():
    import plugrad.onnx as onnx  # export itself: tests/onnx
    assert onnx.is_in_onnx_export() is False


def _child(rank, out):
    out.put((rank, plugrad.ones(2).sum().item()))


def test_torch_multiprocessing_spawn():
    import plugrad.multiprocessing as mp
    ctx = mp.get_context("fork")
    out = ctx.SimpleQueue()
    mp.spawn(_child, args=(out,), nprocs=2, start_method="fork")
    assert sorted(out.get() for _ in range(2)) == [(0, 2.0), (1, 2.0)]
    with pytest.raises(mp.ProcessRaisedException, match="ZeroDivisionError"):
        mp.spawn(_fail, nprocs=1, start_method="fork")


def _fail(rank):
    1 / 0


def test_backend_knobs():
    from plugrad.torch_backends import cuda, cudnn, mps
    assert not cudnn.is_available() and not mps.is_available() and not mps.is_built()
    with cudnn.flags(enabled=False, benchmark=True, deterministic=True):
        assert cudnn.benchmark and cudnn.deterministic and not cudnn.enabled
    assert not cudnn.benchmark and cudnn.enabled
    with cuda.sdp_kernel(enable_flash=False):
        assert not cuda.flash_sdp_enabled() and cuda.math_sdp_enabled()
    assert cuda.flash_sdp_enabled()
    cuda.matmul.allow_tf32 = True
    assert cuda.matmul.allow_tf32
    cuda.matmul.allow_tf32 = False
