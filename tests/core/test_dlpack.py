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


# ---------------------------------------------------------------- a tensor's backend array
def test_backend_array_is_shared_both_ways():
    from plugrad.utils import backend as B
    t = plugrad.zeros(3)
    a = B.array(t)
    assert isinstance(a, np.ndarray) and B.backend(t).name == "numpy"
    a[1] = 4.0
    assert t.tolist() == [0.0, 4.0, 0.0]
    u = B.from_array(a, "cpu")
    assert u.dtype is plugrad.float32 and B.array(u) is a
    r = plugrad.ones(2, device="ref")
    assert type(B.array(r)).__name__ == "RefArray" and B.backend(r).name == "reference"
    assert B.from_array(B.array(r), "ref").tolist() == [1.0, 1.0]


def test_backend_array_refuses_what_it_cannot_wrap():
    from plugrad.utils import backend as B
    with pytest.raises(TypeError, match=r"from_array: expected an array of backend "
                                        r"'reference' \(RefArray\), got ndarray"):
        B.from_array(np.zeros(2), "ref")
    with pytest.raises(TypeError, match="from_array: unknown dtype 'complex128'"):
        B.from_array(np.zeros(2, complex), "cpu")
    with pytest.raises(TypeError, match="array: expected a Tensor, got list"):
        B.array([1.0])


# ---------------------------------------------------------------- DLPack to and from plugins
def test_from_dlpack_to_another_device_copies():
    a = np.arange(3.0)
    r = plugrad.from_dlpack(a, device="ref")
    a[0] = 9.0
    assert r.device.type == "ref" and r.tolist() == [0.0, 1.0, 2.0]
    assert plugrad.from_dlpack(plugrad.ones(2), device="ref").device.type == "ref"


def test_utils_dlpack_is_torch_utils_dlpack():
    torch = pytest.importorskip("torch")
    from plugrad.utils import dlpack
    t = plugrad.arange(4.0)
    back = torch.utils.dlpack.from_dlpack(dlpack.to_dlpack(t))
    back[0] = 7.0
    assert t[0].item() == 7.0
    assert dlpack.from_dlpack(back) is not None and dlpack.from_dlpack(back)[0].item() == 7.0


@pytest.fixture
def torch_device():
    """The guide's Array API shortcut over PyTorch's CPU tensors, declaring DLPack type 1."""
    pytest.importorskip("torch")
    from plugrad.backends.array_api import ArrayAPIBackend
    from plugrad.backends.hooks import hookimpl
    from plugrad.core.registry import get_registry

    class TorchBackend(ArrayAPIBackend):
        dlpack_device_type = 1

        def __init__(self):
            import array_api_compat.torch as xp
            super().__init__("torch-tensors", "torchy", xp,
                             dtypes={"bool", "int64", "float32", "float64"})

    class Plugin:
        @hookimpl
        def plugrad_backends(self):
            return [TorchBackend()]

    plugin = Plugin()
    get_registry().register_plugin(plugin, name="torch-tensors")
    yield "torchy"
    get_registry().unregister_plugin(plugin)


def test_a_plugins_arrays_cross_dlpack_without_a_copy(torch_device):
    import torch

    from plugrad.utils import backend as B
    src = torch.arange(3.0)
    t = plugrad.from_dlpack(src, device=torch_device)  # the namespace's from_dlpack: shared
    src[0] = 5.0
    assert t.device.type == "torchy" and t.tolist() == [5.0, 1.0, 2.0]
    assert B.array(t).data_ptr() == src.data_ptr()
    out = t * 2
    assert out.__dlpack_device__() == (1, 0)
    view = torch.from_dlpack(out)  # the plugin's own tensor, exported as it is
    assert view.data_ptr() == B.array(out).data_ptr() and view.tolist() == [10.0, 2.0, 4.0]
    assert plugrad.from_dlpack(src).device.type == "cpu"  # host memory goes to cpu


class _Exotic:
    """A DLPack producer on a device type of its own (here 14, kDLOneAPI), holding values."""

    def __init__(self, values, index=0):
        self.values, self.index = values, index

    def __dlpack_device__(self):
        return (14, self.index)

    def __dlpack__(self, **kwargs):
        raise BufferError("not readable on the host")


@pytest.fixture
def exotic_device():
    from plugrad.backends.hooks import hookimpl
    from plugrad.backends.numpy import NumPyBackend
    from plugrad.core.registry import get_registry

    class Exotic(NumPyBackend):
        dlpack_device_type = 14

        def __init__(self):
            super().__init__()
            self.name, self.device_type, self.imported = "exotic", "exo", []

        def device_count(self):
            return 2

        def from_dlpack(self, obj, device):
            self.imported.append(device)
            return np.array(obj.values, dtype=np.float32)

    class Plugin:
        @hookimpl
        def plugrad_backends(self):
            return [Exotic()]

    plugin = Plugin()
    get_registry().register_plugin(plugin, name="exotic")
    yield get_registry().backends["exo"]
    get_registry().unregister_plugin(plugin)


def test_from_dlpack_finds_the_backend_declaring_the_device_type(exotic_device):
    t = plugrad.from_dlpack(_Exotic([1.0, 2.0], index=1))
    assert str(t.device) == "exo:1" and t.tolist() == [1.0, 2.0]
    assert exotic_device.imported == [1]


def test_from_dlpack_of_an_undeclared_device_type_says_so():
    with pytest.raises(TypeError, match=r"DLPack device type 14 is declared by no plugrad "
                                        r"backend; pass device= \(the backends' DLPack device "
                                        r"types: cpu \(1\), cuda \(2\)"):
        plugrad.from_dlpack(_Exotic([1.0]))
    with pytest.raises(BufferError, match="from_dlpack: backend 'numpy' cannot import a "
                                          "_Exotic of DLPack device type 14"):
        plugrad.from_dlpack(_Exotic([1.0]), device="cpu")
