"""The entries of the differential-testing report (shared/reports/differential-bugs.md),
each as a small program run unchanged on real ``torch`` and on plugrad (``cpu`` and
``ref``): same values (nan where nan, the sign of a zero), dtypes, shapes, ``None``
gradients and error types. A program takes the module (``torch`` or ``plugrad``) and a
``tensor`` factory bound to the device under test."""
import functools
import math

import numpy as np
import pytest

import plugrad

torch = pytest.importorskip("torch")

DEVICES = ["cpu", "ref"]
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _run(prog, T, device):
    tensor = functools.partial(T.tensor, device=device)
    try:
        return prog(T, tensor)
    except Exception as e:  # noqa: BLE001 - the error is the result being compared
        return e


def _plain(v):
    """A comparable form of a result: tensors become (dtype name, shape, values,
    requires_grad); containers recurse."""
    if isinstance(v, (torch.Tensor, plugrad.Tensor)):
        arr = np.asarray(v.detach().cpu() if isinstance(v, torch.Tensor) else v.detach())
        return ("tensor", str(v.dtype).split(".")[-1], tuple(v.shape), arr, v.requires_grad)
    if isinstance(v, (tuple, list)):
        return tuple(_plain(x) for x in v)
    return v


def _same(a, b, path="result"):
    if isinstance(a, tuple) and a and a[0] == "tensor":
        assert isinstance(b, tuple) and b and b[0] == "tensor", f"{path}: {b!r} is no tensor"
        assert a[1:3] == b[1:3], f"{path}: dtype/shape torch {a[1:3]}, plugrad {b[1:3]}"
        assert a[4] == b[4], f"{path}: requires_grad torch {a[4]}, plugrad {b[4]}"
        x, y = a[3], b[3]
        if x.dtype.kind == "f":
            x64, y64 = x.astype(np.float64), y.astype(np.float64)
            np.testing.assert_allclose(y64, x64, rtol=2e-6, atol=0, equal_nan=True,
                                       err_msg=path)
            zero = x64 == 0
            assert (np.signbit(x64[zero]) == np.signbit(y64[zero])).all(), \
                f"{path}: signs of zeros differ: torch {x}, plugrad {y}"
        else:
            np.testing.assert_array_equal(y, x, err_msg=path)
    elif isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), f"{path}: torch {a}, plugrad {b}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), f"{path}: torch nan, plugrad {b}"
    else:
        assert type(a) is type(b) and a == b, f"{path}: torch {a!r}, plugrad {b!r}"


# ====================================================================== severity 1
@case
def xent_all_ignored(T, tensor):  # 2: every target ignored, a NaN mean but a 0 gradient
    F = T.nn.functional
    out = []
    for kw in ({}, {"weight": tensor([0.0, 1.0])}, {"label_smoothing": 0.1}):
        x = tensor([[0.5, 1.0], [2.0, -1.0]], requires_grad=True)
        loss = F.cross_entropy(x, tensor([-100, -100]), **kw)
        loss.backward()
        out += [loss, x.grad]
    x = tensor([[0.5, 1.0], [2.0, -1.0]], requires_grad=True)
    F.cross_entropy(x, tensor([1, -100])).backward()  # an ignored row is +0, not -0
    x2 = tensor([[0.5, 1.0], [2.0, -1.0]], requires_grad=True)
    F.nll_loss(x2, tensor([-100, -100])).backward()
    x3 = tensor([[0.5, 1.0], [2.0, -1.0]], requires_grad=True)
    F.cross_entropy(x3, tensor([0, 0]), weight=tensor([0.0, 1.0])).backward()  # 0/0: nan
    return out + [x.grad, x2.grad, x3.grad]


@case
def std_zero_spread(T, tensor):  # 3: the gradient of std is 0 where std is 0
    out = []
    for f in (lambda x: x.std(), lambda x: x.std(1).sum(), lambda x: x.std(0, correction=0).sum(),
              lambda x: T.std_mean(x, 1)[0].sum(), lambda x: x.var(1, keepdim=True).sum(),
              lambda x: (x.std(1) * tensor([1.0, -2.0], dtype=T.float64)).sum()):
        x = tensor([[2.0, 2.0, 2.0], [1.0, 3.0, 4.0]], dtype=T.float64, requires_grad=True)
        g, = T.autograd.grad(f(x), [x], create_graph=True)
        w = tensor([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]], dtype=T.float64)
        out += [g, T.autograd.grad((g * w).sum(), [x])[0]]  # second order too
    return out


@case
def var_degenerate(T, tensor):  # 11: dof <= 0 or float16 overflow: inf, not nan
    out = []
    for c in (2, 3):
        x = tensor([1.0, 3.0], dtype=T.float64, requires_grad=True)
        T.var(x, correction=c).backward()
        out.append(x.grad)
    x = tensor([1.0, 3.0, 3.0], dtype=T.float64, requires_grad=True)
    T.var(x, correction=3).backward()
    h = tensor([0.976, 65504.0], dtype=T.float16, requires_grad=True)
    (h.var() * 2).backward()
    y = tensor([1.0, float("inf")], dtype=T.float64, requires_grad=True)
    y.var().backward()
    return out + [x.grad, h.grad, h.std(), h.var(), y.grad, tensor([1e30, -1e30]).std()]


@case
def isclose_special(T, tensor):  # 5, 29: equal infinities are close; bool and int operands
    inf, nan = float("inf"), float("nan")
    a = tensor([inf, -inf, 1.0, nan, inf, 1.0])
    b = tensor([inf, -inf, 1.0, nan, -inf, 1.00001])
    return [T.isclose(a, b), T.isclose(a, b, equal_nan=True), T.isclose(a, b, 0.0, 0.0),
            T.allclose(tensor([inf]), tensor([inf])), T.isclose(tensor([True, False]),
                                                                tensor([True, True])),
            T.allclose(tensor([True]), tensor([True])),
            T.isclose(tensor([3, 4]), tensor([3, 5]), atol=1), a.isclose(b)]


@case
def isclose_mixed_dtypes(T, tensor):  # 35: torch requires one dtype
    return T.isclose(tensor([1.0]), tensor([1.0], dtype=T.float64))


@case
def allclose_mixed_dtypes(T, tensor):
    return T.allclose(tensor([1]), tensor([1.0]))


@case
def fmod_exact(T, tensor):  # 6, 13: exact for large quotients, a over +-inf, signed zeros
    inf = float("inf")
    a = tensor([1e8, 123456789.0, 3e38, -6.0, 6.0, -7.0, -0.0, 5.0, -5.0, inf])
    b = tensor([3.0, 3.0, 0.79, 3.0, -3.0, 3.0, 2.0, inf, -inf, 2.0])
    x = tensor([0.3, -2.5, 7.0], requires_grad=True)
    y = tensor([0.0, 2.0, -3.0], requires_grad=True)
    T.fmod(x, y).sum().backward()
    z = tensor([0.3], requires_grad=True)
    T.fmod(z, 0.0).sum().backward()
    i = tensor([-7, 7, -7, 9])
    return [T.fmod(a, b), T.fmod(a, 2.5), a.fmod(3.0), T.fmod(i, tensor([3, -3, -3, 4])),
            T.fmod(i, 4), x.grad, y.grad, z.grad]


@case
def sdpa_masked_row(T, tensor):  # 7: a query row with no allowed key: output 0, gradient 0
    F = T.nn.functional
    out = []
    for mask in (tensor([[False], [True]]), tensor([[float("-inf")], [0.0]]), None):
        q = tensor([[1.0, 0.0], [0.0, 1.0]], requires_grad=True)
        k = tensor([[1.0, 0.0]], requires_grad=True)
        v = tensor([[1.0, 2.0]], requires_grad=True)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        (o * tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        out += [o, q.grad, k.grad, v.grad]
    return out


# ====================================================================== severity 1, edge
@case
def activation_kinks(T, tensor):  # 10: hardtanh/relu6 pass g strictly inside; elu'' at 0
    F = T.nn.functional
    x = tensor([-1.0, 0.0, 1.0, float("nan"), 0.5, -3.0], requires_grad=True)
    F.hardtanh(x).sum().backward()
    y = tensor([0.0, 6.0, 3.0, -1.0, 7.0], requires_grad=True)
    F.relu6(y).sum().backward()
    z = tensor([0.0, -1.0, 2.0, float("nan")], dtype=T.float64, requires_grad=True)
    g, = T.autograd.grad(F.elu(z, alpha=0.5).sum(), [z], create_graph=True)
    return [x.grad, y.grad, F.hardtanh(x, -0.5, 0.25), g, T.autograd.grad(g.sum(), [z])[0],
            F.elu(z, 0.5)]


@case
def special_value_conventions(T, tensor):  # 8: PyTorch's nan/inf conventions
    inf, nan = float("inf"), float("nan")
    out = [T.softmax(tensor([0.0, inf]), 0), T.log_softmax(tensor([0.0, inf]), 0),
           T.logsumexp(tensor([0.0, inf]), 0), T.sign(tensor([nan, -2.0, 0.0, 3.0])),
           tensor([[0.0, inf], [1.0, 2.0]]).log_softmax(1)]
    x = tensor([nan, 1.0, 0.0, -1.0], requires_grad=True)
    x.relu().sum().backward()
    y = tensor([nan, 1.0], requires_grad=True)
    y.max().backward()
    z = tensor([1.0, 2.0], requires_grad=True)
    T.maximum(z, tensor(nan)).sum().backward()
    w = tensor([1.0, inf], dtype=T.float64, requires_grad=True)
    w.var().backward()
    return out + [x.grad, y.grad, z.grad, w.grad, tensor([1e30, -1e30]).std()]


@case
def clamp_tensor_bounds(T, tensor):  # 9: min == max gives neither bound; NaN input gives 0
    x = tensor([0.5, float("nan"), 3.0, -1.0, 1.5], requires_grad=True)
    lo = tensor([1.0, 0.0, 0.0, 0.0, 2.0], requires_grad=True)
    hi = tensor([1.0, 2.0, 2.0, 2.0, 1.0], requires_grad=True)
    y = T.clamp(x, lo, hi)
    y.sum().backward()
    x2 = tensor([[0.5, 3.0]], requires_grad=True)
    b = tensor([[1.0], [2.5]], requires_grad=True)
    T.clamp(x2, min=b, max=tensor(2.75)).sum().backward()
    x3 = tensor([0.5, 3.0], requires_grad=True)
    T.clamp(x3, max=tensor(2.0)).sum().backward()
    return [y, x.grad, lo.grad, hi.grad, x2.grad, b.grad, x3.grad,
            T.clamp(tensor([1, 5]), tensor([2, 2]), tensor([4, 4]))]


@case
def clamp_mixed_bounds(T, tensor):  # torch: both bounds Tensors or both numbers
    return T.clamp(tensor([1.0]), min=tensor([0.0]), max=2.0)


# ====================================================================== severity 3
@case
def inplace_activations(T, tensor):  # 25: inplace=True works in backward (and values agree)
    F = T.nn.functional
    out = []
    for f in (F.elu, F.hardtanh, F.relu6, F.silu, F.mish, F.leaky_relu, F.relu):
        a = tensor([-1.0, 0.0, 2.0, 7.0], requires_grad=True)
        y = a * 1
        r = f(y, inplace=True)
        (r * tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        out += [r, y, a.grad]
    m = T.nn.ELU(alpha=0.5, inplace=True)
    b = tensor([-1.0, 3.0], requires_grad=True)
    m(b * 2).sum().backward()
    return out + [b.grad]


@case
def norm_p_none(T, tensor):  # 31
    return T.norm(tensor([3.0, 4.0]), None)


# ====================================================================== severity 4
@case
def relu_bool(T, tensor):  # 35
    return T.nn.functional.relu(tensor([True, False]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name, device):
    prog = CASES[name]
    expected = _run(prog, torch, "cpu")
    got = _run(prog, plugrad, device)
    if isinstance(expected, Exception):
        assert isinstance(got, Exception), f"torch raised {expected!r}, plugrad gave {got!r}"
        # PyTorch's RuntimeError family: plugrad's errors subclass the type torch raises
        assert isinstance(got, type(expected)), f"torch: {expected!r}; plugrad: {got!r}"
        return
    if isinstance(got, Exception):
        raise got
    _same(_plain(expected), _plain(got))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("prog", [lambda t: plugrad.fmod(t([5, 3]), t([0, 2])),
                                  lambda t: t([5, 3]) % 0, lambda t: t([5, 3]) // t([1, 0])])
def test_integer_division_by_zero_raises(prog, device):
    """6: torch raises ``RuntimeError: ZeroDivisionError``; plugrad raises Python's
    ``ZeroDivisionError`` naming the op (the documented error of docs/errors.md #27)."""
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        prog(functools.partial(plugrad.tensor, device=device))
