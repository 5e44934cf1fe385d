"""``x[key]``, ``x[key] = v`` and gather/scatter/index_select/masked_*/nonzero: values
against NumPy on every device, gradients against closed forms and finite differences."""
import numpy as np
import pytest

import plugrad as torch

A = np.arange(24.0).reshape(2, 3, 4)


def host(t):
    return np.asarray(t.detach().cpu().numpy())


def numerical_grad(f, a, eps=1e-6):
    """d sum(f(a) * w) / da for a fixed random weight ``w``, by central differences."""
    w = np.random.default_rng(0).standard_normal(np.shape(f(a)))
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[i] += eps
        lo[i] -= eps
        g[i] = ((f(hi) * w).sum() - (f(lo) * w).sum()) / (2 * eps)
    return w, g


def check_grad(device, key):
    """The gradient of ``x[key]`` matches finite differences of NumPy's ``a[key]``."""
    w, expected = numerical_grad(lambda a: a[key], A)
    x = torch.tensor(A, device=device, requires_grad=True)
    (x[key] * torch.tensor(w, device=device)).sum().backward()
    np.testing.assert_allclose(host(x.grad), expected, atol=1e-5)


# ============================================================================ __getitem__
BASIC_KEYS = [
    1, -1, (0, -2), (slice(None), 1), (slice(None, None, 2), slice(1, 3)),
    (Ellipsis, 1), (None, 0, Ellipsis, None), (slice(1, None), slice(None, None, 3), -1),
    (slice(5, 9),), (slice(-2, None), None), Ellipsis, (0, 1, 2),
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test_getitem_basic_matches_numpy(device, key):
    out = torch.tensor(A, device=device)[key]
    np.testing.assert_array_equal(host(out), A[key])
    assert tuple(out.shape) == A[key].shape


ADVANCED_KEYS = [
    [1, 0, 1],
    ([0, 1], [2, 0]),
    (slice(None), [0, 2], [1, 3]),                 # adjacent: stay in place
    ([0, 1], slice(None), [1, 3]),                 # separated: go to the front
    (slice(None), [[0, 1], [2, 0]]),               # 2-D index
    ([0, 1], slice(1, None), [0, 3]),
    (None, [0, 1], slice(None), [0, 3]),
    ([0, 1], Ellipsis, [1, 2]),
    ([-1, 0], [-3]),                                # negative and broadcast index
    ([[0], [1]], slice(None), [0, 1, 2, 3]),       # broadcast 2x4 block, separated
]


@pytest.mark.parametrize("key", ADVANCED_KEYS, ids=repr)
def test_getitem_advanced_matches_numpy(device, key):
    tkey = tuple(torch.tensor(k, device=device) if isinstance(k, list) else k
                 for k in (key if isinstance(key, tuple) else (key,)))
    for k in (key, tkey):  # lists and index tensors alike
        np.testing.assert_array_equal(host(torch.tensor(A, device=device)[k]), A[key])


def test_getitem_int_next_to_tensor_index_is_basic_as_in_pytorch(device):
    # PyTorch (unlike NumPy) applies ints first, so the only tensor index stays in place.
    x = torch.tensor(A, device=device)
    assert tuple(x[1, :, [0, 3]].shape) == (3, 2)
    np.testing.assert_array_equal(host(x[1, :, [0, 3]]), A[1][:, [0, 3]])
    assert tuple(x[torch.tensor(1, device=device), :, [0, 3]].shape) == (3, 2)


@pytest.mark.parametrize("mask", [A > 10, (A.sum(-1) % 3) == 0, np.array([True, False])],
                         ids=["full", "leading-2d", "leading-1d"])
def test_getitem_bool_mask_matches_numpy(device, mask):
    x = torch.tensor(A, device=device)
    np.testing.assert_array_equal(host(x[torch.tensor(mask, device=device)]), A[mask])


def test_getitem_mask_in_the_middle_and_python_bools(device):
    x = torch.tensor(A, device=device)
    keep = [True, False, True]
    np.testing.assert_array_equal(host(x[:, torch.tensor(keep, device=device)]), A[:, keep])
    np.testing.assert_array_equal(host(x[:, keep]), A[:, keep])
    assert tuple(x[True].shape) == (1, 2, 3, 4)
    assert tuple(x[False].shape) == (0, 2, 3, 4)


def test_getitem_empty_index_list(device):
    assert tuple(torch.tensor(A, device=device)[[]].shape) == (0, 3, 4)


def test_getitem_zero_dim_tensor(device):
    z = torch.tensor(5.0, device=device)
    assert tuple(z[None].shape) == (1,)
    assert tuple(z[...].shape) == ()
    assert z[...].item() == 5.0
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        z[0]


def test_getitem_zero_dim_index_tensor_acts_as_int(device):
    x = torch.tensor(A, device=device)
    np.testing.assert_array_equal(host(x[torch.tensor(-1, device=device)]), A[-1])


def test_getitem_errors(device):
    x = torch.tensor(A, device=device)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 2"):
        x[3]
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 1 with size 3"):
        x[0, -4]
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 2 with size 4"):
        x[:, :, [0, 7]]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 3"):
        x[0, 0, 0, 0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(IndexError, match=r"shape of the mask \[3\] at index 0 does not match"):
        x[torch.tensor([True, False, True], device=device)]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int or bool"):
        x[torch.tensor([0.0], device=device)]
    with pytest.raises(IndexError, match="only integers, slices"):
        x["a"]


def test_getitem_basic_is_a_view_outside_grad_mode_on_cpu():
    x = torch.tensor(A)
    row = x[0]
    x.add_(1)
    np.testing.assert_array_equal(host(row), A[0] + 1)


@pytest.mark.parametrize("key", [
    (slice(None), slice(None, None, 2), slice(1, 3)),
    (0, -1),
    ([0, 0, 1], 1),                        # a repeated index accumulates
    (slice(None), [2, 0, 2], [1, 1, 1]),
    ([1, 0], slice(None), [3, 3]),
    (None, Ellipsis, 1),
], ids=repr)
def test_getitem_gradient(device, key):
    check_grad(device, key)


def test_getitem_mask_gradient(device):
    check_grad(device, A % 3 == 0)


def test_getitem_repeated_index_gradient_closed_form(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]


# ============================================================================ __setitem__
SET_CASES = [
    ((0, slice(1, 3)), 7.0),
    ((slice(None), 1), np.array([1.0, 2, 3, 4])),
    ((Ellipsis, 0), np.array([[-1.0], [-2.0]])),
    ((None, 1), 3.0),
    (([0, 1], [2, 0]), np.array([[1.0, 2, 3, 4]])),
    ((slice(None), [0, 2], slice(None, None, 2)), np.array([9.0, 8.0])),
    (([0, 1], slice(None), [1, 3]), 5.0),
]


@pytest.mark.parametrize("key,value", SET_CASES, ids=[repr(k) for k, _ in SET_CASES])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_setitem_matches_numpy(device, key, value, as_tensor):
    x = torch.tensor(A, device=device)
    expected = A.copy()
    expected[key] = value
    # a Tensor value has x's dtype: PyTorch's index_put_ refuses another (a 0-d float32
    # into float64 too); a Python number is converted
    x[key] = torch.tensor(value, dtype=x.dtype, device=device) if as_tensor else value
    np.testing.assert_array_equal(host(x), expected)


def test_setitem_mask(device):
    x = torch.tensor(A, device=device)
    x[x > 10] = 0
    expected = A.copy()
    expected[expected > 10] = 0
    np.testing.assert_array_equal(host(x), expected)
    y = torch.zeros(3, device=device)
    y[torch.tensor([True, False, True], device=device)] = torch.tensor([1.0, 2.0],
                                                                        device=device)
    assert y.tolist() == [1.0, 0.0, 2.0]


def test_setitem_repeated_index_last_write_wins(device):
    x = torch.zeros(3, device=device)
    x[[1, 1, 1]] = torch.tensor([1.0, 2.0, 3.0], device=device)
    assert x.tolist() == [0.0, 3.0, 0.0]


def test_setitem_casts_value_to_the_tensor_dtype(device):
    x = torch.zeros(3, dtype=torch.int64, device=device)
    x[0] = 2.7
    x[1] = torch.tensor(5.9, device=device)
    assert x.tolist() == [2, 5, 0] and x.dtype == torch.int64


def test_setitem_drops_leading_ones_of_value(device):
    x = torch.zeros(3, 4, device=device)
    x[0] = torch.ones(1, 1, 4, device=device)
    x[[1, 2]] = torch.full((1, 1, 4), 2.0, device=device)
    assert x.tolist() == [[1.0] * 4, [2.0] * 4, [2.0] * 4]


@pytest.mark.parametrize("dtype", [torch.int64, torch.float32])
def test_setitem_overlapping_copies_first(device, dtype):
    t = torch.arange(6, device=device).to(dtype)
    t[1:] = t[:-1]
    assert t.tolist() == [0, 0, 1, 2, 3, 4]
    t = torch.arange(6, device=device).to(dtype)
    t[:-1] = t[1:]
    assert t.tolist() == [1, 2, 3, 4, 5, 5]
    t = torch.arange(6, device=device).to(dtype)
    t[::2] = t[1::2]
    assert t.tolist() == [1, 1, 3, 3, 5, 5]


def test_setitem_errors(device):
    x = torch.zeros(3, 4, device=device)
    with pytest.raises(ValueError, match=r"value tensor of shape \[2, 4\] cannot be broadcast "
                                         r"to indexing result of shape \[4\]"):
        x[0] = torch.ones(2, 4, device=device)
    with pytest.raises(ValueError, match=r"shape \[3, 4\] cannot be broadcast to indexing "
                                         r"result of shape \[2, 4\]"):
        x[[0, 1]] = torch.ones(3, 4, device=device)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0"):
        x[3] = 1.0


def test_setitem_on_leaf_requiring_grad_raises(device):
    leaf = torch.zeros(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation"):
        leaf[0] = 1.0
    with torch.no_grad():
        leaf[0] = 1.0
    assert leaf.tolist() == [1.0, 0.0, 0.0] and leaf.is_leaf and leaf.requires_grad


def test_setitem_gradient_basic_key(device):
    a = torch.tensor(A, device=device, requires_grad=True)
    b = torch.tensor([1.0, 2, 3, 4], device=device, requires_grad=True)
    x = a * 1
    x[0, 1] = b * 2
    (x * x).sum().backward()
    expected_a = 2 * A
    expected_a[0, 1] = 0
    np.testing.assert_allclose(host(a.grad), expected_a)
    np.testing.assert_allclose(host(b.grad), 8 * np.array([1.0, 2, 3, 4]))


def test_setitem_gradient_advanced_key_and_broadcast_value(device):
    a = torch.tensor(A, device=device, requires_grad=True)
    b = torch.tensor([1.0, 2, 3, 4], dtype=torch.float64, device=device, requires_grad=True)
    x = a * 1
    x[[0, 1], [1, 2]] = b  # b broadcasts over two rows (index_put_: one dtype)
    (x * torch.tensor(A, device=device)).sum().backward()
    expected_a = A.copy()
    expected_a[[0, 1], [1, 2]] = 0
    np.testing.assert_allclose(host(a.grad), expected_a)
    np.testing.assert_allclose(host(b.grad), A[0, 1] + A[1, 2])


def test_setitem_mask_gradient(device):
    a = torch.tensor([1.0, -2.0, 3.0], device=device, requires_grad=True)
    x = a * 2
    x[x < 0] = 0
    x.sum().backward()
    assert a.grad.tolist() == [2.0, 0.0, 2.0]


def test_setitem_value_requiring_grad_makes_plain_tensor_require_grad(device):
    v = torch.tensor(5.0, device=device, requires_grad=True)
    x = torch.zeros(3, device=device)
    x[1] = v
    assert x.requires_grad and not x.is_leaf
    (x * torch.tensor([1.0, 7.0, 1.0], device=device)).sum().backward()
    assert v.grad.item() == 7.0


def test_setitem_is_seen_by_aliases_outside_grad_mode(device):
    x = torch.zeros(3, device=device)
    alias = x.detach()
    x[1] = 4.0
    x[[0]] = 2.0
    assert alias.tolist() == [2.0, 4.0, 0.0]
    assert x._version == 2


# ============================================================================ gather & co.
IDX = np.array([[0, 3], [1, 1], [2, 0]])
M = np.arange(12.0).reshape(3, 4)


def test_gather_and_take_along_dim(device):
    x = torch.tensor(M, device=device)
    idx = torch.tensor(IDX, device=device)
    np.testing.assert_array_equal(host(x.gather(1, idx)), np.take_along_axis(M, IDX, 1))
    np.testing.assert_array_equal(host(torch.gather(x, -1, idx)), np.take_along_axis(M, IDX, 1))
    np.testing.assert_array_equal(host(torch.take_along_dim(x, idx, 1)),
                                  np.take_along_axis(M, IDX, 1))
    # index smaller than x in the other dims, and negative entries
    assert x.gather(0, torch.tensor([[2, -3]], device=device)).tolist() == [[8.0, 1.0]]
    assert torch.take_along_dim(x, torch.tensor([0, 5], device=device)).tolist() == [0.0, 5.0]


def test_gather_gradient_accumulates_repeats(device):
    x = torch.tensor(M, device=device, requires_grad=True)
    x.gather(1, torch.tensor(IDX, device=device)).sum().backward()
    expected = np.zeros_like(M)
    np.add.at(expected, (np.arange(3)[:, None], IDX), 1)
    np.testing.assert_array_equal(host(x.grad), expected)


def test_gather_errors(device):
    x = torch.tensor(M, device=device)
    with pytest.raises(ValueError, match=r"gather: Index tensor must have the same number of "
                                         r"dimensions as input tensor \(index \[2\], input "
                                         r"\[3, 4\]\)"):
        x.gather(1, torch.tensor([0, 1], device=device))
    with pytest.raises(IndexError, match="gather: index 4 is out of bounds for dimension 1 "
                                         "with size 4"):
        x.gather(1, torch.tensor([[4]], device=device))
    with pytest.raises(IndexError, match="gather: tensors used as indices must be long"):
        x.gather(1, torch.tensor([[0.0]], device=device))
    with pytest.raises(IndexError, match=r"gather: Dimension out of range"):
        x.gather(2, torch.tensor([[0]], device=device))


def np_scatter(base, index, src, add):
    out = base.copy()
    rows = np.broadcast_to(np.arange(index.shape[0])[:, None], index.shape)
    if add:
        np.add.at(out, (rows, index), src[:, :index.shape[1]])
    else:
        out[rows, index] = src[:, :index.shape[1]]
    return out


def test_scatter_and_scatter_add_values(device):
    base = np.ones((3, 4))
    src = np.arange(1.0, 10.0).reshape(3, 3)  # larger than index: only its extent is used
    unique = np.array([[0, 3], [1, 2], [2, 0]])
    x = torch.tensor(base, device=device)
    s = torch.tensor(src, device=device)
    np.testing.assert_array_equal(host(x.scatter(1, torch.tensor(unique, device=device), s)),
                                  np_scatter(base, unique, src, add=False))
    np.testing.assert_array_equal(host(x.scatter_add(1, torch.tensor(IDX, device=device), s)),
                                  np_scatter(base, IDX, src, add=True))
    assert x.scatter(1, torch.tensor([[1], [0], [3]], device=device), 5.0).tolist() == [
        [1, 5, 1, 1], [5, 1, 1, 1], [1, 1, 1, 5]]
    assert x.tolist() == base.tolist()  # out of place


def test_scatter_repeated_index_last_write_wins(device):
    x = torch.zeros(2, 3, device=device)
    out = x.scatter(1, torch.tensor([[0, 0], [2, 2]], device=device),
                    torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device))
    assert out.tolist() == [[2.0, 0.0, 0.0], [0.0, 0.0, 4.0]]


def test_scatter_inplace_variants(device):
    x = torch.zeros(3, 4, device=device)
    alias = x.detach()
    x.scatter_(1, torch.tensor([[0], [1], [2]], device=device), 5.0)
    x.scatter_add_(0, torch.tensor([[0, 0, 0, 0]], device=device), torch.ones(1, 4, device=device))
    assert alias.tolist() == [[6, 1, 1, 1], [0, 5, 0, 0], [0, 0, 5, 0]]


def test_scatter_add_gradient(device):
    w = torch.arange(12.0, device=device).reshape(3, 4)
    base = torch.zeros(3, 4, device=device, requires_grad=True)
    src = torch.ones(3, 2, device=device, requires_grad=True)
    (base.scatter_add(1, torch.tensor(IDX, device=device), src) * w).sum().backward()
    np.testing.assert_array_equal(host(base.grad), np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(host(src.grad), np.take_along_axis(M, IDX, 1))


def test_scatter_gradient(device):
    index = np.array([[0, 3], [1, 2], [2, 0]])
    w = torch.tensor(M, device=device)
    base = torch.zeros(3, 4, device=device, requires_grad=True)
    src = torch.ones(3, 2, device=device, requires_grad=True)
    (base.scatter(1, torch.tensor(index, device=device), src) * w).sum().backward()
    expected_base = M.copy()
    expected_base[np.arange(3)[:, None], index] = 0  # overwritten positions get nothing
    np.testing.assert_array_equal(host(base.grad), expected_base)
    np.testing.assert_array_equal(host(src.grad), np.take_along_axis(M, index, 1))


def test_index_select_values_and_gradient(device):
    x = torch.tensor(M, device=device, requires_grad=True)
    index = torch.tensor([3, 0, -1], device=device)
    out = x.index_select(1, index)
    np.testing.assert_array_equal(host(out), M[:, [3, 0, 3]])
    out.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0, 2.0]] * 3
    with pytest.raises(ValueError, match=r"index_select\(\): Index is supposed to be a vector, "
                                         r"got shape \[1, 1\]"):
        x.index_select(0, torch.tensor([[0]], device=device))


def test_index_add_values_and_gradient(device):
    index = torch.tensor([0, 0, 2], device=device)
    base = torch.zeros(3, 4, device=device, requires_grad=True)
    src = torch.ones(3, 4, device=device, requires_grad=True)
    out = base.index_add(0, index, src, alpha=3)
    assert out.tolist() == [[6.0] * 4, [0.0] * 4, [3.0] * 4]
    w = torch.tensor(M, device=device)
    (out * w).sum().backward()
    np.testing.assert_array_equal(host(base.grad), M)
    np.testing.assert_array_equal(host(src.grad), 3 * M[[0, 0, 2]])
    y = torch.zeros(3, 4, device=device)
    y.index_add_(0, index, torch.ones(3, 4, device=device))
    assert y[:, 0].tolist() == [2.0, 0.0, 1.0]


def test_masked_fill_values_and_gradient(device):
    x = torch.tensor(M, device=device, requires_grad=True)
    mask = torch.tensor([[True, False, True, False]], device=device)
    out = x.masked_fill(mask, -1.0)
    expected = M.copy()
    expected[:, [0, 2]] = -1
    np.testing.assert_array_equal(host(out), expected)
    out.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0, 1.0]] * 3
    ints = torch.arange(4, device=device).masked_fill(mask[0], 2.5)
    assert ints.tolist() == [2, 1, 2, 3] and ints.dtype == torch.int64


def test_masked_fill_with_tensor_value_gradient(device):
    v = torch.tensor(2.0, device=device, requires_grad=True)
    out = torch.zeros(4, device=device).masked_fill(
        torch.tensor([True, True, False, True], device=device), v)
    out.sum().backward()
    assert out.tolist() == [2.0, 2.0, 0.0, 2.0] and v.grad.item() == 3.0


def test_masked_fill_inplace(device):
    x = torch.zeros(4, device=device)
    alias = x.detach()
    x.masked_fill_(torch.tensor([True, False, True, False], device=device), 1.0)
    assert alias.tolist() == [1.0, 0.0, 1.0, 0.0]


def test_masked_fill_broadcasts_a_bigger_mask_out_of_place_only(device):
    big = torch.tensor([[True, False, False, False], [False] * 4], device=device)
    assert torch.zeros(4, device=device).masked_fill(big, 1.0).tolist() == [
        [1.0, 0.0, 0.0, 0.0], [0.0] * 4]
    with pytest.raises(ValueError, match=r"output with shape \[4\] doesn't match the "
                                         r"broadcast shape \[2, 4\]"):
        torch.zeros(4, device=device).masked_fill_(big, 1.0)


def test_masked_fill_errors(device):
    x = torch.zeros(3, 4, device=device)
    with pytest.raises(TypeError, match="masked_fill: only supports boolean masks, but got "
                                        "mask with dtype plugrad.int64"):
        x.masked_fill(torch.tensor([1, 0, 1, 0], device=device), 1.0)
    with pytest.raises(ValueError, match=r"masked_fill: shapes \[2, 4\] and \[3, 4\] cannot "
                                         r"be broadcast"):
        x.masked_fill(torch.ones(2, 4, dtype=torch.bool, device=device), 1.0)
    with pytest.raises(ValueError, match="only supports a 0-dimensional value tensor"):
        x.masked_fill(x > 0, torch.ones(1, device=device))


def test_masked_select_values_gradient_and_broadcast(device):
    x = torch.tensor(M, device=device, requires_grad=True)
    mask = torch.tensor([True, False, True, False], device=device)
    out = x.masked_select(mask)
    assert out.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    out.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 1.0, 0.0]] * 3
    small = torch.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    big_mask = torch.tensor([[True, False, True, False], [False, False, False, True]],
                            device=device)
    assert torch.masked_select(small, big_mask).tolist() == [1.0, 3.0, 4.0]


def test_nonzero(device):
    a = np.array([[0, 1, 0], [2, 0, 3]])
    x = torch.tensor(a, device=device)
    np.testing.assert_array_equal(host(x.nonzero()), np.argwhere(a))
    assert x.nonzero().dtype == torch.int64
    rows, cols = x.nonzero(as_tuple=True)
    assert (rows.tolist(), cols.tolist()) == ([0, 1, 1], [1, 0, 2])
    np.testing.assert_array_equal(host(torch.argwhere(x > 1)), np.argwhere(a > 1))
    assert tuple(torch.zeros(2, 3, device=device).nonzero().shape) == (0, 2)


def test_nonzero_zero_dim(device):
    assert tuple(torch.tensor(3, device=device).nonzero().shape) == (1, 0)
    assert tuple(torch.tensor(0, device=device).nonzero().shape) == (0, 0)
    (idx,) = torch.tensor(3, device=device).nonzero(as_tuple=True)
    assert idx.tolist() == [0]
    (idx,) = torch.tensor(0, device=device).nonzero(as_tuple=True)
    assert idx.tolist() == []


def test_index_tensor_on_another_device_is_an_error():
    x = torch.zeros(3)
    with pytest.raises(RuntimeError, match="cpu and ref|ref and cpu"):
        x.index_select(0, torch.tensor([0], device="ref"))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_scatter_repeated_index_any_axis(device, axis):
    rng = np.random.default_rng(axis)
    index = rng.integers(0, 2, (2, 2, 3))
    src = rng.standard_normal((3, 3, 3))
    expected = np.zeros((2, 3, 4))
    for pos in np.ndindex(index.shape):  # row-major order: the last write wins
        target = list(pos)
        target[axis] = index[pos]
        expected[tuple(target)] = src[pos]
    out = torch.zeros(2, 3, 4, dtype=torch.float64, device=device).scatter(
        axis, torch.tensor(index, device=device), torch.tensor(src, device=device))
    np.testing.assert_array_equal(host(out), expected)


def test_index_select_on_zero_dim(device):
    z = torch.tensor(5.0, device=device, requires_grad=True)
    out = z.index_select(0, torch.tensor([0], device=device))
    assert tuple(out.shape) == () and out.item() == 5.0
    out.backward()
    assert z.grad.item() == 1.0
    with pytest.raises(IndexError, match="Index to scalar can have only 1 value, got 2"):
        z.index_select(0, torch.tensor([0, 0], device=device))


TORCH_KEYS = ADVANCED_KEYS + [(1, slice(None), [0, 3]), ([0, 1], 1, slice(None)),
                              (slice(None), 0, [[1], [2]]), (None, 1, [0, 2], None)]


@pytest.mark.parametrize("key", TORCH_KEYS, ids=repr)
def test_getitem_matches_pytorch(device, key):
    real = pytest.importorskip("torch")
    expected = real.tensor(A)[key].numpy()
    np.testing.assert_array_equal(host(torch.tensor(A, device=device)[key]), expected)
