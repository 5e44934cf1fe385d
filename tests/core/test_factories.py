"""Factories, tensor properties and conversions, as PyTorch has them."""
import warnings

import numpy as np
import pytest

import plugrad
from plugrad import DTypeError


def _values(t):
    return t.detach().cpu().numpy()


# ---------------------------------------------------------------- tensor()
@pytest.mark.parametrize("data, dtype, shape", [
    (1.5, plugrad.float32, ()), (3, plugrad.int64, ()), (True, plugrad.bool, ()),
    ([1., 2.], plugrad.float32, (2,)), ([1, 2], plugrad.int64, (2,)),
    ([True, False], plugrad.bool, (2,)), ([1, 2.5], plugrad.float32, (2,)),
    ([True, 2], plugrad.int64, (2,)), ([[1, 2], [3, 4]], plugrad.int64, (2, 2)),
    ((1.0, 2.0), plugrad.float32, (2,)), ([], plugrad.float32, (0,)),
    ([[], []], plugrad.float32, (2, 0)),
])
def test_tensor_infers_dtype_and_shape(device, data, dtype, shape):
    t = plugrad.tensor(data, device=device)
    assert t.dtype is dtype
    assert t.shape == shape
    assert t.device == plugrad.device(device)
    assert t.tolist() == (data if not isinstance(data, tuple) else list(data))


@pytest.mark.parametrize("array, dtype", [
    (np.array([1., 2.]), plugrad.float64), (np.array([1, 2], np.int32), plugrad.int32),
    (np.float32(2.5), plugrad.float32), (np.array([1., 2.], np.float16), plugrad.float16),
    (np.array([True]), plugrad.bool),
])
def test_tensor_keeps_numpy_dtype(device, array, dtype):
    assert plugrad.tensor(array, device=device).dtype is dtype


def test_tensor_dtype_argument_casts(device):
    t = plugrad.tensor([1.7, -2.7], dtype=plugrad.int32, device=device)
    assert t.dtype is plugrad.int32
    assert t.tolist() == [1, -2]
    assert plugrad.tensor([0, 3], dtype=plugrad.bool, device=device).tolist() == [False, True]
    assert plugrad.tensor(3.7, dtype="int64", device=device).item() == 3


def test_tensor_of_tensors_keeps_their_dtype(device):
    a = plugrad.tensor(1., dtype=plugrad.float64, device=device)
    assert plugrad.tensor([a, 2]).dtype is plugrad.float64
    ints = [plugrad.tensor(i, dtype=plugrad.int32, device=device) for i in range(3)]
    t = plugrad.tensor(ints)
    assert t.dtype is plugrad.int32 and t.tolist() == [0, 1, 2]
    rows = plugrad.tensor([plugrad.tensor([1, 2], device=device), plugrad.tensor([3, 4])])
    assert rows.tolist() == [[1, 2], [3, 4]]


def test_tensor_copies_and_warns_on_a_tensor(device):
    src = plugrad.tensor([1., 2.], device=device)
    with pytest.warns(UserWarning, match="clone\\(\\).detach\\(\\)"):
        t = plugrad.tensor(src)
    assert t.device == src.device and t.dtype is src.dtype
    t += 1
    assert src.tolist() == [1., 2.]


@pytest.mark.parametrize("data, message", [
    ([[1, 2], [3]], r"tensor: expected sequence of length 2 at dim 1 \(got 1\)"),
    ([[[1], [2]], [[3], [4, 5]]], r"expected sequence of length 1 at dim 2 \(got 2\)"),
    ([[1, 2], 3], r"at dim 0 some elements are sequences and some are numbers"),
])
def test_ragged_lists_are_refused(device, data, message):
    with pytest.raises(ValueError, match=message):
        plugrad.tensor(data, device=device)


@pytest.mark.parametrize("data, error, message", [
    (["a"], TypeError, "tensor: can't convert data of type <U1"),
    (None, TypeError, "tensor: can't convert data of type object"),
    ([2 ** 70], ValueError, "tensor: value out of range of int64"),
])
def test_tensor_refuses_bad_data(data, error, message):
    with pytest.raises(error, match=message):
        plugrad.tensor(data)


def test_tensor_refuses_unknown_dtype():
    with pytest.raises(TypeError, match="unknown dtype 'float8'; expected one of bool"):
        plugrad.tensor([1.], dtype="float8")


def test_unsupported_dtype_names_op_and_backend():
    with pytest.raises(DTypeError, match="zeros: dtype plugrad.bfloat16 is not supported by "
                                         "backend 'reference' \\(device type 'ref'\\)"):
        plugrad.zeros(2, dtype=plugrad.bfloat16, device="ref")


# ---------------------------------------------------------------- from_numpy / as_tensor
def test_from_numpy_shares_memory():
    a = np.arange(3.)
    t = plugrad.from_numpy(a)
    assert t.dtype is plugrad.float64 and t.device == "cpu"
    a[0] = 9.
    assert t.tolist() == [9., 1., 2.]
    t.numpy()[1] = 7.
    assert a[1] == 7.


def test_from_numpy_refuses_non_arrays_and_strings():
    with pytest.raises(TypeError, match="from_numpy: expected np.ndarray \\(got list\\)"):
        plugrad.from_numpy([1, 2])
    with pytest.raises(TypeError, match="from_numpy: can't convert np.ndarray of type <U1"):
        plugrad.from_numpy(np.array(["a"]))


def test_as_tensor_shares_when_it_can():
    a = np.arange(3.)
    assert np.shares_memory(plugrad.as_tensor(a).numpy(), a)
    assert np.shares_memory(plugrad.as_tensor(a, dtype=plugrad.float64).numpy(), a)
    assert not np.shares_memory(plugrad.as_tensor(a, dtype=plugrad.float32).numpy(), a)
    t = plugrad.tensor([1, 2])
    assert plugrad.as_tensor(t) is t
    assert plugrad.as_tensor([1., 2.]).dtype is plugrad.float32


def test_as_tensor_moves_and_casts(device):
    t = plugrad.as_tensor(np.arange(3), dtype=plugrad.float32, device=device)
    assert t.device == device and t.dtype is plugrad.float32 and t.tolist() == [0., 1., 2.]


# ---------------------------------------------------------------- filled factories
@pytest.mark.parametrize("sizes", [(2, 3), ((2, 3),), ([2, 3],), (plugrad.Size([2, 3]),)])
def test_size_spellings(device, sizes):
    assert plugrad.zeros(*sizes, device=device).shape == (2, 3)


def test_zeros_ones_empty_full(device):
    z = plugrad.zeros(2, 3, device=device)
    assert z.dtype is plugrad.float32 and z.tolist() == [[0.] * 3] * 2
    assert plugrad.ones(2, dtype=plugrad.int32, device=device).tolist() == [1, 1]
    assert plugrad.ones(2, dtype=plugrad.int32, device=device).dtype is plugrad.int32
    assert plugrad.empty(4, device=device).shape == (4,)
    assert plugrad.zeros((), device=device).shape == ()
    assert plugrad.zeros(0, 2, device=device).numel() == 0


@pytest.mark.parametrize("fill, dtype", [(7, plugrad.int64), (1.5, plugrad.float32),
                                         (True, plugrad.bool)])
def test_full_infers_dtype_from_fill(device, fill, dtype):
    t = plugrad.full((2,), fill, device=device)
    assert t.dtype is dtype and t.tolist() == [fill, fill]


def test_full_casts_fill_to_dtype(device):
    assert plugrad.full((2,), 2.7, dtype=plugrad.int64, device=device).tolist() == [2, 2]
    assert plugrad.full((1,), plugrad.tensor(3.), device=device).tolist() == [3.]


@pytest.mark.parametrize("size, error, message", [
    ((-1,), ValueError, r"zeros\(\): negative dimension in size \[-1\]"),
    ((2.5,), TypeError, r"zeros\(\): argument 'size' must be a tuple of ints, but found "
                        r"element of type float at pos 0"),
])
def test_bad_sizes_are_refused(size, error, message):
    with pytest.raises(error, match=message):
        plugrad.zeros(*size)


def test_out_argument_is_written_in_place(device):
    out = plugrad.full((3,), 5., device=device)
    alias = out.detach()
    r = plugrad.zeros(3, out=out, device=device)
    assert r is out and alias.tolist() == [0., 0., 0.]
    # another shape: resized, as PyTorch's factories do (tests/programs/test_out_argument.py)
    assert plugrad.ones(2, out=out, device=device) is out and out.tolist() == [1., 1.]


@pytest.mark.parametrize("fn, fill", [(plugrad.zeros_like, 0), (plugrad.ones_like, 1),
                                      (plugrad.empty_like, None)])
def test_like_factories(device, fn, fill):
    src = plugrad.tensor([[1, 2, 3]], dtype=plugrad.int32, device=device)
    t = fn(src)
    assert t.shape == (1, 3) and t.dtype is plugrad.int32 and t.device == src.device
    if fill is not None:
        assert t.tolist() == [[fill] * 3]
    f = fn(src, dtype=plugrad.float64, requires_grad=True)
    assert f.dtype is plugrad.float64 and f.requires_grad and f.is_leaf


def test_full_like_and_rand_like(device):
    src = plugrad.tensor([1, 2], device=device)
    assert plugrad.full_like(src, 2.7).tolist() == [2, 2]
    r = plugrad.rand_like(plugrad.zeros(3, device=device))
    assert r.shape == (3,) and r.device == src.device
    with pytest.raises(TypeError, match="zeros_like\\(\\): argument 'input' must be a Tensor"):
        plugrad.zeros_like([1, 2])


# ---------------------------------------------------------------- ranges
@pytest.mark.parametrize("args, kwargs, expected, dtype", [
    ((5,), {}, [0, 1, 2, 3, 4], plugrad.int64),
    ((1, 4), {}, [1, 2, 3], plugrad.int64),
    ((0, 10, 3), {}, [0, 3, 6, 9], plugrad.int64),
    ((10, 0, -3), {}, [10, 7, 4, 1], plugrad.int64),
    ((5.,), {}, [0., 1., 2., 3., 4.], plugrad.float32),
    ((0, 1, 0.25), {}, [0., 0.25, 0.5, 0.75], plugrad.float32),
    ((0, 3), {"dtype": plugrad.float64}, [0., 1., 2.], plugrad.float64),
    ((0, 2, 0.5), {"dtype": plugrad.int64}, [0, 0, 1, 1], plugrad.int64),
    ((3, 3), {}, [], plugrad.int64),
    ((np.int64(3),), {}, [0, 1, 2], plugrad.int64),
])
def test_arange(device, args, kwargs, expected, dtype):
    t = plugrad.arange(*args, device=device, **kwargs)
    assert t.dtype is dtype and t.tolist() == expected


def test_arange_length_matches_ceil():
    assert plugrad.arange(0, 1, 0.1).shape == (10,)
    assert plugrad.arange(-1, 1, 0.3).shape == (7,)


@pytest.mark.parametrize("args, message", [
    ((0, 5, 0), "arange: step must be nonzero"),
    ((5, 0), "arange: upper bound and larger bound inconsistent with step sign"),
    ((0, float("inf")), "arange: unsupported range"),
])
def test_arange_refuses_bad_ranges(args, message):
    with pytest.raises(ValueError, match=message):
        plugrad.arange(*args)


def test_linspace_logspace(device):
    t = plugrad.linspace(0, 1, 5, device=device)
    assert t.dtype is plugrad.float32 and t.tolist() == [0., .25, .5, .75, 1.]
    assert plugrad.linspace(0, 10, 5, dtype=plugrad.int64).tolist() == [0, 2, 5, 7, 10]
    assert plugrad.linspace(2, 3, 1).tolist() == [2.]
    assert plugrad.logspace(0, 2, 3, device=device).tolist() == [1., 10., 100.]
    with pytest.raises(ValueError, match="linspace: number of steps must be a non-negative"):
        plugrad.linspace(0, 1, -1)


def test_eye(device):
    assert plugrad.eye(2, device=device).tolist() == [[1., 0.], [0., 1.]]
    assert plugrad.eye(2, 3, dtype=plugrad.int64, device=device).tolist() == [[1, 0, 0],
                                                                             [0, 1, 0]]
    assert plugrad.eye(2, dtype=plugrad.bool).tolist() == [[True, False], [False, True]]
    with pytest.raises(ValueError, match="eye\\(\\): negative dimension"):
        plugrad.eye(-1)


# ---------------------------------------------------------------- requires_grad
def test_requires_grad_on_factories(device):
    for t in (plugrad.tensor([1.], requires_grad=True, device=device),
              plugrad.zeros(2, requires_grad=True, device=device),
              plugrad.ones(2, requires_grad=True, device=device),
              plugrad.full((2,), 3., requires_grad=True, device=device),
              plugrad.arange(3., requires_grad=True, device=device),
              plugrad.linspace(0, 1, 3, requires_grad=True, device=device),
              plugrad.eye(2, requires_grad=True, device=device),
              plugrad.rand(2, requires_grad=True, device=device),
              plugrad.randn(2, requires_grad=True, device=device)):
        assert t.requires_grad and t.is_leaf and t.grad_fn is None


def test_integer_tensors_cannot_require_grad(device):
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require "
                                           "gradients \\(got plugrad.int64\\)"):
        plugrad.tensor([1, 2], requires_grad=True, device=device)
    t = plugrad.arange(3, device=device)
    with pytest.raises(RuntimeError, match="got plugrad.int64"):
        t.requires_grad_()
    with pytest.raises(RuntimeError, match="got plugrad.bool"):
        plugrad.zeros(2, dtype=plugrad.bool, requires_grad=True, device=device)


def test_is_leaf_and_requires_grad(device):
    x = plugrad.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 2
    assert x.is_leaf and not y.is_leaf and y.requires_grad
    assert plugrad.tensor([1.]).is_leaf and not plugrad.tensor([1.]).requires_grad
    x.requires_grad = False
    assert not x.requires_grad


# ---------------------------------------------------------------- properties
def test_shape_size_dim_numel(device):
    t = plugrad.zeros(2, 3, 4, device=device)
    assert isinstance(t.shape, plugrad.Size) and repr(t.shape) == "plugrad.Size([2, 3, 4])"
    assert t.shape == (2, 3, 4) and t.size() == (2, 3, 4)
    assert t.size(1) == 3 and t.size(-1) == 4
    assert t.dim() == 3 and t.ndim == 3 and t.numel() == 24 and t.shape.numel() == 24
    assert t.shape[1:] == (3, 4) and isinstance(t.shape[1:], plugrad.Size)
    assert plugrad.tensor(1.).shape == () and plugrad.tensor(1.).numel() == 1
    with pytest.raises(IndexError, match=r"size: Dimension out of range \(expected to be in "
                                         r"range of \[-3, 2\], but got 3\)"):
        t.size(3)


def test_dtype_device_properties(device):
    t = plugrad.ones(2, dtype=plugrad.float64, device=device)
    assert t.dtype is plugrad.float64
    assert t.device == plugrad.device(device) and str(t.device) == device
    assert t.is_floating_point() and not plugrad.ones(1, dtype=plugrad.int32).is_floating_point()


def test_transpose_property(device):
    t = plugrad.tensor([[1, 2, 3], [4, 5, 6]], device=device)
    assert t.T.tolist() == [[1, 4], [2, 5], [3, 6]]
    assert plugrad.tensor([1, 2], device=device).T.tolist() == [1, 2]


# ---------------------------------------------------------------- conversions
def test_item_and_python_numbers(device):
    assert plugrad.tensor(2.5, device=device).item() == 2.5
    assert isinstance(plugrad.tensor(3, device=device).item(), int)
    assert plugrad.tensor([True], device=device).item() is True
    t = plugrad.tensor([3.75], device=device)
    assert float(t) == 3.75 and int(t) == 3 and bool(t) is True
    assert bool(plugrad.tensor(0., device=device)) is False
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to "
                                           "Scalar"):
        plugrad.tensor([1., 2.], device=device).item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with 2 values is ambiguous"):
        bool(plugrad.tensor([1., 2.], device=device))


def test_tolist_numpy_asarray(device):
    t = plugrad.tensor([[1., 2.], [3., 4.]], device=device)
    assert t.tolist() == [[1., 2.], [3., 4.]]
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.tolist() == [[1., 2.], [3., 4.]]
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    if device == "cpu":
        assert t.numpy().dtype == np.float32
    else:
        with pytest.raises(TypeError, match=f"can't convert {device} device type tensor to "
                                            f"numpy"):
            t.numpy()
        assert t.cpu().numpy().tolist() == [[1., 2.], [3., 4.]]


def test_numpy_refuses_requires_grad():
    t = plugrad.tensor([1.], requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires "
                                           "grad"):
        t.numpy()
    assert t.detach().numpy().tolist() == [1.]


def test_len_and_iteration(device):
    t = plugrad.tensor([[1, 2], [3, 4], [5, 6]], device=device)
    assert len(t) == 3
    rows = list(t)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    assert all(r.device == t.device for r in rows)
    assert [x.item() for x in plugrad.tensor([7, 8], device=device)] == [7, 8]
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(plugrad.tensor(1., device=device))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(plugrad.tensor(1., device=device))


def test_tensor_in_python_formatting():
    assert f"{plugrad.tensor(2.5):.2f}" == "2.50"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plugrad.is_tensor(plugrad.zeros(1))
