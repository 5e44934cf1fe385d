"""Regression cases for divergences of the core tensor ops that the differential suite found
and that were fixed (issue 16): each compares plugrad with torch directly, on every built-in
device. (``test_fixed.py`` holds the earlier ones.)"""
from __future__ import annotations

import math

import numpy as np
import pytest

import plugrad
import plugrad.nn.functional as F

torch = pytest.importorskip("torch", reason="these cases compare with PyTorch, which is "
                            "not installed")
from .pairs import host  # noqa: E402


_SOFTMAXES = {
    "softmax": lambda lib, x, d, **kw: lib.softmax(x, d, **kw),
    "log_softmax": lambda lib, x, d, **kw: lib.log_softmax(x, d, **kw),
    "Tensor.softmax": lambda lib, x, d, **kw: x.softmax(d, **kw),
    "F.softmax": lambda lib, x, d, **kw: (F if lib is plugrad else
                                          torch.nn.functional).softmax(x, d, **kw),
    "F.log_softmax": lambda lib, x, d, **kw: (F if lib is plugrad else
                                              torch.nn.functional).log_softmax(x, d, **kw),
}


@pytest.mark.parametrize("name", sorted(_SOFTMAXES))
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64"])
def test_softmax_of_integers_is_not_implemented(device, name, dtype):
    """PyTorch has no integer softmax kernel (NotImplementedError naming the dtype);
    plugrad promoted to float. An empty input runs no kernel and keeps its dtype, and
    ``dtype=`` converts first, so both still work."""
    fn = _SOFTMAXES[name]
    values = [[1, 0, 1], [0, 1, 1]]
    for d in (0, 1):
        with pytest.raises(NotImplementedError):
            fn(torch, torch.tensor(values, dtype=getattr(torch, dtype)), d)
        with pytest.raises(NotImplementedError, match=r"softmax.*not implemented for"):
            fn(plugrad, plugrad.tensor(values, dtype=getattr(plugrad, dtype), device=device), d)
    empty = fn(plugrad, plugrad.zeros(0, 3, dtype=getattr(plugrad, dtype), device=device), 1)
    want = fn(torch, torch.zeros(0, 3, dtype=getattr(torch, dtype)), 1)
    assert empty.dtype.name == str(want.dtype).split(".")[1] and tuple(empty.shape) == (0, 3)
    got = fn(plugrad, plugrad.tensor(values, dtype=getattr(plugrad, dtype), device=device), 1,
             dtype=plugrad.float64)
    want = fn(torch, torch.tensor(values, dtype=getattr(torch, dtype)), 1, dtype=torch.float64)
    np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-12)


_FLIPS = {
    "fn int": lambda lib, x: lib.flip(x, 0), "fn float": lambda lib, x: lib.flip(x, (0.0,)),
    "fn dims=int": lambda lib, x: lib.flip(x, dims=1), "fn none": lambda lib, x: lib.flip(x),
    "fn twice": lambda lib, x: lib.flip(x, (0, -2)), "method none": lambda lib, x: x.flip(),
    "fn tuple": lambda lib, x: lib.flip(x, (0, 1)), "fn list": lambda lib, x: lib.flip(x, [1]),
    "fn empty": lambda lib, x: lib.flip(x, ()), "method ints": lambda lib, x: x.flip(1, 0),
    "method int": lambda lib, x: x.flip(-1), "method tuple": lambda lib, x: x.flip((0,)),
    "method dims=": lambda lib, x: x.flip(dims=[1]),
}


@pytest.mark.parametrize("name", sorted(_FLIPS))
def test_flip_dims_as_in_pytorch(device, name):
    """``torch.flip(x, 0)`` is a TypeError (``dims`` is a tuple of ints; only the method
    takes ints as varargs) and a repeated dim a RuntimeError; plugrad accepted both."""
    values = [[1, 2, 3], [4, 5, 6]]
    try:
        want = _FLIPS[name](torch, torch.tensor(values)).tolist()
    except (TypeError, RuntimeError) as exc:
        with pytest.raises(type(exc), match="dims"):
            _FLIPS[name](plugrad, plugrad.tensor(values, device=device))
    else:
        assert _FLIPS[name](plugrad, plugrad.tensor(values, device=device)).tolist() == want


_TENSOR_ONLY = ("atan2", "arctan2", "hypot", "logaddexp", "logaddexp2", "logical_and",
                "logical_or", "logical_xor", "fmax", "fmin", "heaviside", "ldexp", "nextafter")


@pytest.mark.parametrize("name", _TENSOR_ONLY)
@pytest.mark.parametrize("form", ["fn", "fn reflected", "method", "inplace"])
def test_tensor_only_binary_ops_refuse_python_numbers(device, name, form):
    """These take ``(Tensor input, Tensor other)`` in PyTorch: a Python number is a
    TypeError in every form (plugrad took it as a weak scalar, or failed with an
    AttributeError); a 0-d tensor works."""
    def run(lib, x, other):
        if form == "fn":
            return getattr(lib, name)(x, other)
        if form == "fn reflected":
            return getattr(lib, name)(other, x)
        if form == "method":
            return getattr(x, name)(other)
        return getattr(x.clone(), name + "_")(other)
    if form == "inplace" and not hasattr(torch.Tensor, name + "_"):
        pytest.skip(f"torch has no Tensor.{name}_ (not a missing resource: no such form)")
    values = [0.5, -1.0, 2.0]
    for other in (2, 1.5, True):
        with pytest.raises(TypeError):
            run(torch, torch.tensor(values), other)
        with pytest.raises(TypeError, match=r"must be Tensor, not"):
            run(plugrad, plugrad.tensor(values, device=device), other)
    got = run(plugrad, plugrad.tensor(values, device=device), plugrad.tensor(1.5, device=device))
    want = run(torch, torch.tensor(values), torch.tensor(1.5))
    np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-6)


def test_hypot_gradient_is_grad_times_input_over_result(device):
    """PyTorch's rule multiplies first: ``grad * x`` overflows to inf at x near the
    float64 maximum (plugrad divided first and gave a finite value)."""
    grads = []
    for lib in (torch, plugrad):
        kw = {"device": device} if lib is plugrad else {}
        a = lib.tensor([1.7976931348623157e308, 3.0], dtype=lib.float64, requires_grad=True,
                       **kw)
        b = lib.tensor([-1.0, 4.0], dtype=lib.float64, requires_grad=True, **kw)
        y = lib.hypot(a, b)
        w = lib.tensor([1.5, -2.0], dtype=lib.float64, **kw)
        grads.append([host(g) for g in lib.autograd.grad((y * w).sum(), [a, b])])
    for want, got in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64"])
def test_float_power_inplace_needs_a_float64_tensor(device, dtype):
    """``float_power_`` keeps its float64 result only in a float64 tensor: PyTorch raises
    for any other (plugrad cast the result back, as the other in-place ops do)."""
    values = [1.0, 2.0, 3.0]
    for exponent in (2, 0.5):
        t = torch.tensor(values, dtype=getattr(torch, dtype))
        p = plugrad.tensor(values, dtype=getattr(plugrad, dtype), device=device)
        if dtype != "float64":
            with pytest.raises(RuntimeError):
                t.float_power_(exponent)
            with pytest.raises(RuntimeError, match="float_power_.*requires dtype Double"):
                p.float_power_(exponent)
            continue
        assert p.float_power_(exponent) is p
        np.testing.assert_allclose(host(p), t.float_power_(exponent).numpy(), rtol=1e-15)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_pow_with_negative_tensor_exponents(device, dtype):
    """PyTorch refuses only a negative Python-number exponent of an integer tensor; with a
    tensor exponent it computes (1 for base 1, ±1 for base -1, else 0): plugrad raised."""
    base = [[1], [-1], [2], [0], [-3]]
    exps = [-1, -2, -3, 0, 2]
    cases = [
        lambda lib, a, b: lib.pow(a, b), lambda lib, a, b: lib.pow(a, b[2]),
        lambda lib, a, b: lib.pow(2, b), lambda lib, a, b: lib.pow(-1, b),
        lambda lib, a, b: a[0] ** b, lambda lib, a, b: a.clone().pow_(b[:1]),
    ]
    for case in cases:
        want = case(torch, torch.tensor(base, dtype=getattr(torch, dtype)),
                    torch.tensor(exps, dtype=getattr(torch, dtype)))
        got = case(plugrad, plugrad.tensor(base, dtype=getattr(plugrad, dtype), device=device),
                   plugrad.tensor(exps, dtype=getattr(plugrad, dtype), device=device))
        assert got.dtype.name == dtype and got.tolist() == want.tolist()
    with pytest.raises(RuntimeError):
        torch.pow(torch.tensor(base), -1)
    with pytest.raises(RuntimeError, match="negative integer powers"):
        plugrad.pow(plugrad.tensor(base, device=device), -1)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_hardsigmoid_at_infinities_and_nan(device, dtype):
    """±inf gave NaN (``inside * 0``); NaN's gradient passed ``g / 6`` (PyTorch's is 0,
    its value NaN)."""
    values = [math.nan, math.inf, -math.inf, 3.0, -3.0, 1e4, -1e4, 0.5, -0.0]
    outs = []
    for lib in (torch, plugrad):
        kw = {"device": device} if lib is plugrad else {}
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True, **kw)
        y = (F if lib is plugrad else torch.nn.functional).hardsigmoid(x)
        outs.append((host(y), host(lib.autograd.grad(y.sum(), x)[0])))
    for want, got in zip(*outs):
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64"])
def test_softsign_of_integers_wraps_as_in_pytorch(device, dtype):
    """``x / (|x| + 1)`` with an integer 1: int32's ``|-2**31| + 1`` and uint8's
    ``255 + 1`` wrap before the division (plugrad added 1.0 in float)."""
    info = np.iinfo(dtype)
    values = [int(info.max), int(info.min), 5, 0, int(info.max) - 1]
    want = torch.nn.functional.softsign(torch.tensor(values, dtype=getattr(torch, dtype)))
    got = F.softsign(plugrad.tensor(values, dtype=getattr(plugrad, dtype), device=device))
    assert got.dtype.name == str(want.dtype).split(".")[1]
    np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-6)


_PRODS = {
    "prod": lambda x: x.prod(), "prod dim": lambda x: x.prod(1),
    "prod keepdim": lambda x: x.prod(0, keepdim=True), "cumprod": lambda x: x.cumprod(1),
    "cumprod 1-d": lambda x: x[0].cumprod(0), "prod two zeros": lambda x: x[1:3].prod(),
}


@pytest.mark.parametrize("name", sorted(_PRODS))
@pytest.mark.parametrize("zeros", [False, True])
def test_prod_and_cumprod_gradients_follow_pytorch_rules(device, name, zeros):
    """PyTorch divides when no element is 0 (``g * result / x``; cumprod's reversed
    cumulative sum of ``result * g`` over ``x``): at huge values that is inf or NaN where
    the product of the other elements was finite. With zeros, the products of the others
    (and 0 for a full product with two zeros and no graph)."""
    values = [[1.5, -2.0, 0.5], [3.0, 1e300, 4.0], [1e10, 1e300, 2.0], [-1e-300, 7.0, 0.25]]
    if zeros:
        values[1][0] = values[2][1] = values[2][2] = 0.0
    got = []
    for lib in (torch, plugrad):
        kw = {"device": device} if lib is plugrad else {}
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True, **kw)
        y = _PRODS[name](x)
        w = lib.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)).tolist(),
                       dtype=lib.float64, **kw)
        g, = lib.autograd.grad((y * w).sum(), x)
        got.append(host(g))
        if not zeros:  # (with zeros and overflow, second orders differ by product order)
            g, = lib.autograd.grad((_PRODS[name](x) * w).sum(), x, create_graph=True)
            got.append(host(lib.autograd.grad((g * g).sum(), x)[0]))
    half = len(got) // 2
    for want, have in zip(got[:half], got[half:]):
        np.testing.assert_allclose(have, want, rtol=1e-9, equal_nan=True)


_WELFORD_CASES = {
    "inf then finite": [[0.5, math.inf, 1.5, 2.0]],
    "inf last": [[0.5, 1.5, 2.0, math.inf]],
    "huge both signs": [[0.0, 1.7976931348623157e308, -0.37, 0.56, -1.7976931348623157e308]],
    "huge rows": [[-1.7976931348623157e308, 8.98e307], [4.49e307, -1.7976931348623157e308],
                  [-1.28, -math.inf], [math.inf, -math.inf]],
    "plain": [[0.5, -1.5, 2.25], [3.0, 1.0, -4.0]],
}


@pytest.mark.parametrize("name", sorted(_WELFORD_CASES))
@pytest.mark.parametrize("op", ["var_mean", "std_mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_var_mean_is_one_welford_reduction(device, name, op, dtype):
    """PyTorch's var_mean / std_mean run one Welford pass: at inf or overflowing inputs
    its mean is Welford's (NaN after an inf, finite where the sum overflows) and so is
    the variance; plugrad took var and mean from separate sums."""
    values = _WELFORD_CASES[name]
    if dtype == "float32" and name.startswith("huge"):
        values = np.where(np.isfinite(values), np.asarray(values) / 1e300, values).tolist()
    for dim in (None, -1):
        want = getattr(torch, op)(torch.tensor(values, dtype=getattr(torch, dtype)), dim)
        got = getattr(plugrad, op)(plugrad.tensor(values, dtype=getattr(plugrad, dtype),
                                                  device=device), dim)
        for a, b in zip(want, got):
            np.testing.assert_allclose(host(b), a.numpy(), rtol=1e-6, equal_nan=True)


_BOOL_CLAMPS = {
    "tensor bounds": lambda lib, b, t: lib.clamp(b, t, t), "scalar bounds":
    lambda lib, b, t: lib.clamp(b, False, True), "in place": lambda lib, b, t: b.clamp_(t, t),
    "min only": lambda lib, b, t: lib.clamp(b, t), "max only": lambda lib, b, t: b.clamp(None, t),
    "int bounds": lambda lib, b, t: lib.clamp(b, 0, 1), "clip scalar": lambda lib, b, t:
    lib.clip(b, False, True),
}


@pytest.mark.parametrize("name", sorted(_BOOL_CLAMPS))
def test_bool_clamp_takes_one_bool_bound(device, name):
    """PyTorch has no bool kernel for a clamp by both bounds ("clamp_cpu" /
    "clamp_scalar_cpu" not implemented for 'Bool'); one bound, or integer bounds (which
    promote), work."""
    values, bound = [True, False, True], [False, True, True]
    run = _BOOL_CLAMPS[name]
    try:
        want = run(torch, torch.tensor(values), torch.tensor(bound))
    except NotImplementedError:
        with pytest.raises(NotImplementedError, match="clamp.*Bool"):
            run(plugrad, plugrad.tensor(values, device=device),
                plugrad.tensor(bound, device=device))
    else:
        got = run(plugrad, plugrad.tensor(values, device=device),
                  plugrad.tensor(bound, device=device))
        assert got.dtype.name == str(want.dtype).split(".")[1] and got.tolist() == want.tolist()


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_isclose_of_integers_compares_in_the_default_float_dtype(device, dtype):
    """PyTorch casts integer operands to the default dtype for the errors: no wraparound
    of ``a - b`` at the extremes (plugrad's int64 ``|0 - (-2**63)|`` was negative, so
    close), and ``2**24 + 1`` is within 0.5 of ``2**24`` (float32)."""
    info = np.iinfo(dtype)
    a = [0, -1, 5, 2 ** 24 + 1, 100, int(info.max)]
    b = [int(info.min), int(info.min), int(info.min), 2 ** 24, 101, int(info.max) - 1]
    for kw in ({}, {"rtol": 0.0, "atol": 0.5}, {"rtol": 0.01, "atol": 1.0}):
        want = torch.isclose(torch.tensor(a, dtype=getattr(torch, dtype)),
                             torch.tensor(b, dtype=getattr(torch, dtype)), **kw)
        got = plugrad.isclose(plugrad.tensor(a, dtype=getattr(plugrad, dtype), device=device),
                              plugrad.tensor(b, dtype=getattr(plugrad, dtype), device=device),
                              **kw)
        assert got.tolist() == want.tolist(), kw


def test_addcmul_gradients_are_taken_at_the_result_shape(device):
    """PyTorch's rule multiplies ``g`` by the other factor before summing over broadcast
    dims: an empty ``x`` broadcasting the product away gives 0, where summing first and
    multiplying by an infinite factor gave NaN."""
    grads = []
    for lib in (torch, plugrad):
        kw = {"device": device} if lib is plugrad else {}
        x = lib.zeros(0, 1, dtype=lib.float64, requires_grad=True, **kw)
        t1 = lib.tensor([4.5e307, 1.8e308, math.inf], dtype=lib.float64, requires_grad=True,
                        **kw)
        t2 = lib.tensor([0.98, -1.14, -0.3], dtype=lib.float64, requires_grad=True, **kw)
        y = lib.addcmul(x, t1, t2, value=0.5)
        grads.append([host(g) for g in lib.autograd.grad(y.sum(), [x, t1, t2])])
    for want, got in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": 0, "keepdim": True}])
def test_two_norm_second_derivative_is_that_of_pytorch_rule(device, kw):
    """The 2-norm's gradient is PyTorch's ``g * (x / y)`` (0 where ``y == 0``), so its
    second derivative meets no ``x * x``: 0 at an overflowing norm, where the composed
    ``sqrt(sum(x * x))`` gave NaN; NaN at an all-zero slice as PyTorch's."""
    for values in ([[1.28, 1.02, 1.34], [1.7976931348623157e308, 4.49e307, 1.65]],
                   [[0.0, 0.0, 0.0], [1.0, 2.0, -3.0]], [[0.5, -2.0, 3.0], [1.0, 2.0, -3.0]]):
        out = []
        for lib in (torch, plugrad):
            dev = {"device": device} if lib is plugrad else {}
            x = lib.tensor(values, dtype=lib.float64, requires_grad=True, **dev)
            y = lib.norm(x, **kw)
            g, = lib.autograd.grad((y * 1.3).sum(), x, create_graph=True)
            g2, = lib.autograd.grad((g * g).sum(), x)
            out.append((host(y), host(g), host(g2)))
        for want, got in zip(*out):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15, equal_nan=True)


def _same_bits(got, want):
    """Equal values, NaN where NaN and zeros' signs alike (a NaN's sign bit aside)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got) & (got == 0), np.signbit(want) & (want == 0))


_LDEXP_X = [1.5, -2.0, 3.0, 5.0, 1e-30, 0.75, 2.0 ** 100, -0.0, math.inf, math.nan, 1.5]
_LDEXP_E = [-1, 200, -2 ** 63, 2 ** 32 + 3, 40, -1074, -1100, 31, 63, 64, -1075]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("edtype", ["int64", "int32", "int16", "float32"])
@pytest.mark.parametrize("form", ["fn", "inplace"])
def test_ldexp_as_pytorch_computes_it(device, dtype, edtype, form):
    """A floating input with an integer exponent: C's ``ldexp`` with the exponent narrowed
    to a C int (``-2**63`` leaves x as it is, ``2**32 + 3`` is 3), rounded once, and the
    gradient ``g * pow(2, e)`` in e's integer dtype (0 for e < 0, wrapping at 63 in int64,
    31 in int32); a float exponent: ``x * pow(2.0, e)`` with the power in e's dtype."""
    out = []
    for lib in (torch, plugrad):
        dev = {"device": device} if lib is plugrad else {}
        x = lib.tensor(_LDEXP_X, dtype=getattr(lib, dtype), requires_grad=True, **dev)
        e = lib.tensor(_LDEXP_E, dtype=lib.int64, **dev)
        e = e.clamp(-2 ** 15, 2 ** 15 - 1).to(lib.int16) if edtype == "int16" else \
            e.to(getattr(lib, edtype))
        y = lib.ldexp(x, e) if form == "fn" else (x * 1).ldexp_(e)
        g = lib.tensor([0.5 - 0.25 * i for i in range(len(_LDEXP_X))],
                       dtype=getattr(lib, dtype), **dev)
        gx, = lib.autograd.grad(y, x, g)
        out.append((host(y), host(gx)))
    for want, got in zip(*out):
        _same_bits(got, want)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_frexp_gradient_divides_by_a_float32_power(device, dtype):
    """The mantissa's gradient is ``g / exponent.exp2()`` with exp2 of the int32 exponent
    in float32: 0 above 2**127, inf below 2**-149 (plugrad took the power in the input's
    dtype)."""
    tiny = {"float64": [1e-300, 1e300, 1e-310], "float32": [1e-40, 1e30, 1e-44],
            "float16": [1e-7, 6e4, 3e-5]}[dtype]
    values = [1.5, -2.0, 3.0, 0.0, -math.inf] + tiny
    out = []
    for lib in (torch, plugrad):
        dev = {"device": device} if lib is plugrad else {}
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True, **dev)
        m, e = lib.frexp(x)
        g = lib.tensor([0.3 - 0.25 * i for i in range(len(values))],
                       dtype=getattr(lib, dtype), **dev)
        gx, = lib.autograd.grad(m, x, g)
        out.append((host(m), host(e), host(gx)))
    for want, got in zip(*out):
        _same_bits(got, want)


_BIG = 1.7976931348623157e308


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fn", ["linalg.cross", "cross", "Tensor.cross"])
def test_cross_takes_the_fused_kernels_form(device, dtype, fn):
    """PyTorch's compiled kernel computes each component as ``fma(x, y, -(u*v))``:
    ``2.25e308 - 1.25e308`` is ``1e308`` and ``x*y - inf`` is ``-inf`` even where ``x*y``
    overflows (plugrad: inf and NaN); its gradients are cross products of the same form,
    the double backward too."""
    scale = 1.0 if dtype == "float64" else 1.8e38 / _BIG
    a = [[0.0, 1.5e308, 1e308], [_BIG, 4.49e307, 8.98e307], [1.0, 2.0, 3.0]]
    b = [[0.0, 1.25, 1.5], [-0.67, _BIG, 1.3], [0.5, -1.0, 4.0]]
    a = [[v * scale for v in row] for row in a]
    call = {"linalg.cross": lambda lib, x, y: lib.linalg.cross(x, y),
            "cross": lambda lib, x, y: lib.cross(x, y, dim=1),
            "Tensor.cross": lambda lib, x, y: x.cross(y, 1)}[fn]
    out = []
    for lib in (torch, plugrad):
        dev = {"device": device} if lib is plugrad else {}
        x = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True, **dev)
        y = lib.tensor(b, dtype=getattr(lib, dtype), requires_grad=True, **dev)
        r = call(lib, x, y)
        w = lib.tensor([[0.5, -1.0, 1.25]] * 3, dtype=getattr(lib, dtype), **dev)
        gx, gy = lib.autograd.grad((r * w).sum(), [x, y], create_graph=True)
        gg = lib.autograd.grad((gx * w).sum() + (gy * w * 0.5).sum(), [x, y])
        out.append([host(t) for t in (r, gx, gy, *gg)])
    for want, got in zip(*out):
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


def test_copysign_double_backward_is_that_of_pytorch_rule(device):
    """PyTorch's rule divides first and masks after (``where(a == 0, 0, y / a)``), so the
    second derivative is NaN at a zero or subnormal ``a`` (plugrad's guarded division gave
    0 and inf); ``other``'s gradient is ``zeros_like(other)``, whatever ``g`` is."""
    values = [-0.0, 0.0, 5e-324, -1e-310, 1.5, -2.0]
    out = []
    for lib in (torch, plugrad):
        dev = {"device": device} if lib is plugrad else {}
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True, **dev)
        o = lib.tensor([-0.65], dtype=lib.float64, requires_grad=True, **dev)
        gx, go = lib.autograd.grad((lib.copysign(x, o) * 0.7).sum(), [x, o], create_graph=True)
        out.append([host(gx), host(go)] + [host(t) for t in lib.autograd.grad(gx.sum(), [x, o])])
    for want, got in zip(*out):
        _same_bits(got, want)


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")  # (torch's own notice)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("fn", ["scatter_reduce", "index_reduce"])
def test_prod_reduction_gradients_are_pytorch_rule(device, include_self, fn):
    """``reduce='prod'`` gradients are PyTorch's rule: the result over each factor (``(g *
    result) / src``: 1.0 at a subnormal lone factor, inf where the product overflowed), a
    lone zero getting the product of the others; plugrad differentiated its product scan
    (exact values there, NaN from ``0 * inf``). The double backward is the rule's own."""
    xs = [[1.5, 0.0, -2.0], [0.5, 3.0, 0.0]]
    srcs = [[0.5, 2.0, 0.0, 1.5], [-1.0, 0.25, 5e-324, 1.7e308]]
    out = []
    for lib in (torch, plugrad):
        dev = {"device": device} if lib is plugrad else {}
        x = lib.tensor(xs, dtype=lib.float64, requires_grad=True, **dev)
        if fn == "scatter_reduce":
            src = lib.tensor(srcs, dtype=lib.float64, requires_grad=True, **dev)
            idx = lib.tensor([[0, 1, 2, 2], [0, 0, 1, 2]], **dev)
            y = x.scatter_reduce(1, idx, src, "prod", include_self=include_self)
        else:
            src = lib.tensor([row[:3] for row in srcs] + [[4.0, 1e308, -0.5]],
                             dtype=lib.float64, requires_grad=True, **dev)
            y = x.index_reduce(0, lib.tensor([1, 0, 1], **dev), src, "prod",
                               include_self=include_self)
        w = lib.tensor([[0.7, -1.1, 0.9], [1.2, 0.4, -0.6]], dtype=lib.float64, **dev)
        gx, gs = lib.autograd.grad((y * w).sum(), [x, src], create_graph=True)
        hx, hs = lib.autograd.grad((gx * 1.3).sum() + (gs * 0.6).sum(), [x, src])
        out.append([host(t) for t in (y, gx, gs, hx, hs)])
    for want, got in zip(*out):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("scales", [{}, {"beta": 0.5, "alpha": 2.0}, {"beta": 0.0, "alpha": 0.5}])
def test_addr_scales_as_pytorch_kernel_and_rules(device, scales):
    """``addr`` is ``beta * input + (alpha * vec1) * vec2`` and its gradients PyTorch's
    rules, ``(g @ vec2) * alpha`` and ``(g^T @ vec1) * alpha`` (alpha last): plugrad
    scaled ``g`` first, which overflowed to -inf where PyTorch's is -1.27e308."""
    out = []
    for lib in (torch, plugrad):
        dev = {"device": device} if lib is plugrad else {}
        x = lib.tensor([1.0, 4.49e307, -2.0], dtype=lib.float64, requires_grad=True, **dev)
        v1 = lib.tensor([_BIG, 4.49e307], dtype=lib.float64, requires_grad=True, **dev)
        v2 = lib.tensor([-0.9, 0.5, -1.06], dtype=lib.float64, requires_grad=True, **dev)
        y = x.addr(v1, v2, **scales)
        w = lib.tensor([[-0.6, 1.2, 0.7], [1.0, -0.8, 1.4]], dtype=lib.float64, **dev)
        out.append([host(y)] + [host(t) for t in lib.autograd.grad((y * w).sum(), [x, v1, v2])])
    for want, got in zip(*out):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
