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


# ====================================================================== entries 8-35 (batch 2)
@case
def gelu_norm_special_values(T, tensor):  # 8: gelu(+-inf), a one-element norm, p < 1 at 0
    F = T.nn.functional
    inf = float("inf")
    # float32 gelu(+inf) is left out: torch's answer is its CPU's (NaN with AVX-512, inf
    # with AVX2; test_gelu_of_inf_is_inf_in_every_dtype)
    out = [F.gelu(tensor([-inf, 1e30, 50.0])), F.gelu(tensor([inf, -inf], dtype=T.float64)),
           F.gelu(tensor([inf, -inf]), approximate="tanh"),
           tensor([2e30]).norm(p=3), tensor([[2e30], [1e30]]).norm(p=3, dim=1),
           tensor([2e30, 0.0]).norm(p=3), tensor(2e30).norm(p=0.5),
           tensor([3e4, 3e4], dtype=T.float16).norm(), tensor([3e4, 3e4], dtype=T.float16).norm(p=3)]
    x = tensor([0.0, 1.0], requires_grad=True)
    T.norm(x, 0.5).backward()
    return out + [x.grad]


@case
def norm_general_p_gradients(T, tensor):  # 8, 16: PyTorch's norm_backward for every p
    out = []
    for p in (0.5, 1, 1.5, 3, 0, 2, float("inf"), -1):
        for v in ([0.0, 1.0, -2.0], [0.0, 0.0], [-3.0]):
            x = tensor(v, dtype=T.float64, requires_grad=True)
            y = T.norm(x, p)
            out += [y, T.autograd.grad(y, [x], allow_unused=True)[0]]
        x = tensor([[1.0, 0.0], [3.0, -4.0]], requires_grad=True)
        y = T.norm(x, p, dim=1, keepdim=True)
        (y * tensor([[2.0], [3.0]])).sum().backward()
        out += [y, x.grad]
    return out


@case
def multi_operand_promotion(T, tensor):  # 12: computed at the promoted precision
    x = tensor([1.0, 0.3], dtype=T.float64)
    y = tensor([-1.796, 0.777], dtype=T.float16)
    z = tensor([1.3, 3.1])
    h = tensor([1.0, -3.3, 7.1], dtype=T.float16)
    a, b = tensor([1.0, -3.3, 7.1]), tensor([2.0, 11.7, -0.3])
    out = [T.addcmul(x, y, y), T.addcdiv(x, y, z), T.addcmul(z, y, y), T.addcmul(x, y, y, value=0.3),
           T.addcdiv(z, y, y, value=-2.0), T.lerp(h, h * 3, 0.7), T.addcmul(h, h, h, value=0.3),
           T.lerp(a, b, tensor([0.3, 0.7, 1.0]))]
    out += [T.lerp(a, b, w) for w in (0.0, 0.5, 0.7, 1.0, -0.6, 1.3)]
    p = tensor([1.0, 2.0], requires_grad=True)
    q = tensor([3.0, 5.0], requires_grad=True)
    w = tensor([0.2, 0.8], requires_grad=True)
    T.lerp(p, q, w).sum().backward()
    g1 = tensor([2.0, -1.0], dtype=T.float64, requires_grad=True)
    g2 = tensor([0.5, 3.0], dtype=T.float16, requires_grad=True)
    T.addcmul(tensor([1.0, 1.0], dtype=T.float64), g1, g2, value=2.0).sum().backward()
    return out + [p.grad, q.grad, w.grad, g1.grad, g2.grad]


@case
def bce_double_backward_edge(T, tensor):  # 14: 0 at p = t in {0, 1} (no 1/eps)
    F = T.nn.functional
    out = []
    for pv, tv, red in ((0.0, 0.0, "sum"), (1.0, 1.0, "mean"), (0.3, 0.0, "sum"), (0.7, 1.0, "none")):
        p = tensor([pv, 0.4], dtype=T.float64, requires_grad=True)
        t = tensor([tv, 1.0], dtype=T.float64)
        loss = F.binary_cross_entropy(p, t, weight=tensor([2.0, 0.5], dtype=T.float64),
                                      reduction=red)
        g, = T.autograd.grad(loss.sum(), [p], create_graph=True)
        out += [g, T.autograd.grad((g * tensor([1.0, -2.0], dtype=T.float64)).sum(), [p])[0]]
    return out


@case
def no_elements_gradients(T, tensor):  # 15: cat of an empty input, x[False] = v
    x = tensor([2.0, 3.0], requires_grad=True)
    e = T.zeros(0, requires_grad=True, device=x.device)
    T.cat([x, e]).sum().backward()
    out = [e.grad, x.grad]
    for key in (False, True, tensor(False), tensor([False, False]), (False,)):
        v = tensor(0.5, requires_grad=True)
        y = tensor([1.0, 2.0], requires_grad=True).clone()
        y[key] = v
        y.sum().backward()
        out.append(v.grad)
    return out


@case
def results_require_grad(T, tensor):  # 16: norm p=0, div floor, empty reductions
    x = tensor([1.0, 0.0, -2.5], requires_grad=True)
    e = T.zeros(2, 0, requires_grad=True, device=x.device)
    ys = [T.norm(x, p=0), T.div(x, 2.0, rounding_mode="floor"),
          T.div(x, 2.0, rounding_mode="trunc"), x // 2, T.logsumexp(e, 1),
          T.logsumexp(T.zeros(0, requires_grad=True, device=x.device), 0),
          T.cat([T.zeros(2, 0, device=x.device), T.zeros(0, requires_grad=True, device=x.device)])]
    out = [y.requires_grad for y in ys] + ys
    out.append(T.autograd.grad(ys[1].sum(), [x])[0])
    out.append(T.autograd.grad(ys[0], [x], allow_unused=True)[0])
    ys[4].sum().backward()
    x2 = tensor([3.0, -1.0], requires_grad=True)
    g, = T.autograd.grad((x2 % 2.0).sum() * 1.0, [x2], create_graph=True)  # remainder's
    return out + [e.grad, g]  # gradient uses div's floor mode, not floor_divide


@case
def floor_divide_backward(T, tensor):  # 16: requires grad, but no derivative
    x = tensor([1.0, 3.0], requires_grad=True)
    T.floor_divide(x, 2.0).sum().backward()


@case
def grad_dtypes(T, tensor):  # 17: gradients in the input's dtype
    a = tensor([1.0, 2.0], requires_grad=True)
    b = tensor([3.0], dtype=T.float64)
    return [T.autograd.grad(T.cat([a, b]).sum(), [a])[0],
            T.autograd.grad(T.stack([a, b.expand(2)]).sum(), [a])[0],
            T.autograd.grad(a.prod(0, dtype=T.float64), [a])[0]]


@case
def any_all_uint8(T, tensor):  # 18
    u = tensor([[1, 0], [2, 3]], dtype=T.uint8)
    return [u.any(), u.all(0), u.any(1, keepdim=True), T.zeros(0, dtype=T.uint8).all(),
            T.zeros(2, 0, dtype=T.uint8, device=u.device).any(1), tensor([1, 0], dtype=T.int8).any(),
            tensor([1.0, 0.0]).all()]


@case
def split_empty_dims(T, tensor):  # 19
    z = T.zeros(4, 0, device=tensor(0).device)
    return [z.unbind(1), [t.shape for t in z.chunk(2, 1)], z.chunk(3, 0)]


@case
def square_of_bool(T, tensor):  # 20
    return [T.square(tensor([True, False])), T.square(tensor([3], dtype=T.int32)),
            T.square(tensor([2], dtype=T.uint8))]


@case
def cat_empty_promotes(T, tensor):  # 21
    dev = tensor(0).device
    return [T.cat([tensor([1.5], dtype=T.float16), T.zeros(0, dtype=T.float64, device=dev)]),
            T.cat([tensor([1, 2]), T.zeros(0, device=dev)])]


@case
def zero_dim_bool_index(T, tensor):  # 32
    t = tensor(2.5, requires_grad=True)
    out = [t[True], t[False], t[tensor(True)], t[True, None], t.masked_select(tensor(True)),
           t.masked_select(tensor(False))]
    s = tensor(2.5)
    s[True] = 3.0
    s[False] = 4.0
    t[True].sum().backward()
    return out + [s, t.grad]


@case
def int_scalars_wrap(T, tensor):  # 34: Python ints converted to the integer dtype (C casts)
    u = tensor([8, 4, 0], dtype=T.uint8)
    i8 = tensor([1, -100, 5], dtype=T.int8)
    i32 = tensor([7, -3, 0], dtype=T.int32)
    i64 = tensor([2, -8, 0])
    return [u <= -1, u > 300, u == 264, i8 < 200, i8 == -356, i32 > 2 ** 33, u + 300, u * -1,
            u - 1, i8 + 200, i8 * 1000, i32 + 2 ** 32 + 1, i64 + 2 ** 63, i64 < 2 ** 63, u % 300,
            u.eq(-1), T.clamp_max(u, -1), T.clamp(u, min=-1), T.where(u > 5, u, -1),
            u.masked_fill(u > 5, -1), u.clone().fill_(-1), T.full((2,), -1, dtype=T.uint8,
                                                                   device=u.device),
            tensor([2, -8]).addcmul_(tensor(-6), tensor(-6), value=0.5),
            T.addcmul(tensor([2, -8]), tensor(-6), tensor(-6), value=2.5),
            tensor([1, 2], dtype=T.uint8).add(1, alpha=-1), tensor([True]).add(tensor([True]), alpha=2)]


def _error_case(name, prog):
    CASES[name] = prog


def _put(x, key, value):
    x[key] = value
    return x


for _name, _prog in {  # 34, 35: inputs PyTorch rejects (each raises PyTorch's error type)
    "clamp_out_of_range": lambda T, t: T.clamp_min(t([1, 2], dtype=T.uint8), 300),
    "where_scalar_out_of_range": lambda T, t: T.where(t([True]), t([1], dtype=T.uint8), 300),
    "fill_out_of_range": lambda T, t: t([0], dtype=T.int8).fill_(-129),
    "full_out_of_range": lambda T, t: T.full((2,), 300, dtype=T.uint8, device=t(0).device),
    "alpha_out_of_range": lambda T, t: t([1], dtype=T.uint8).add(1, alpha=300),
    "where_float_condition": lambda T, t: T.where(t([1.0, 0.0]), t([1, 2]), t([3, 4])),
    "where_long_condition": lambda T, t: t([1.0, 0.0]).where(t([1, 0]), 3.0),
    "lerp_mixed_end": lambda T, t: T.lerp(t([1.0]), t([2.0], dtype=T.float64), 0.5),
    "lerp_mixed_weight": lambda T, t: T.lerp(t([1.0]), t([2.0]), t([0.5], dtype=T.float64)),
    "index_put_mixed_dtypes": lambda T, t: _put(T.zeros(3, device=t(0).device), t([0, 2]),
                                                t([1, 2])),
    "index_put_0d_mixed_dtypes": lambda T, t: _put(T.zeros(3, device=t(0).device), t([0, 2]),
                                                   t(1.0, dtype=T.float64)),
    "index_put_mask_mixed_dtypes": lambda T, t: _put(T.zeros(3, device=t(0).device),
                                                     t([True, False, True]), t([1, 2])),
    "index_put_nan_into_int": lambda T, t: _put(T.zeros(2, dtype=T.int64, device=t(0).device),
                                                t([0]), float("nan")),
    "setitem_nan_into_int": lambda T, t: _put(T.zeros(2, dtype=T.int64, device=t(0).device),
                                              0, float("nan")),
    "setitem_out_of_range": lambda T, t: _put(T.zeros(2, dtype=T.uint8, device=t(0).device),
                                              0, 300),
    "mask_fill_0d_other_dtype": lambda T, t: _put(T.zeros(3, device=t(0).device),
                                                  t([True, False, True]), t(2, dtype=T.int64)),
    "addmm_input_rank": lambda T, t: T.addmm(T.zeros(2, 1, 1, device=t(0).device),
                                             T.ones(1, 2, device=t(0).device),
                                             T.ones(2, 1, device=t(0).device)),
    "addmm_input_size": lambda T, t: T.addmm(T.zeros(3, device=t(0).device),
                                             T.ones(1, 2, device=t(0).device),
                                             T.ones(2, 1, device=t(0).device)),
    "addmm_vector_factor": lambda T, t: T.addmm(T.zeros(2, 3, device=t(0).device),
                                                T.ones(2, device=t(0).device),
                                                T.ones(2, 3, device=t(0).device)),
    "baddbmm_input_rank": lambda T, t: T.baddbmm(T.zeros(2, 2, 1, 1, device=t(0).device),
                                                 T.ones(2, 1, 2, device=t(0).device),
                                                 T.ones(2, 2, 1, device=t(0).device)),
    "float_alpha_int_tensors": lambda T, t: t([1, 2]).sub(t([1, 1]), alpha=0.5),
    "bool_alpha_float_tensors": lambda T, t: t([1.0, 2.0]).add(t([1, 1]), alpha=True),
    "addcdiv_integers": lambda T, t: T.addcdiv(t([1, 2]), t([1, 2]), t([3, 4])),
    "flipud_0d": lambda T, t: T.flipud(t(1.0)),
    "fliplr_1d": lambda T, t: T.fliplr(t([1.0])),
    "bce_weight_broadcasts_bigger": lambda T, t: T.nn.functional.binary_cross_entropy(
        t([0.5]), t([1.0]), weight=T.ones(2, 1, device=t(0).device), reduction="none"),
    "bce_logits_pos_weight_bigger": lambda T, t: T.nn.functional.binary_cross_entropy_with_logits(
        t([0.5]), t([1.0]), pos_weight=T.ones(2, 1, device=t(0).device)),
}.items():
    _error_case(_name, _prog)


@case
def remainder_signed_zero(T, tensor):  # remainder takes the divisor's sign, zeros too
    a = tensor([-6.0, 6.0, -0.0, 0.0, 6.0, -7.5])
    b = tensor([3.0, -3.0, 3.0, -3.0, 3.0, 2.5])
    return [T.remainder(a, b), T.remainder(tensor(-6.0), 3.0), tensor([-6.0]) % 3,
            T.remainder(-6.0, tensor([3.0, -3.0])), a % -3.0, T.fmod(a, b)]


@case
def misuse_item3(T, tensor):  # issue 16 item 3: cross_entropy float targets; Tensor.sort
    F = T.nn.functional
    x = tensor([[0.5, 0.2], [0.1, 0.3]])
    out = [F.cross_entropy(x, tensor([[1.0, 0.0], [0.3, 0.7]])),
           tensor([3.0, 1.0, 2.0]).sort(), tensor([[3, 1], [0, 2]]).sort(0, descending=True),
           T.sort(tensor([3.0, 1.0, 2.0]), dim=-1, descending=True, stable=True)]
    return [o if not isinstance(o, tuple) else (o[0], o[1]) for o in out]


for _name, _prog in {
    "cross_entropy_float_target_shape": lambda T, t: T.nn.functional.cross_entropy(
        t([[0.5, 0.2]]), t([[1.0, 0.0, 0.0]])),
    "cross_entropy_float_target_1d": lambda T, t: T.nn.functional.cross_entropy(
        t([[0.5, 0.2], [0.1, 0.3]]), t([1.0, 0.0])),
}.items():
    _error_case(_name, _prog)


@case
def half_computed_in_float32(T, tensor):  # 12: float16 ops in float32, rounded once
    F = T.nn.functional
    vals = [0.3, -1.7, 2.2, 0.01, 5.5, -0.77, 3.3, -2.9]
    w = tensor([0.5, 0.75, 1.25, 1.5, 1.0, 2.0, 0.25, 1.75], dtype=T.float16)
    out = []
    for f in (F.gelu, lambda x: F.gelu(x, approximate="tanh"), F.silu, F.elu, T.tanh,
              lambda x: T.softmax(x, 0), lambda x: x.cumsum(0)):
        x = tensor(vals, dtype=T.float16, requires_grad=True)
        y = f(x)
        (y * w).sum().backward()
        out += [y, x.grad]
    h = tensor(vals, dtype=T.float16)
    return out + [T.logsumexp(h, 0), h.sigmoid(), T.erf(h), h.cumprod(0), h.log2(), h.exp2(),
                  h.tan(), h.var(), h.std(), h.mean()]


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
