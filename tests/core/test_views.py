"""Views share storage with their base on every backend, as PyTorch's do: a write through
any alias is seen by all, an in-place op on a view rewrites the base's history (PyTorch's
``CopySlices``), the version counter is shared, ``view`` refuses strides it cannot address
and ``reshape`` then copies. Each program runs unchanged on real ``torch`` and on plugrad
(``cpu``, ``ref`` and the ``strict`` plugin device) and must give the same values,
gradients and ``requires_grad`` flags."""
import functools

import numpy as np
import pytest

import plugrad

torch = pytest.importorskip("torch")

DEVICES = ["cpu", "ref", "strict"]
PROGRAMS = {}


def program(fn):
    PROGRAMS[fn.__name__] = fn
    return fn


def _plain(v):
    if isinstance(v, (torch.Tensor, plugrad.Tensor)):
        arr = np.asarray(v.detach().cpu() if isinstance(v, torch.Tensor) else v.detach())
        return ("tensor", tuple(v.shape), arr.astype(np.float64), v.requires_grad)
    if isinstance(v, (tuple, list)):
        return tuple(_plain(x) for x in v)
    return v


def _check(a, b, path):
    if isinstance(a, tuple) and a and a[0] == "tensor":
        assert isinstance(b, tuple) and b[0] == "tensor", f"{path}: {b!r}"
        assert a[1] == b[1], f"{path}: shape torch {a[1]}, plugrad {b[1]}"
        assert a[3] == b[3], f"{path}: requires_grad torch {a[3]}, plugrad {b[3]}"
        np.testing.assert_allclose(b[2], a[2], rtol=1e-6, atol=1e-12, err_msg=path)
    elif isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), f"{path}: torch {a}, plugrad {b}"
        for i, (x, y) in enumerate(zip(a, b)):
            _check(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: torch {a!r}, plugrad {b!r}"


def _run(prog, T, device):
    tensor = functools.partial(T.tensor, dtype=T.float64, device=device)
    try:
        return _plain(prog(T, tensor))
    except Exception as e:  # noqa: BLE001 - the error type is the result being compared
        return ("error", type(e).__name__ if not isinstance(e, RuntimeError) else
                "RuntimeError")


# ---------------------------------------------------------------------- writes through views
@program
def slice_mul_writes_base(T, tensor):
    x = tensor([[1., 2., 3.], [4., 5., 6.]])
    x[0:1].mul_(10)
    return x


@program
def select_sqrt_writes_base(T, tensor):
    x = tensor([[4., 9.], [16., 25.]])
    v = x[0]
    v.sqrt_()
    return x, v


@program
def view_add_writes_base(T, tensor):
    x = tensor([[1., 2.], [3., 4.]])
    x.view(4).add_(1)
    return x


@program
def transpose_fill_writes_base(T, tensor):
    x = tensor([[1., 2., 3.], [4., 5., 6.]])
    x.T[0].fill_(0)
    return x


@program
def other_views_see_the_write(T, tensor):
    x = tensor([1., 2., 3., 4., 5., 6.])
    a, b = x[0:4], x[2:6].view(2, 2)
    a.mul_(10)
    return x, a, b


@program
def base_write_seen_by_views(T, tensor):
    x = tensor([[1., 2.], [3., 4.]])
    row, col = x[1], x[:, 0]
    x.add_(1)
    x[0, 0] = 100
    return row, col


@program
def detach_and_data_alias(T, tensor):
    x = tensor([1., 2., 3.])
    d, e = x.detach(), x.data
    d[0] = 10
    e[1] = 20
    x[2] = 30
    return x, d, e


@program
def chained_views(T, tensor):
    x = tensor(np.arange(24.).reshape(2, 3, 4))
    v = x.permute(2, 0, 1)[1:3].reshape(2, 6)[:, ::2]
    v.mul_(-1)
    return x, v


@program
def unbind_chunk_split_write(T, tensor):
    x = tensor(np.arange(12.).reshape(3, 4))
    a, b, c = x.unbind(0)
    b.zero_()
    p, q = x.chunk(2, dim=1)
    q.add_(100)
    return x, a, c, p


@program
def copy_into_slice(T, tensor):
    x = tensor(np.zeros((3, 3)))
    x[1:].copy_(tensor([1., 2., 3.]))
    x.narrow(1, 0, 1).fill_(7)
    return x


@program
def optimizer_style_update_of_a_view(T, tensor):
    flat = tensor(np.zeros(6))
    w = flat[2:5]
    with T.no_grad():
        w.add_(tensor([1., 2., 3.]), alpha=2)
        w.mul_(2.0)
    return flat


# ---------------------------------------------------------------------- gradients
@program
def grad_through_inplace_on_slice(T, tensor):
    x = tensor([1., 2., 3., 4.], requires_grad=True)
    y = x * 1
    y[1:3].mul_(10)
    (y * tensor([1., 2., 3., 4.])).sum().backward()
    return y, x.grad


@program
def grad_with_tensor_operand(T, tensor):
    x = tensor([[1., 2.], [3., 4.]], requires_grad=True)
    w = tensor([5., 6.], requires_grad=True)
    y = x.exp()
    y[0].mul_(w)
    y.pow(2).sum().backward()
    return y, x.grad, w.grad


@program
def grad_through_other_view(T, tensor):
    x = tensor([1., 2., 3., 4.], requires_grad=True)
    y = x * 2
    tail = y[1:]
    y[0:2].mul_(3)  # y[1] is seen through tail
    (tail * tail).sum().backward()
    return tail, x.grad


@program
def grad_through_permuted_view(T, tensor):
    x = tensor(np.arange(1., 7.).reshape(2, 3), requires_grad=True)
    y = x.clone()
    y.t()[1:].sin_()
    (y * y).sum().backward()
    return y, x.grad


@program
def grad_copy_into_zeros_buffer(T, tensor):
    w = tensor([1., 2.], requires_grad=True)
    buf = T.zeros(2, 3, dtype=T.float64, device=w.device)
    buf[:, 1].copy_(w * w)
    other = buf[1]
    (buf.sum() + (other * 3).sum()).backward()
    return buf, other, w.grad


@program
def second_order_through_view_write(T, tensor):
    x = tensor([0.5, 1.5, -1.0], requires_grad=True)
    y = x * 1
    y[:2].mul_(x[:2])
    (g,) = T.autograd.grad(y.pow(3).sum(), x, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), x)
    return g, h


@program
def inplace_on_base_regrows_view_history(T, tensor):
    x = tensor([1., 2., 3.], requires_grad=True)
    y = x + 0
    v = y[1:]
    y.mul_(tensor([2., 3., 4.]))
    v.sum().backward()
    return v, x.grad


# ---------------------------------------------------------------------- errors
@program
def view_of_a_leaf_refused(T, tensor):
    x = tensor([1., 2.], requires_grad=True)
    x[0:1].mul_(2)


@program
def saved_view_modified_through_base(T, tensor):
    x = tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    v = y[1:]
    z = v.exp()  # exp keeps its output; pow keeps its input
    w = v.pow(2)
    y.add_(1)
    (z.sum() + w.sum()).backward()


@program
def view_of_non_contiguous_refused(T, tensor):
    x = tensor(np.arange(6.).reshape(2, 3))
    x.t().view(6)


@program
def reshape_of_non_contiguous_copies(T, tensor):
    x = tensor(np.arange(6.).reshape(2, 3))
    r = x.t().reshape(6)
    r[0] = 100
    return x, r, x.t().is_contiguous(), x.t().contiguous().is_contiguous()


@program
def view_after_compatible_slices(T, tensor):
    x = tensor(np.arange(24.).reshape(4, 6))
    v = x[1:3].view(12)  # rows are contiguous
    w = x[:, :3].reshape(2, 2, 3)  # splits dim 0 only: a view
    w[0, 0, 0] = -1
    v[0] = -2
    return x, x[:, 1:].is_contiguous(), x[:, :3].view(4, 1, 3).shape


@program
def strides_and_offsets(T, tensor):
    x = tensor(np.arange(24.).reshape(2, 3, 4))
    v = x.permute(2, 0, 1)[1:, :, ::2]
    return v.stride(), v.storage_offset(), x[1].stride(), x.expand(2, 2, 3, 4).stride()


@program
def write_through_expanded_view_refused(T, tensor):
    x = tensor([1., 2.])
    x.expand(3, 2).add_(1)


@program
def no_grad_view_modified_with_grad_on(T, tensor):
    x = tensor([1., 2.], requires_grad=True)
    y = x * 1
    with T.no_grad():
        v = y[0:1]
    v.mul_(2)


@program
def base_attribute(T, tensor):
    x = tensor([[1., 2.], [3., 4.]])
    v = x[0][1:]
    d = x.detach()
    return v._base is x, d._base is None, x._base is None, v._is_view(), x.t()._base is x


@program
def transpose_inplace_keeps_sharing(T, tensor):
    x = tensor(np.arange(6.).reshape(2, 3))
    row = x[0]
    x.t_()
    x[0, 1] = 50  # the old x[1, 0]
    row.add_(1000)
    return x, row


# ---------------------------------------------------------------------- what programs do
@program
def lstm_forget_bias_init(T, tensor):
    lstm = T.nn.LSTM(2, 3)
    with T.no_grad():
        for name, p in lstm.named_parameters():
            if "bias" in name:
                p.zero_()
                p[3:6].fill_(1.0)  # PyTorch's gate order: input, forget, cell, output
    return lstm.bias_ih_l0, lstm.bias_hh_l0


@program
def init_on_a_reshaped_parameter(T, tensor):
    w = T.nn.Parameter(T.zeros(2, 3, dtype=T.float64, device=tensor([0.]).device))
    with T.no_grad():
        w.view(6)[::2].fill_(5)
        w.t()[0].add_(1)
    return w.detach()


@program
def detach_inplace_of_a_view_refused(T, tensor):
    x = tensor([1., 2., 3.])
    x[1:].detach_()


@program
def data_assignment_leaves_old_views(T, tensor):
    x = tensor([1., 2., 3.])
    v = x.unsqueeze(0)
    x.data = tensor([0., 0., 0.])
    v.add_(1)
    x.add_(5)
    return x, v


@program
def view_of_a_view_history(T, tensor):
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    y = x.tanh()
    a = y[1]
    b = a[1:]
    b.mul_(a[:2].detach() + 1)
    (y * y).sum().backward()
    return y, x.grad


@program
def multi_output_views_refused_in_graph(T, tensor):
    x = tensor([1., 2., 3., 4.], requires_grad=True) * 1
    a, b = x.chunk(2)
    b.mul_(2)


@program
def unbind_view_refused_in_graph(T, tensor):
    x = tensor([[1., 2.], [3., 4.]], requires_grad=True) * 1
    x.unbind(1)[0][1:].add_(1)


@program
def multi_output_view_with_grad_operand(T, tensor):
    y = tensor([1., 2., 3., 4.])
    a, b = y.split(2)
    a.mul_(tensor([1., 2.], requires_grad=True))


@program
def tensor_split_pieces_are_plain_views(T, tensor):
    x = tensor([1., 2., 3., 4.], requires_grad=True) * 1
    a, b = x.tensor_split(2)
    b.mul_(2)
    x.sum().backward()
    return x


# ---------------------------------------------------------------------- lattice views
@program
def diagonals_write_their_base(T, tensor):
    x = tensor(np.arange(12.).reshape(3, 4))
    x.diagonal(1).fill_(-1)
    x.diagonal(-1).mul_(10)
    x.T.diagonal().add_(100)
    d = x.diagonal(2)
    x[0, 2] = 7  # the base's write is seen by the view
    return x, d, x.diagonal(5)


@program
def diagonal_in_place_rewrites_history(T, tensor):
    w = tensor(np.arange(1., 19.).reshape(2, 3, 3), requires_grad=True)
    x = w * 1
    d = x.diagonal(offset=-1, dim1=1, dim2=2)
    d.mul_(d)
    (x * x).sum().backward()
    return x, w.grad, d


@program
def unfold_windows_are_views(T, tensor):
    w = tensor(np.arange(1., 9.), requires_grad=True)
    x = w * 1
    u = x.unfold(0, 2, 3)
    u.mul_(-2)
    x[0] = 50
    (x.unfold(0, 3, 1) ** 2).sum().backward()
    return x, u, w.grad


@program
def as_strided_views_write_their_base(T, tensor):
    w = tensor(np.arange(1., 11.), requires_grad=True)
    x = w * 1
    win = x.as_strided((3, 2), (3, 1), 1)  # disjoint windows: writable
    win.mul_(-1)
    x[9] = 0
    (x.as_strided((4, 3), (2, 1)) ** 2).sum().backward()  # overlapping: gradients add up
    return x, win, w.grad, win.stride(), win.storage_offset()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_torch(name, device):
    prog = PROGRAMS[name]
    _check(_run(prog, torch, "cpu"), _run(prog, plugrad, device), name)


@pytest.mark.parametrize("device", DEVICES)
def test_saved_view_error_names_the_op(device):
    x = plugrad.tensor([1., 2., 3.], requires_grad=True, device=device)
    y = x * 1
    w = y[1:].pow(2)
    y.add_(1)
    with pytest.raises(RuntimeError, match="Pow"):
        w.sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_writes_through_overlapping_windows_are_refused(device):
    """PyTorch applies an in-place op through overlapping ``unfold`` windows once per window
    an element is in (values depend on its kernel's order); plugrad refuses instead."""
    x = plugrad.tensor([1., 2., 3., 4.], device=device)
    with pytest.raises(RuntimeError, match="mul_: unsupported operation: more than one "
                                           "element of the written-to tensor"):
        x.unfold(0, 3, 1).mul_(2)
    x.unfold(0, 2, 2).mul_(2)  # windows side by side: one element each
    assert x.tolist() == [2., 4., 6., 8.]


def test_as_strided_outside_a_contiguous_tensor_is_refused():
    x = plugrad.arange(12.).reshape(3, 4)
    with pytest.raises(NotImplementedError, match="as_strided: size \\[2, 2\\], stride "
                                                  "\\[4, 1\\].*shape \\[3, 2\\]"):
        x[:, 1:3].as_strided((2, 2), (4, 1))
    with pytest.raises(NotImplementedError, match="reach elements outside"):
        x[1].as_strided((2,), (4,))


def _random_view_chain(rng):
    """A random chain of permute/slice/expand steps and a target shape to view it as."""
    shape = tuple(int(n) for n in rng.integers(1, 4, size=rng.integers(1, 4)))
    ops = []
    ndim = len(shape)
    for _ in range(rng.integers(1, 3)):
        kind = rng.integers(5)
        if kind == 3 and ndim >= 2:
            d1, d2 = (int(d) for d in rng.permutation(ndim)[:2])
            ops.append(("diagonal", int(rng.integers(-1, 2)), d1, d2))
            ndim -= 1
        elif kind == 4:
            ops.append(("unfold", int(rng.integers(ndim)), 1, int(rng.integers(1, 3))))
            ndim += 1
        elif kind == 0:
            ops.append(("permute", tuple(int(i) for i in rng.permutation(ndim))))
        elif kind == 1:
            d = int(rng.integers(ndim))
            ops.append(("slice", d, int(rng.integers(0, 2)), int(rng.integers(1, 3))))
        else:
            ops.append(("unsqueeze", int(rng.integers(ndim + 1))))
            ndim += 1
    return shape, ops


def _apply(T, x, ops):
    for op in ops:
        if op[0] == "permute":
            x = x.permute(*op[1])
        elif op[0] == "slice":
            _, d, start, step = op
            x = x.narrow(d, 0, x.shape[d]) if x.shape[d] <= start else \
                x[(slice(None),) * d + (slice(start, None, step),)]
        elif op[0] == "diagonal":
            x = x.diagonal(*op[1:])
        elif op[0] == "unfold":
            x = x.unfold(*op[1:])
        else:
            x = x.unsqueeze(op[1])
    return x


@pytest.mark.parametrize("seed", range(6))
def test_strides_and_viewability_match_torch(seed):
    """Random chains of views: ``stride()`` (of the dimensions longer than 1: a size-1
    dimension's stride addresses nothing), ``storage_offset()``, ``is_contiguous()`` and
    whether ``view`` to each reshaping of the result succeeds are PyTorch's."""
    def strides(t):
        return [st for n, st in zip(t.shape, t.stride()) if n != 1]

    rng = np.random.default_rng(seed)
    for _ in range(40):
        shape, ops = _random_view_chain(rng)
        n = int(np.prod(shape))
        a = _apply(torch, torch.arange(float(n)).reshape(shape), ops)
        b = _apply(plugrad, plugrad.arange(float(n)).reshape(shape), ops)
        if a.numel() == 0:  # an empty tensor's strides are arbitrary (PyTorch's own words)
            assert b.numel() == 0 and tuple(b.shape) == tuple(a.shape), ops
            continue
        assert strides(b) == strides(a) and b.storage_offset() == a.storage_offset(), ops
        assert b.is_contiguous() == a.is_contiguous(), (shape, ops)
        sizes = [int(s) for s in a.shape]
        targets = [(-1,), tuple(reversed(sizes)), (1, *sizes), tuple(sizes[:1]) + (-1,)]
        for target in targets:
            try:
                ta = a.view(target)
            except RuntimeError:
                with pytest.raises(RuntimeError, match="view size is not compatible"):
                    b.view(target)
                continue
            tb = b.view(target)
            assert strides(tb) == strides(ta), (shape, ops, target)
            np.testing.assert_array_equal(np.asarray(tb), ta.numpy())
