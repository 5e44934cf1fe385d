"""``ArrayAPIBackend``'s defaults are what docs/backends.md (section 5) says they are."""
import array_api_strict
import numpy as np
import pytest

from plugrad.backends.array_api import ArrayAPIBackend
from plugrad.backends.contract import Backend


def test_dtypes_none_is_the_contracts_default():
    b = ArrayAPIBackend("s", "s", array_api_strict)
    assert b.dtypes == Backend.dtypes == frozenset(
        {"bool", "int32", "int64", "float16", "float32", "float64"})
    assert ArrayAPIBackend("s", "s", array_api_strict, dtypes={"bool", "int64"}).dtypes == \
        frozenset({"bool", "int64"})


def test_array_type_none_is_inferred_on_first_use():
    calls = []

    def namespace():
        calls.append(1)
        return array_api_strict

    b = ArrayAPIBackend("s", "s", namespace)
    assert calls == [] and b.array_type is object  # registering imports nothing
    assert b.is_available()
    assert b.array_type is type(array_api_strict.asarray([0])) and calls == [1]
    assert ArrayAPIBackend("n", "n", np, array_type=np.ndarray).array_type is np.ndarray


def test_availability_is_whether_the_namespace_can_be_had():
    def missing():
        import plugrad_no_such_array_library  # noqa: F401
    b = ArrayAPIBackend("gone", "gone", missing)
    assert not b.is_available()
    assert b.unavailable_reason() == ("ModuleNotFoundError: No module named "
                                      "'plugrad_no_such_array_library'")
    assert ArrayAPIBackend("s", "s", array_api_strict).unavailable_reason() == ""


def test_one_device_and_the_index_goes_to_on():
    seen = []

    class Recording(ArrayAPIBackend):
        def _on(self, device):
            seen.append(device)
            return super()._on(device)

    b = Recording("s", "s", array_api_strict, dtypes={"float32", "int64"})
    assert b.device_count() == 1
    b.full((2,), 1.0, "float32", 0)
    b.from_numpy(np.zeros(2), "float32", None)
    b.arange(0, 3, 1, "int64", 0)
    b.uniform((2,), "float32", 0)
    b.normal((2,), "float32", None)
    assert seen == [0, None, 0, 0, None]


@pytest.mark.parametrize("device", [None, 0])
def test_from_dlpack_uses_the_namespace(device):
    b = ArrayAPIBackend("s", "s", array_api_strict, dtypes={"float32", "float64"})
    host = np.arange(3.0)
    out = b.from_dlpack(host, device)
    assert isinstance(out, b.array_type) and np.asarray(out).tolist() == [0.0, 1.0, 2.0]
