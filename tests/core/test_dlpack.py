"""DLPack: zero-copy exchange with NumPy and PyTorch on the CPU."""
import numpy as np
import pytest

import plugrad


def test_from_numpy_via_dlpack_shares_memory():
    a = np.arange(6.0).reshape(2, 3)
    t = plugrad.from_dlpack(a)
    a[0, 0] = 9.0
    assert t.dtype is plugrad.float64 and t.shape == (2, 3) and t[0, 0].item() == 9.0


def test_export_to_numpy_shares_memory_and_keeps_0d():
    t = plugrad.ones(3)
    view = np.from_dlpack(t)
    view[1] = 5.0
    assert t.tolist() == [1.0, 5.0, 1.0]
    assert np.from_dlpack(plugrad.tensor(3.0) * 2).shape == ()


def test_ref_tensors_export_a_copy():
    r = plugrad.ones(2, device="ref")
    assert np.from_dlpack(r).tolist() == [1.0, 1.0]


def test_torch_round_trip():
    torch = pytest.importorskip("torch")
    src = torch.arange(4.0)
    t = plugrad.from_dlpack(src)
    src[0] = 7.0
    assert t.tolist() == [7.0, 1.0, 2.0, 3.0]
    back = torch.from_dlpack(t)
    assert back.tolist() == [7.0, 1.0, 2.0, 3.0]


def test_unsupported_object_is_a_clear_error():
    with pytest.raises(TypeError, match="does not export __dlpack__"):
        plugrad.from_dlpack([1, 2])
