"""PyTorch's legacy API still in tutorials: ``torch.FloatTensor`` and friends, ``x.type()``,
``autograd.Variable``, ``torch.normal``'s overloads, names printed under the torch alias."""
import pytest
import torch

import plugrad
from plugrad.core import naming

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
          "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


@pytest.fixture
def torch_names():
    previous = naming.set_prefix("torch")
    yield
    naming.set_prefix(previous)


def _served(device, cls):
    from plugrad.core.registry import get_registry
    return cls.dtype.name in get_registry().table(device).dtypes


@pytest.mark.parametrize("name", LEGACY)
def test_constructors_types_and_names_agree_with_torch(device, name, torch_names):
    cls, theirs = getattr(plugrad, name), getattr(torch, name)
    if not _served(device, cls):
        pytest.skip(f"the ref backend has no {cls.dtype}")
    with plugrad.device(device):
        data = [1, 0, 2] if name != "BoolTensor" else [True, False, True]
        x, y = cls(data), theirs(data)
        assert x.dtype.name == str(y.dtype).split(".")[1] and x.tolist() == y.tolist()
        assert x.device.type == device and type(x) is plugrad.Tensor
        assert x.type() == y.type() == f"torch.{name}"
        assert cls(2, 3).shape == theirs(2, 3).shape == (2, 3)
        assert tuple(cls(plugrad.Size([4, 1])).shape) == (4, 1)
        assert cls().shape == (0,) and cls((2, 3)).tolist() == theirs((2, 3)).tolist()
        assert isinstance(x, cls) and not isinstance(x, plugrad.cuda.__dict__[name])
        assert repr(cls) == repr(theirs) == f"<class 'torch.{name}'>"
        assert isinstance(plugrad.zeros(1, dtype=cls.dtype, device=device), cls)


def test_type_conversions(device, torch_names):
    x = plugrad.arange(3, device=device)
    assert x.type() == "torch.LongTensor"
    f = x.type(plugrad.FloatTensor)
    assert f.dtype is plugrad.float32 and f.device.type == device and f.tolist() == [0, 1, 2]
    assert x.type("torch.DoubleTensor").dtype is plugrad.float64
    assert x.type(plugrad.float16).dtype is plugrad.float16
    assert not isinstance(x, plugrad.FloatTensor) and isinstance(f, plugrad.FloatTensor)
    assert plugrad.zeros(2).type(plugrad.LongTensor).type() == "torch.LongTensor"


def test_names_without_the_alias():
    assert plugrad.zeros(1).type() == "plugrad.FloatTensor"
    assert repr(plugrad.zeros(2, 1).shape) == "plugrad.Size([2, 1])"
    assert repr(plugrad.float16) == "plugrad.float16"


def test_names_under_the_alias_match_torch(torch_names):
    assert repr(plugrad.zeros(2, 1).shape) == repr(torch.zeros(2, 1).shape)
    assert repr(plugrad.float16) == repr(torch.float16)
    assert repr(plugrad.ones(2, dtype=plugrad.float64)) == repr(torch.ones(2, dtype=torch.float64))


def test_legacy_constructor_shares_a_tensor_of_its_dtype(device):
    a = plugrad.ones(2, device=device)
    b = plugrad.FloatTensor(a)
    b[0] = 5.0
    assert a.tolist() == [5.0, 1.0]
    with pytest.raises(TypeError, match="expected a tensor of dtype plugrad.float32, got "
                                        "plugrad.int64"):
        plugrad.FloatTensor(plugrad.arange(3, device=device))
    with pytest.raises(TypeError, match="sizes"):
        plugrad.FloatTensor([1], [2])


def test_cpu_types_avoid_cuda_default_and_cuda_types_say_cuda():
    assert plugrad.cuda.FloatTensor.is_cuda and not plugrad.FloatTensor.is_cuda
    assert repr(plugrad.cuda.LongTensor) == "<class 'plugrad.cuda.LongTensor'>"
    assert not isinstance(plugrad.zeros(1), plugrad.cuda.FloatTensor)


def test_variable(device):
    a = plugrad.ones(2, device=device)
    v = plugrad.autograd.Variable(a, requires_grad=True)
    assert v is not a and v.requires_grad and v.is_leaf and not a.requires_grad
    assert isinstance(a, plugrad.autograd.Variable) and not isinstance(1.0, plugrad.autograd.Variable)
    (v * 3).sum().backward()
    assert v.grad.tolist() == [3.0, 3.0]
    with pytest.warns(UserWarning, match="volatile"):
        plugrad.autograd.Variable(a, volatile=True)
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        plugrad.autograd.Variable([1.0])


def test_normal_overloads_match_torch_shapes(device):
    z3 = plugrad.zeros(3, device=device)
    cases = [((z3,), {}, (3,)), ((z3, 2.0), {}, (3,)),
             ((0.0, plugrad.ones(2, device=device)), {}, (2,)),
             ((0.0, 1.0, (2, 2)), {"device": device}, (2, 2)),
             ((plugrad.zeros(2, 1, device=device), plugrad.ones(3, device=device)), {}, (2, 3))]
    for args, kwargs, shape in cases:
        out = plugrad.normal(*args, **kwargs)
        targs = [torch.tensor(a.tolist()) if isinstance(a, plugrad.Tensor) else a for a in args]
        assert tuple(out.shape) == shape == tuple(torch.normal(*targs).shape)
        assert out.device.type == device and out.dtype is plugrad.float32
    big = plugrad.normal(plugrad.full((4000,), 5.0, device=device), 3.0)
    assert abs(big.mean().item() - 5.0) < 0.3 and abs(big.std().item() - 3.0) < 0.3
    assert plugrad.normal(2, 3, size=(1, 4), device=device).dtype is plugrad.float32
    with pytest.raises(TypeError, match="size is required"):
        plugrad.normal(0.0, 1.0)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        plugrad.normal(z3, -1.0)


def test_normal_with_a_generator_repeats(device):
    mean = plugrad.zeros(5, device=device)
    a = plugrad.normal(mean, 1.0, generator=plugrad.Generator().manual_seed(3))
    b = plugrad.normal(mean, 1.0, generator=plugrad.Generator().manual_seed(3))
    assert a.tolist() == b.tolist()


def test_tensor_new_takes_the_legacy_constructor_arguments(device):
    """``x.new(...)`` (older code's ``weight.new(b, h).zero_()``): sizes, a ``Size``, data or
    nothing, in ``x``'s dtype and on its device, as PyTorch's."""
    torch = pytest.importorskip("torch")
    for lib, dev in ((plugrad, device), (torch, "cpu")):
        x = lib.ones(2, dtype=lib.float64, device=dev)
        sized, listed, empty = x.new(3, 2), x.new([1, 2]), x.new()
        assert tuple(sized.shape) == (3, 2) and sized.dtype == x.dtype
        assert listed.tolist() == [1.0, 2.0] and listed.dtype == x.dtype
        assert tuple(empty.shape) == (0,) and tuple(x.new(lib.Size([2, 4])).shape) == (2, 4)
        assert tuple(x.new(2, 2).zero_().shape) == (2, 2)
    assert plugrad.ones(1, device=device).new(2).device.type == device
    with pytest.raises(TypeError, match="Tensor.new\\(\\): expected sizes"):
        plugrad.ones(1).new(2, [3])
